"""`model_gbs` and `model_bound` for every benchmark the model has a shape for: the lowest of
the bounds of `model_bounds`, from parameters measured by the same run (`model_params`) with
the benchmark's own family left out, so no prediction uses a number its family measured.

Benchmarks whose numbers *are* the parameters (`ref/`, the chases, the cache sweep, the block
starts) and paths the model has no shape for yet get no prediction (NaN, bound empty): the
model's section of summary.md and report.md counts them apart (docs/model.md).
"""

import pandas as pd

from gmbtools.analysis import (model_bounds, model_bulk, model_chases, model_launches,
                               model_links, model_local, model_managed, model_onchip, model_params,
                               model_peer, model_shapes)

OUT_COLUMNS = ("model_gbs", "model_bound", "model_link_bytes")


def predictions(medians: pd.DataFrame) -> pd.DataFrame:
    """One row per row of `medians` (frame.medians_frame): model_gbs (GB/s of bytes read +
    written, NaN where there is no prediction), model_bound (the bound that wins, or "") and,
    for the peer family, model_link_bytes (wire bytes per useful byte, model_peer)."""
    out = pd.DataFrame({"model_gbs": float("nan"), "model_bound": "",
                        "model_link_bytes": float("nan")}, index=medians.index)
    if medians.empty or "file" not in medians.columns:
        return out
    for _, rows in medians.groupby("file", sort=False):
        whole = model_params.params_from(rows)
        link_ns = model_peer.link_latency_ns(rows)  # the link's own round trip (docs/peer.md)
        feeds = {source.split("/", 1)[0] for source in whole.sources.values()}
        for family, members in rows.groupby("family", sort=False):
            # a family no parameter came from leaves them as they are
            params = model_params.params_from(rows, without=family) if family in feeds else whole
            for index, row in members.iterrows():
                if isinstance(row.get("error"), str) and row["error"] not in ("None", "nan", ""):
                    continue
                gbs, bound = predict_row(params, row, link_ns)
                if family == "peer":
                    wire = model_peer.link_bytes(row)
                    out.at[index, "model_link_bytes"] = float("nan") if wire is None else wire
                if gbs is not None:
                    out.at[index, "model_gbs"] = gbs
                    out.at[index, "model_bound"] = bound
    return out


def predict_row(params: model_params.Params, row,
                link_ns: float | None = None) -> tuple[float | None, str | None]:
    """(GB/s, bound) of one medians row from `params` (and for the peer family the link's round
    trip, `link_ns`), or (None, None) without a model."""
    family = row["family"]
    if family in model_chases.CHASE_FAMILIES:
        gbs = model_chases.predict(params.chases, row, params.l1_bytes, params.l2_bytes)
        return gbs, model_bounds.LATENCY
    if family == "cache":
        streams = params.streams.rate("read") if params.streams is not None else None
        dram = streams or params.read_gbs
        gbs = model_onchip.hot_read(params.onchip, row, params.l1_bytes, params.l2_bytes,
                                    params.cc, dram)
        return gbs, model_bounds.CACHE
    if family == "constant":
        return model_onchip.constant_load(params.onchip, row), model_bounds.CACHE
    if family == "inflight" and row["variant"] == "blocks":
        gbs = model_launches.blocks_gbs(params.block_rate, params.block_slot_ns, params.sms, row)
        return gbs, model_bounds.BLOCKS
    if family == "bulk" and row["variant"] == "latency":
        gbs = model_bulk.latency_gbs(params.bulk_latency, row)
        return (gbs, model_bounds.LATENCY) if gbs else (None, None)
    if family == "host":
        gbs = model_links.host_gbs(params, row)
        return (gbs, model_links.LINK) if gbs else (None, None)
    if family == "peer":
        gbs = model_peer.peer_gbs(params, row, link_ns)
        return (gbs, model_peer.PEER) if gbs else (None, None)
    if family == "local":  # its own instructions and local stores (model_local)
        return model_local.local_gbs(params, row, model_bounds.bounds) or (None, None)
    if model_managed.migrates(row):  # the link's migrations, never device memory's rate
        return model_managed.managed_gbs(params.migrations, row) or (None, None)
    shape = model_shapes.shape_of(row)
    return (None, None) if shape is None else model_bounds.predict(params, shape)
