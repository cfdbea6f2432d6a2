"""The peer link's model (analysis/model_peer.py): its arithmetic on numbers worked by hand,
and on the committed two-GPU node runs (results/nvidia-h100-80gb-hbm3/20261125-222925,
results/nvidia-h200/20261127-101738) every peer kernel predicted from the copy engine's pushes,
NVML's link rate and the local model's round alone, within 3% or named in docs/peer.md."""

from pathlib import Path

import pytest

from gmbtools.analysis import frame, model_params, model_peer
from gmbtools.data import results

REPO = Path(__file__).resolve().parents[2]
NODE_RUN = REPO / "results" / "nvidia-h100-80gb-hbm3" / "20261125-222925"
H200_NODE_RUN = REPO / "results" / "nvidia-h200" / "20261127-101738"


def row(name, ld=4.0, st=4.0):
    return {"name": name, "model_ld_sectors_per_req": ld, "model_st_sectors_per_req": st}


def test_the_link_bound_worked_by_hand():
    p = model_params.Params(peer_ce_gbs=800.0, peer_link_gbs=480.0)
    one_way = 400.0 * (128 / 144) / (256 / 272)  # 377.8: SM payload each way
    assert model_peer.SM_SHARE == pytest.approx((128 / 144) / (256 / 272))
    assert model_peer.peer_gbs(p, row("peer/read/f32/ilp:1")) == pytest.approx(one_way)
    assert model_peer.peer_gbs(p, row("peer/write/f32x4/ilp:1", st=16.0)) == pytest.approx(
        one_way)
    assert model_peer.peer_gbs(p, row("peer/copy/f32/ilp:1/dir:pull")) == pytest.approx(
        2 * one_way)
    # a word per sector: 128 useful bytes of 1,024 over the link
    assert model_peer.peer_gbs(p, row("peer/copy/f32/s:8/dir:pull", ld=32.0)) == pytest.approx(
        2 * one_way / 8)
    # pulls both ways: each direction carries one pull's data and the other's 16-B requests
    both = 4 * 480.0 / (480.0 / one_way + 16 / 128)
    assert model_peer.peer_gbs(p, row("peer/copy/f32/ilp:1/dir:both_pull")) == pytest.approx(
        both)
    assert both < 4 * one_way
    # pushes both ways: no requests, each direction as one push
    assert model_peer.peer_gbs(p, row("peer/copy/f32/ilp:1/dir:both")) == pytest.approx(
        4 * one_way)
    for unmodelled in ("peer/copy/f32/off:1/dir:pull", "peer/chase/ws:16384/lanes:1"):
        assert model_peer.peer_gbs(p, row(unmodelled, ld=5.0)) is None
    assert model_peer.peer_gbs(model_params.Params(peer_ce_gbs=800.0),
                               row("peer/read/f32/ilp:1")) is None  # no link rate: no bound


# docs/peer.md names why these miss by more than 3%: neighbouring warps' requests to a line
# that leave in one packet (runs of 32 and 64 B per line), and a round trip that grows under
# the load of a few dozen blocks (no loaded probe of the link yet)
NAMED = {f"peer/copy/f32/run:{run}/dir:{way}" for run in (32, 64) for way in ("pull", "push")} | {
    f"peer/copy/f32x4/ilp:4/dir:pull/blocks:{n}" for n in (8, 16, 33)}
CHASES = {f"peer/chase/ws:{ws}/lanes:1" for ws in (16384, 1048576, 268435456)}


@pytest.mark.parametrize("run, predicted", [(NODE_RUN, 26), (H200_NODE_RUN, 52)])
def test_every_peer_kernel_of_a_node_run_is_within_3_percent_of_the_link_model_or_named(
        run, predicted):
    folders = sorted(run.glob("gpu*")) if run.is_dir() else []
    if not folders:
        pytest.skip("no results/ here")
    for folder in folders:
        medians = frame.readable_medians(folder, results.load_folder(folder))
        peer = medians.loc[(medians["family"] == "peer") & (medians["flavor"] == "default")]
        found = peer.loc[peer["model_gbs"].notna()]
        assert len(found) == predicted and set(found["model_bound"]) == {model_peer.PEER}
        ratio = found["gbs"] / found["model_gbs"]
        off = set(found.loc[~ratio.between(0.97, 1.03), "name"])
        assert off <= NAMED, found.assign(ratio=ratio)[["name", "ratio"]]
        left = set(peer.loc[peer["model_gbs"].isna(), "name"])
        assert left == {"peer/copy/f32/off:1/dir:pull"} | CHASES
        p = model_params.params_from(medians.loc[medians["flavor"] == "default"],
                                     without="peer")
        assert p.sources["peer_ce_gbs"] == "ref/memcpy_peer/dir:push"
        assert p.peer_link_gbs == pytest.approx(478.12)


