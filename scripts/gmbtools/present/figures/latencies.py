"""Latency and what it costs bandwidth: `latency` draws the pointer chase's ns per load against
the working set and the TLB chase's against the span its pages cover; `inflight` draws the
loaded latency against the bandwidth other SMs stream, and bandwidth against the bytes each SM
keeps in flight beside the Little's-law model of each point."""

import matplotlib
import numpy as np
import pandas as pd

from gmbtools.analysis import littles_law
from gmbtools.present.figures.common import SPREAD
from gmbtools.present.plotkit import (GBS_LABEL, Drawn, Skip, bytes_text, family_rows, flavors_of,
                                      footnote, gbs_axis, line_style, log2_axis, new_figure,
                                      peak_gbs, set_title, spread_note)


def latency(medians: pd.DataFrame) -> Drawn:
    """Left: the pointer chase's ns per load against the working set, one line per flavor and
    lane count, with the L1 and L2 sizes marked. Right: the tlb chase's ns per load against
    the span, one line per page step (the first flavor)."""
    chase = medians.loc[(medians["family"] == "latency") & (medians["variant"] == "chase")]
    tlb = medians.loc[medians["family"] == "tlb"]
    if "latency_ns" not in medians.columns or (chase.empty and tlb.empty):
        raise Skip("no latency/chase/* or tlb/* benchmark in this run")
    figure, axes = new_figure(1, 2, (6.6, 5.0), sharey=False)
    left, right = axes[0, 0], axes[0, 1]
    shown = []
    if not chase.empty and {"ws", "lanes"} <= set(chase.columns):
        for fl in flavors_of(chase):
            for lanes, style in ((1, "-"), (32, "--")):
                series = chase.loc[(chase["flavor"] == fl) & (chase["lanes"] == lanes)]
                series = series.dropna(subset=["latency_ns"]).sort_values("ws")
                if series.empty:
                    continue
                left.plot(series["ws"], series["latency_ns"], linestyle=style,
                          label=f"{fl}, {lanes} lane{'s' if lanes > 1 else ''}",
                          **_line_only(fl))
                shown.append(series[["flavor", "name", "ws", "lanes", "latency_ns"]])
        for key, name, style in (("gpu_l1_shared_per_sm_bytes", "L1 + shared per SM", "--"),
                                 ("gpu_l2_bytes", "L2", "-.")):
            size = medians[key].dropna() if key in medians.columns else pd.Series([])
            if not size.empty and float(size.iloc[0]) > 0:
                left.axvline(float(size.iloc[0]), color="black", linestyle=style, linewidth=1,
                             label=f"{name}: {bytes_text(float(size.iloc[0]))}")
        log2_axis(left, chase["ws"], in_bytes=True)
        left.legend(fontsize=7, loc="upper left")
    left.set_xlabel("working set (bytes, log scale)")
    left.set_ylabel("ns per dependent load (latency_ns)")
    left.set_ylim(bottom=0)
    left.grid(True, alpha=0.3)
    if not tlb.empty and {"step", "span"} <= set(tlb.columns):
        fl = flavors_of(tlb)[0]
        for step in sorted(tlb["step"].dropna().unique()):
            series = tlb.loc[(tlb["flavor"] == fl) & (tlb["step"] == step)]
            series = series.dropna(subset=["latency_ns"]).sort_values("span")
            right.plot(series["span"], series["latency_ns"], marker="o", markersize=4,
                       label=f"one line per {bytes_text(float(step))}")
            shown.append(series[["flavor", "name", "step", "span", "latency_ns"]])
        log2_axis(right, tlb["span"], in_bytes=True)
        right.set_ylim(0, float(tlb["latency_ns"].max()) * 1.25)
        right.legend(fontsize=8, loc="lower right")
        right.set_xlabel(f"span the chase's pages cover (bytes, log scale) · flavor {fl}")
    else:
        right.text(0.5, 0.5, "no tlb/* in this run", ha="center", transform=right.transAxes)
    right.set_ylabel("ns per dependent load, an L2 hit (latency_ns)")
    right.grid(True, alpha=0.3)
    set_title(figure, medians, "Load latency: pointer chases per level and across pages")
    footnote(figure, "Left: latency/chase/ws:B/lanes:L, each line of the chain holding the next"
             " line's address in a pseudo-random cycle; 32 lanes chase 32 chains at once."
             " Right: tlb/chase/step:S/span:X, one line per S bytes over X bytes, loaded past"
             " the L1 from the L2: what grows with the span is address translation."
             " Values: medians (in-kernel clocks).")
    return Drawn(figure, pd.concat(shown, ignore_index=True) if shown else pd.DataFrame(), (
        "Load latency from the L1, the L2 and DRAM (left; the non-caching build has no L1"
        " step), and what address translation adds as a chase's pages spread over more"
        " memory (right)."))