def test_the_best_way_both_ways_is_each_gpu_pushing_at_the_sms_share_of_the_copy_engine():
    """docs/peer.md's answer: pushes both ways beat pulls both ways (no requests on the data's
    wires) and reach what the 128-B payloads allow of the copy engine's 256-B, not 0.95."""
    folders = sorted(H200_NODE_RUN.glob("gpu*")) if H200_NODE_RUN.is_dir() else []
    if not folders:
        pytest.skip("no results/ here")
    for folder in folders:
        medians = frame.readable_medians(folder, results.load_folder(folder))
        gbs = medians.loc[medians["flavor"] == "default"].set_index("name")["gbs"]
        push, pull = gbs["peer/copy/f32x4/ilp:4/dir:both"], gbs["peer/copy/f32x4/ilp:4/dir:both_pull"]
        engine = gbs["ref/memcpy_peer/dir:both"]
        assert push > 1.05 * pull
        assert 0.93 < push / engine < model_peer.SM_SHARE * 1.02 < 0.97


def test_wire_bytes_per_useful_byte_count_sectors_headers_and_the_other_ways_requests():
    assert model_peer.link_bytes(row("peer/read/f32/ilp:1")) == pytest.approx(144 / 128)
    assert model_peer.link_bytes(row("peer/copy/f32/s:8/dir:pull", ld=32.0)) == pytest.approx(
        8 * 144 / 128)
    assert model_peer.link_bytes(row("peer/copy/f32/ilp:1/dir:both_pull")) == pytest.approx(
        144 / 128 + 16 / 128)
    assert model_peer.link_bytes(row("peer/copy/f32/ilp:1/dir:both")) == pytest.approx(144 / 128)
    assert model_peer.link_bytes(row("peer/chase/ws:16384/lanes:1")) is None


def test_the_frame_carries_the_link_bytes_of_peer_rows_only():
    folders = sorted(NODE_RUN.glob("gpu*")) if NODE_RUN.is_dir() else []
    if not folders:
        pytest.skip("no results/ here")
    medians = frame.readable_medians(folders[0], results.load_folder(folders[0]))
    peer = medians["family"] == "peer"
    assert medians.loc[~peer, "model_link_bytes"].isna().all()
    # the file predates gmb_peer_both: its dir:both (each GPU pulling) reads as dir:both_pull
    both = medians.loc[medians["name"] == "peer/copy/f32/ilp:1/dir:both_pull",
                       "model_link_bytes"]
    assert both.iloc[0] == pytest.approx(1.25)


def test_a_request_pays_a_header_per_line_it_touches_and_the_sectors_it_moves_there():
    p = model_params.Params(peer_ce_gbs=800.0, peer_link_gbs=480.0)
    pull = model_peer.peer_gbs(p, row("peer/copy/f32/ilp:1/dir:pull"))
    # runs: every byte used, 4 sectors a request, but 1, 2 or 4 lines: 32/48, 64/80, 128/144
    full = 128 / 144
    for run, share in ((32, 32 / 48 / full), (64, 64 / 80 / full), (128, 1.0)):
        name = f"peer/copy/f32/run:{run}/dir:pull"
        assert model_peer.peer_gbs(p, row(name)) == pytest.approx(pull * share)
        assert model_peer.link_bytes(row(name)) == pytest.approx((16 + run) / run)
    # strides: s:2 fills two lines; from s:16 a line carries the span of the sectors its lanes
    # touch: s:16's sectors 0 and 2 send three (112 B for 8)
    assert model_peer.peer_gbs(p, row("peer/copy/f32/s:2/dir:pull", ld=8.0)) == pytest.approx(
        pull / 2)
    assert model_peer.peer_gbs(p, row("peer/copy/f32/s:16/dir:pull", ld=32.0)) == pytest.approx(
        pull * (8 / 112) / full)
    assert model_peer.link_bytes(row("peer/copy/f32/s:16/dir:pull", ld=32.0)) == pytest.approx(
        112 / 8)
    assert model_peer.peer_gbs(p, row("peer/copy/f32/s:32/dir:push", st=32.0)) == pytest.approx(
        pull * (4 / 48) / full)
    assert model_peer.peer_gbs(p, row("peer/read/f64/ilp:1", ld=8.0)) == pytest.approx(pull / 2)