def _points(medians: pd.DataFrame, flavor: str, family: str, variants) -> pd.DataFrame:
    """The medians of `family`'s `variants` in `flavor` that have bytes in flight and GB/s."""
    return medians.loc[(medians["family"] == family) & medians["variant"].isin(variants)
                       & (medians["flavor"] == flavor)
                       & medians["bytes_in_flight_per_sm"].notna() & medians["gbs"].notna()]


def _one_checking_warp(bulk: pd.DataFrame) -> pd.Series:
    """Bulk reads whose one warp both issues and checks (warps:1), drawn hollow: the check,
    not the copies, holds them back (docs/bulk.md)."""
    if "warps" not in bulk.columns:
        return pd.Series(False, index=bulk.index)
    return (bulk["variant"] == "read") & (pd.to_numeric(bulk["warps"], errors="coerce") == 1)


def inflight(medians: pd.DataFrame) -> Drawn:
    """Left: the loaded latency (the chase's latency against the bandwidth other SMs stream,
    reads and copies), a line per flavor. Right, for one flavor (default first): inflight read
    and copy bandwidth against the bytes each SM keeps in flight, persistent grids filled and
    one block per tile hollow, the model's prediction for each point, and plain Little's law
    (the idle-to-loaded chase latency, nothing else) as a dashed line; the bulk family's
    copies (TMA, bulk/read|write|copy) and the cp.async reads (inflight/read_async), where the
    run has them, beside the loads."""
    rows = family_rows(medians, "inflight")
    rows = rows.loc[rows["variant"].isin(["read", "copy"])
                    & rows["bytes_in_flight_per_sm"].notna()]
    if rows.empty:
        raise Skip("no inflight/read or inflight/copy benchmark with bytes_in_flight_per_sm")
    flavor = flavors_of(rows)[0]
    points = rows.loc[rows["flavor"] == flavor]
    loaded = medians.loc[(medians["family"] == "latency") & (medians["variant"] == "loaded")]
    figure, axes = new_figure(1, 2, (6.6, 5.0), sharey=False)
    left, right = axes[0, 0], axes[0, 1]
    shown = [points[["flavor", "bytes_in_flight_per_sm", "inflight_fit_gbs", *SPREAD]]]
    for fl in flavors_of(loaded) if not loaded.empty else []:
        for load, style in (("read", "-"), ("copy", "--")):
            curve = littles_law.loaded_curve(loaded.loc[loaded["flavor"] == fl], load)
            if curve is not None:
                left.plot(curve.gbs, curve.ns, linestyle=style, label=f"{fl}, streams {load}",
                          **_line_only(fl))
    peak = peak_gbs(medians)
    if peak is not None:
        left.axvline(peak, color="black", linestyle=":", linewidth=1.2)
        right.axhline(peak, color="black", linestyle=":", linewidth=1.2,
                      label=f"theoretical peak {peak:.0f} GB/s")
    left.set_xlabel("bandwidth the other SMs stream (GB/s, load_gbs)")
    left.set_ylabel("chase latency under that load (ns, latency_ns)")
    left.grid(True, alpha=0.3)
    if left.lines:
        left.legend(fontsize=8, loc="upper left")
    else:
        left.text(0.5, 0.5, "no latency/loaded/* in this run", ha="center",
                  transform=left.transAxes)
    words = sorted(points["w"].dropna().unique()) if "w" in points.columns else []
    cmap = matplotlib.colormaps["viridis"]
    for k, word in enumerate(words):
        tint = cmap(0.15 + 0.7 * k / max(1, len(words) - 1))
        for op, marker in (("read", "o"), ("copy", "D")):
            for grid, fill in (("persistent", "full"), ("full", "none")):
                series = points.loc[(points["w"] == word) & (points["variant"] == op)
                                    & (points["grid"] == grid)]
                if series.empty:
                    continue
                right.plot(series["bytes_in_flight_per_sm"], series["gbs"], linestyle="none",
                           marker=marker, fillstyle=fill, color=tint, markersize=5,
                           label=f"{op}, {int(word)}-B words, grid:{grid}")
    staged = _points(medians, flavor, "inflight", ["read_async"])
    if not staged.empty:
        right.plot(staged["bytes_in_flight_per_sm"], staged["gbs"], linestyle="none", marker="^",
                   color="tab:purple", markersize=5,
                   label="read by cp.async (LDGSTS), grid:persistent")
        shown.append(staged[["flavor", "bytes_in_flight_per_sm", *SPREAD]])
    bulk = _points(medians, flavor, "bulk", ["read", "write", "copy"])
    one_warp = _one_checking_warp(bulk)
    for op, marker in (("read", "s"), ("write", "v"), ("copy", "P")):
        for alone, fill, who in ((False, "full", ""), (True, "none", ", one warp checks")):
            series = bulk.loc[(bulk["variant"] == op) & (one_warp == alone)]
            if not series.empty:
                right.plot(series["bytes_in_flight_per_sm"], series["gbs"], linestyle="none",
                           marker=marker, fillstyle=fill, color="tab:red", markersize=5,
                           label=f"bulk {op} (TMA), bytes × stages × bpsm{who}")
    if not bulk.empty:
        shown.append(bulk[["flavor", "bytes_in_flight_per_sm", *SPREAD]])
    model = points.dropna(subset=["inflight_fit_gbs"])
    if not model.empty:
        right.plot(model["bytes_in_flight_per_sm"], model["inflight_fit_gbs"], linestyle="none",
                   marker="x", color="black", markersize=4, label="Little's law (each point)")
    curve = littles_law.loaded_curve(loaded.loc[loaded["flavor"] == flavor], "read") \
        if not loaded.empty else None
    sms = points["gpu_sms"].dropna()
    if curve is not None and peak is not None and not sms.empty:
        xs = np.geomspace(points["bytes_in_flight_per_sm"].min(),
                          points["bytes_in_flight_per_sm"].max(), 64)
        ys = [littles_law.solve(x, float(sms.iloc[0]), peak, curve) for x in xs]
        right.plot(xs, ys, color="gray", linestyle="--", linewidth=1,
                   label="Little's law, read: SMs × bytes / loaded latency")
    spans = pd.concat([points["bytes_in_flight_per_sm"], staged["bytes_in_flight_per_sm"],
                       bulk["bytes_in_flight_per_sm"]], ignore_index=True)
    log2_axis(right, spans, in_bytes=True)
    gbs_axis(right, max(peak or 0.0, float(points["gbs"].max(skipna=True) or 0)))
    right.set_xlabel(f"bytes in flight per SM (log scale) · flavor {flavor}")
    right.set_ylabel(GBS_LABEL)
    bottom, top = right.get_ylim()
    right.set_ylim(bottom, top * 1.4)  # headroom: the legend sits above the points
    right.legend(fontsize=6.5, loc="upper left", ncol=2, framealpha=0.95)
    set_title(figure, medians, "Bytes in flight: loaded latency and Little's law")
    footnote(figure, "Left: one thread chases a DRAM-sized chain on an SM of its own while K"
             " other SMs stream (latency/loaded/load:read|copy/sms:K). Right: inflight/*"
             " cases; bytes in flight = resident threads × loads per thread × word size. The"
             " model adds, per operation, word and loads per thread, one warp's own round"
             " (block:32/bpsm:1), the SM's drain of the other warps' bytes (fitted to 2 to 4"
             " warps per SM, full sweep) and, for one block per tile, a block's"
             " turnaround and the GPU's block launch rate (inflight/blocks). Red: bulk/*"
             " (TMA copies, sm_90 on), bytes per copy × stages × blocks per SM; hollow"
             " squares: reads whose one warp also checks every word. Purple:"
             " inflight/read_async (the same tiles through shared memory by cp.async). "
             + spread_note(points, bars=False))
    return Drawn(figure, pd.concat(shown, ignore_index=True), (
        "Why one float per thread cannot fill the memory: bandwidth grows with the bytes each"
        " SM keeps in flight until the loaded latency (left) makes more bytes useless, and a"
        " grid of one block per tile is further capped by how fast the GPU starts blocks; the"
        " crosses are the Little's-law model of each point."))


def _line_only(flavor: str) -> dict:
    """A flavor's colour and marker for a line drawn with plot() (no error bars to fill)."""
    return {k: v for k, v in line_style(flavor).items() if k != "fillstyle"}