def test_both_ways_pushes_cost_nothing_more_and_a_split_gpu_costs_what_pulls_both_ways_do():
    p = model_params.Params(peer_ce_gbs=800.0, peer_link_gbs=480.0)
    push = model_peer.peer_gbs(p, row("peer/copy/f32x4/ilp:4/dir:push", st=16.0))
    both = model_peer.peer_gbs(p, row("peer/copy/f32x4/ilp:4/dir:both_pull", ld=16.0))
    assert model_peer.peer_gbs(p, row("peer/copy/f32x4/ilp:4/dir:both", st=16.0)) == (
        pytest.approx(2 * push))
    assert model_peer.peer_gbs(p, row("peer/copy/f32x4/ilp:4/dir:split", ld=16.0)) == (
        pytest.approx(both))
    assert model_peer.link_bytes(row("peer/copy/f32x4/ilp:4/dir:split", ld=16.0)) == (
        pytest.approx(144 / 128 + 16 / 128))


def test_few_blocks_keep_too_few_bytes_in_flight_for_the_links_round_trip():
    p = model_params.Params(peer_ce_gbs=800.0, peer_link_gbs=480.0)
    pull = model_peer.peer_gbs(p, row("peer/copy/f32x4/ilp:4/dir:pull", ld=16.0))
    name = "peer/copy/f32x4/ilp:4/dir:pull/blocks:{}"
    # 8 blocks x 16 KiB over 1,000 ns, read and written
    assert model_peer.peer_gbs(p, row(name.format(8), ld=16.0), 1000.0) == pytest.approx(
        2 * 8 * 16384 / 1000)
    assert model_peer.peer_gbs(p, row(name.format(1056), ld=16.0), 1000.0) == pytest.approx(pull)
    assert model_peer.peer_gbs(p, row(name.format(8), ld=16.0)) is None  # no round trip known
    # the bytes in flight follow the name's word and ilp: 256 threads x one 4-B word
    assert model_peer.peer_gbs(p, row("peer/copy/f32/ilp:1/dir:pull/blocks:8"), 1000.0) == (
        pytest.approx(2 * 8 * 256 * 4 / 1000))
    # a round as the local model's persistent warp: the round trip, 15 more lines (4 loads of
    # 4 lines), the loop
    p = model_params.Params(peer_ce_gbs=800.0, peer_link_gbs=480.0, line_ns=8.0, round_ns=40.0)
    assert model_peer.peer_gbs(p, row(name.format(8), ld=16.0), 1000.0) == pytest.approx(
        2 * 8 * 16384 / (1000 + 15 * 8 + 40))


def test_bulk_copies_over_the_link_send_the_sms_payloads():
    p = model_params.Params(peer_ce_gbs=800.0, peer_link_gbs=480.0)
    one_way = 400.0 * (128 / 144) / (256 / 272)
    bulk = "peer/bulk/{}/bytes:16384/stages:4/bpsm:1"
    assert model_peer.peer_gbs(p, row(bulk.format("read") + "/warps:4")) == pytest.approx(one_way)
    for way in ("pull", "push"):
        assert model_peer.peer_gbs(p, row(bulk.format("copy") + f"/dir:{way}")) == (
            pytest.approx(2 * one_way))
        assert model_peer.link_bytes(row(bulk.format("copy") + f"/dir:{way}")) == (
            pytest.approx(144 / 128))


def test_the_links_round_trip_is_the_peer_chase_beyond_every_l2():
    folders = sorted(NODE_RUN.glob("gpu*")) if NODE_RUN.is_dir() else []
    if not folders:
        pytest.skip("no results/ here")
    medians = frame.readable_medians(folders[0], results.load_folder(folders[0]))
    rows = medians.loc[medians["flavor"] == "default"]
    chase = rows.loc[rows["name"] == "peer/chase/ws:268435456/lanes:1", "latency_ns"]
    assert model_peer.link_latency_ns(rows) == pytest.approx(float(chase.iloc[0]))
    assert 500 < model_peer.link_latency_ns(rows) < 2000
