"""The model's terms from the newer probes (persistent streams by request width, the reduce
rungs' trees, the L1's lines per cycle, the staged AoS's rounds, a padded structure's counted
bytes, the loaded chase at other loads, the page term's share by step (past a page too), the slot by a
warp's instructions, stores off their sectors, strides on both sides, sets past the L2): each on a case whose answer is known by hand, and the new parameters' sources on the
committed H100 run with every probe (test_model checks that run's predictions family by family)."""

import numpy as np
import pandas as pd
import pytest

from test_model import H100_PROBES, params

from gmbtools.analysis import (frame, model_bounds, model_chases, model_instructions,
                               model_onchip, model_pages, model_params, model_shapes, model_stores,
                               model_streams, model_trees)
from gmbtools.analysis.model_bounds import Shape
from gmbtools.data import results


@pytest.fixture(scope="module")
def h100():
    return frame.medians_frame([results.load(H100_PROBES)])


def test_the_new_parameters_name_their_probes_and_fall_back_outside_the_predicted_family(h100):
    whole = model_params.params_from(h100)
    assert whole.sources["streams/write/narrow"] == \
        "inflight/write/w:4/ilp:4/block:256/bpsm:8/grid:persistent"
    assert whole.sources["trees"] == "model/reduce/f32/*/loads:none/bpsm:*"
    assert whole.sources["sm_clock_ghz"] == "model/chase/*"
    assert 1.5 < whole.sm_clock_ghz < 2.1
    assert {(rung, k) for rung, k in whole.trees} >= {("sequential", 8), ("sequential", 1)}
    without = model_params.params_from(h100, without="inflight")
    assert without.sources["streams/write/narrow"] == "write/f32/ilp:4/grid:persistent"
    assert not any(s.startswith("inflight/") for s in without.sources.values())


def test_a_persistent_grid_streams_at_the_rate_of_its_width():
    rates = model_streams.StreamRates({("write", "wide"): 3200.0, ("write", "narrow"): 2900.0})
    assert rates.rate("write", 4.0) == 2900.0
    assert rates.rate("write", 16.0) == 3200.0
    assert rates.rate("read", 4.0) is None  # neither: the full grid's rate then
    p = params(streams=rates)
    narrow = Shape(op="write", load_bytes_per_thread=4, grid="persistent", dram_bytes=1.0,
                   efficiency=1.0, word_bytes=4)
    wide = Shape(op="write", load_bytes_per_thread=16, grid="persistent", dram_bytes=1.0,
                 efficiency=1.0, word_bytes=16)
    assert model_bounds.bounds(p, narrow)[model_bounds.DRAM] == pytest.approx(2900.0)
    assert model_bounds.bounds(p, wide)[model_bounds.DRAM] == pytest.approx(3200.0)


def test_a_tree_takes_longer_the_more_trees_share_the_sm():
    # alone: 500 ns a block, 200 of it an empty block's; 8 per SM: a round of 1,000 ns
    rounds = {("sequential", 1): 500.0, ("sequential", 8): 1000.0}
    tree = model_trees.tree_of(rounds, "sequential", 200.0)
    assert tree.alone_ns == pytest.approx(300.0)
    # in the probe 8 x 800 / 1000 = 6.4 trees at once: each other adds (800 - 300) / 5.4
    assert tree.per_other_ns == pytest.approx(500.0 / 5.4)
    assert tree.time(1000.0, 8) == pytest.approx(800.0)  # the probe's own round again
    assert tree.time(1e6, 8) == pytest.approx(300.0)  # alone: no other tree at once
    assert model_trees.tree_of(rounds, "first_add", 200.0) is None


def test_the_l1_takes_a_loads_lines_one_per_cycle():
    p = params(sm_clock_ghz=2.0)
    # lanes 64 B apart: 16 lines per load of 32 x 4 B, 8 B per cycle, 100 SMs at 2 GHz
    shape = Shape(op="read", load_bytes_per_thread=64, grid="full", dram_bytes=1.0,
                  efficiency=1.0, word_bytes=4, lines_per_request=16)
    assert model_bounds.bounds(p, shape)[model_bounds.L1_LINES] == pytest.approx(1600.0)
    row = pd.Series({"family": "reuse", "variant": "aos", "bytes": "64"})
    assert model_shapes._lines_per_request(row, 4.0, None) == 16
    row = pd.Series({"family": "stride", "variant": "f32/read", "s": "1"})
    assert model_shapes._lines_per_request(row, 4.0, 4.0) == 1


def test_the_staged_aos_loads_one_word_a_round_and_counts_its_fields():
    row = pd.Series({"family": "aos_staged", "variant": "s64", "type": "s64", "fields": "all",
                     "model_dram_bytes": 68.0, "model_efficiency": 1.0,
                     "model_ld_sectors_per_req": 4.0, "flavor": "default"})
    shape = model_shapes.shape_of(row)
    assert shape.rounds == 15  # 16 words: one at a time, the last two together
    assert shape.load_bytes_per_thread == pytest.approx(4 * 16 / 15)
    padded = pd.Series({"family": "aos", "variant": "a12", "type": "a12", "fields": "all",
                        "model_dram_bytes": 20.0, "model_efficiency": 1.0,
                        "model_ld_sectors_per_req": 16.0, "flavor": "default"})
    assert model_shapes.shape_of(padded).counted == pytest.approx(16.0 / 20.0)


def test_the_loaded_chase_is_linear_in_the_streaming_sms_between_and_past_the_probes():
    probes = model_chases.ChaseProbes()
    probes.loaded["read"] = [(8, 800.0), (24, 1000.0), (40, 1400.0)]
    steps = model_chases.STEPS * model_chases.ADDRESS_BYTES
    assert model_chases._loaded_rate(probes, "read", 16) == pytest.approx(steps / 900.0)
    assert model_chases._loaded_rate(probes, "read", 48) == pytest.approx(steps / 1600.0)
    assert model_chases._loaded_rate(probes, "read", 0) == pytest.approx(steps / 800.0)  # idle
    assert model_chases._loaded_rate(probes, "copy", 16) is None  # no probe of copies
    probes.loaded["copy"] = [(8, 900.0), (24, 1300.0)]  # loaded already: idle is the reads' 8
    assert model_chases._loaded_rate(probes, "copy", 4) == pytest.approx(steps / 850.0)


def test_the_latency_family_is_predicted_from_the_calibrations_loads_alone(h100):
    whole = model_params.params_from(h100)
    assert whole.sources["read_curve"] == "latency/loaded/load:read/*"
    without = model_params.params_from(h100, without="latency")
    assert without.sources["read_curve"] == "model/loaded/load:read/*"
    assert without.sources["copy_curve"] == "model/loaded/load:copy/*"
    assert len(without.chases.loaded["read"]) == 7 and len(without.chases.loaded["copy"]) == 6


def test_the_page_share_is_measured_between_the_probes_and_fixed_at_the_ends():
    curve = model_pages.PageCurve(np.array([64.0, 256.0]), np.array([0.2, 0.6]))
    curves = {"read": curve}
    assert model_pages.share(curves, "read", 16) == 0.0  # accesses sharing a granule stream
    assert model_pages.share(curves, "read", 64) == pytest.approx(0.2)  # through each probe
    assert model_pages.share(curves, "read", 256) == pytest.approx(0.6)
    # between them the monotone cubic through (32, 0), (64, 0.2), (256, 0.6), (4096, 1) in
    # log2: a little above the straight line's 0.4, as the rise slows past 256 B
    assert model_pages.share(curves, "read", 128) == pytest.approx(0.4154, abs=1e-3)
    assert model_pages.share(curves, "read", 4096) == 1.0
    assert model_pages.share(curves, "read", float("inf")) == 1.0
    assert model_pages.share(curves, "read", None) == 0.0
    # stores without probes: log-linear from a 64-B granule to a 256-B page
    assert model_pages.share(curves, "write", 128) == pytest.approx(0.5)


def test_the_curve_between_probes_keeps_their_rises_and_falls_and_their_straight_lines():
    x = np.log2([40.0, 96.0, 192.0, 384.0, 768.0])
    y = np.array([0.02, 0.05, 0.39, 0.85, 0.99])  # an H200's reads: a steep S
    for a, b in zip(range(4), range(1, 5)):  # never past its neighbours
        for t in np.linspace(x[a], x[b], 7):
            assert y[a] - 1e-12 <= model_pages.monotone_cubic(x, y, t) <= y[b] + 1e-12
    # 256 B apart: above the straight line between 192 and 384 B (0.58), as the sweep pays
    at = np.log2(256.0)
    assert model_pages.monotone_cubic(x, y, at) > np.interp(at, x, y) + 0.01
    line = 0.1 + 0.2 * x  # collinear points: the line itself
    assert model_pages.monotone_cubic(x, line, 7.3) == pytest.approx(0.1 + 0.2 * 7.3)
    flat = np.array([0.3, 0.5, 0.5, 0.5, 0.7])  # a flat stretch stays flat
    assert model_pages.monotone_cubic(x, flat, (x[1] + x[3]) / 2) == pytest.approx(0.5)
    assert model_pages.monotone_cubic(x, y, 0.0) == y[0]  # the ends outside
    assert model_pages.monotone_cubic(x, y, 99.0) == y[-1]


def test_a_step_past_a_page_pays_more_than_a_random_access_by_the_probes_past_it():
    curve = model_pages.PageCurve(np.array([768.0, 1536.0, 6144.0]), np.array([0.9, 1.05, 1.2]))
    curves = {"read": curve}
    # no anchor at a page: between the probes, then the last one's
    assert model_pages.share(curves, "read", 3072) == pytest.approx(1.1447, abs=1e-3)
    assert model_pages.share(curves, "read", 65536) == pytest.approx(1.2)
    assert model_pages.share(curves, "read", float("inf")) == 1.0  # a random access: the cost
    # a probe's share is held at MOST: 3 pages' cost is 2
    p = params(scatter_read=1e-4, scatter_write=2e-4)
    dram = 1e9
    base = p.dram_ns_per_byte(dram * 0.9, dram * 0.1) * dram
    rows = pd.DataFrame([{"name": "model/stride/f32/read/s:1536", "model_dram_bytes": dram,
                          "model_efficiency": 0.2, "gbs": dram * 0.2 / (base + 3e-4 * dram * 0.9)}])
    assert model_pages.curves_from(p, rows)["read"].share(6144) == model_pages.MOST


def test_stores_pay_from_a_word_apart_by_the_part_of_each_sector_they_leave():
    curve = model_pages.PageCurve(np.array([40.0, 80.0]), np.array([0.04, 0.2]),
                                  model_pages.WORD)
    curves = {"write": curve, "read": model_pages.PageCurve(np.array([40.0]), np.array([0.04]))}
    assert model_pages.share(curves, "write", 4) == 0.0  # contiguous words stream
    f32 = model_pages.share(curves, "write", 16)  # a word in four: part of the 40-B probe's
    assert 0.0 < f32 < 0.04
    # f64 words 32 B apart leave each sector as much unwritten as f32 words 16 B apart
    assert model_pages.share(curves, "write", 32, word=8) == pytest.approx(f32)
    assert model_pages.share(curves, "write", 64, word=8) == curve.share(64)  # past a sector
    assert model_pages.share(curves, "read", 16) == 0.0  # loads share their granule: stream


def test_the_l2_keeps_part_of_a_set_past_it_as_a_random_eviction_would():
    h = model_onchip.past_l2_hits(2.0)
    assert 0.1 < h < 0.3 and h == pytest.approx(np.exp(-(1 - h) * 2.0))
    assert model_onchip.past_l2_hits(1.0) == 1.0 and model_onchip.past_l2_hits(0.5) == 1.0
    l1, l2, mib = 256 * 1024, 50 * 2**20, 2**20
    probes = model_onchip.OnChipProbes(read_gbs={"l1": 20000.0, "l2": 8000.0},
                                       l2_sets={10 * mib: 8000.0})
    # the L2's own, the default carve-out's L1 share out
    l1_default = model_onchip.default_l1_bytes(l1, 9.0)
    hit = model_onchip._l2_rate(probes, 100 * mib, 20000.0, l1_default)
    # the probe of 75 MiB as a random eviction of 50 MiB gives it: its capacity is 50 MiB
    probes.past_l2 = (75 * mib, 1 / (model_onchip.past_l2_hits(1.5) / hit
                                     + (1 - model_onchip.past_l2_hits(1.5)) / 3000.0))

    def hot(ws):
        row = pd.Series({"family": "cache", "variant": "read", "ws": str(ws)})
        return model_onchip.hot_read(probes, row, l1, l2, 9.0, 3000.0)

    assert hot(100 * mib) == pytest.approx(1 / (h / hit + (1 - h) / 3000.0))
    assert 3000.0 < hot(128 * mib) < hot(100 * mib) < hot(75 * mib) < hit
    probes.past_l2 = None  # without the probe: DRAM's rate
    assert hot(100 * mib) == 3000.0


def test_the_page_shares_come_from_the_strided_probes(h100):
    p = model_params.params_from(h100, without="stride")
    assert p.sources["pages"] == "model/stride/f32/*/s:*"
    assert p.sources["scatter_read"] == "gather/random"
    for side in ("read", "write"):
        curve = p.pages[side]
        assert list(curve.steps) == [40, 48, 80, 96, 192, 384, 768, 1536, 3072, 6144]
        assert -0.1 < curve.shares[0] < 0.1 and 0.7 < curve.shares[6] < 1.0
        # past a page a step costs what a random access does, within 10 % (its indices free,
        # the random gather's extra time per byte is the strided one's), more the longer it is
        assert 0.9 < curve.shares[7] <= curve.shares[-1] < 1.1


def test_the_instruction_probes_give_the_slot_a_warps_instructions_hold():
    p = params()
    copy = Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=8e6,
                 efficiency=1.0, ld_sectors_per_req=4.0)

    def latency_gbs(slot: float) -> float:
        q = model_params.Params(**{**vars(p), "load_slot_ns": slot})
        return model_bounds.bounds(q, copy)[model_bounds.LATENCY]

    # three probes: 33, 45 and 61 instructions a warp, run as if their slots were these
    slots = {33: 200.0, 45: 260.0, 61: 400.0}
    rows = pd.DataFrame([{"name": f"model/instructions/f32/extra:{n - 29}", "gbs": latency_gbs(s),
                          "model_dram_bytes": 8e6, "model_warp_instructions": float(n)}
                         for n, s in slots.items()])
    probes = model_instructions.probes_from(rows)
    assert [n for n, _, _ in probes] == [33, 45, 61]
    with_probes = model_params.Params(**{**vars(p), "instruction_probes": probes})
    found = model_bounds.instruction_slots(with_probes)
    assert list(found.instructions) == [33, 45, 61]
    assert found.slots == pytest.approx(list(slots.values()), abs=0.01)
    assert found.slot(53) == pytest.approx(330.0, abs=0.01)  # between: linear
    assert found.slot(21) == pytest.approx(140.0, abs=0.01)  # before: the first two's line
    assert found.slot(-1000) == 0.0
    # a kernel of 45 instructions runs as the probe of 45; without a count, on load_slot_ns
    counted = Shape(**{**vars(copy), "instructions": 45.0})
    assert model_bounds.bounds(with_probes, counted)[model_bounds.LATENCY] == \
        pytest.approx(latency_gbs(260.0), rel=1e-6)
    assert model_bounds.bounds(with_probes, copy)[model_bounds.LATENCY] == \
        pytest.approx(latency_gbs(200.0), rel=1e-6)
    assert model_instructions.probes_from(rows.iloc[:1]) is None  # one probe says nothing


def test_stores_off_their_sectors_take_dram_longer_by_the_probes_measure():
    assert model_stores.extra_share(5.0, 4.0) == pytest.approx(0.25)  # f32, 4 B off
    assert model_stores.extra_share(17.0, 16.0) == pytest.approx(1 / 16)  # f32x4, 16 B off
    assert model_stores.extra_share(4.0, 4.0) == 0.0 and model_stores.extra_share(None, 4) == 0
    p = params()
    # the probe: a copy of 2 GB read and written at 90 % of the DRAM bound of its bytes
    dram = 2e9
    bound = 1 / p.dram_ns_per_byte(dram / 2, dram / 2)
    probe = pd.DataFrame([{"name": model_stores.PROBE, "gbs": 0.9 * bound, "model_dram_bytes": dram,
                           "model_efficiency": 1.0, "model_st_sectors_per_req": 5.0}])
    k = model_stores.store_part_ns(probe, p)
    assert k == pytest.approx((1 / (0.9 * bound) - 1 / bound) * dram / (dram / 2 * 0.25))
    off = Shape(op="copy", load_bytes_per_thread=16.0, grid="full", dram_bytes=dram,
                efficiency=1.0, ld_sectors_per_req=4.0, store_extra=0.25)
    aligned = Shape(**{**vars(off), "store_extra": 0.0})
    q = model_params.Params(**{**vars(p), "store_part_ns": k})
    assert model_bounds.bounds(q, off)[model_bounds.DRAM] == pytest.approx(0.9 * bound)
    assert model_bounds.bounds(q, aligned)[model_bounds.DRAM] == pytest.approx(bound)
    # the latency bound reads the curve as before: DRAM's queues are not fuller
    assert model_bounds.bounds(q, off)[model_bounds.LATENCY] == \
        pytest.approx(model_bounds.bounds(q, aligned)[model_bounds.LATENCY])


def test_a_copy_strided_on_both_sides_pays_the_share_its_own_probes_measured():
    p = params(scatter_read=1e-4, scatter_write=2e-4)
    dram = 1e9
    base = p.dram_ns_per_byte(dram / 2, dram / 2) * dram
    # probes at 40 B and 768 B that pay 30 % and 60 % of both sides' page costs
    rows = pd.DataFrame([{"name": f"model/stride/f32/both/s:{s}", "model_dram_bytes": dram,
                          "model_efficiency": 0.5,
                          "gbs": dram * 0.5 / (base + share * dram / 2 * 3e-4)}
                         for s, share in ((10, 0.3), (192, 0.6))])
    curves = model_pages.curves_from(p, rows)
    assert curves["both"].share(40) == pytest.approx(0.3)
    assert curves["both"].share(768) == pytest.approx(0.6)
    both = Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram,
                 efficiency=0.5, read_step=40.0, write_step=40.0)
    q = model_params.Params(**{**vars(p), "pages": curves})
    assert model_bounds.bounds(q, both)[model_bounds.DRAM] == \
        pytest.approx(dram * 0.5 / (base + 0.3 * dram / 2 * 3e-4))


def test_the_instruction_slots_are_found_again_when_a_parameter_changes():
    p = params()
    rows = pd.DataFrame([{"name": f"model/instructions/f32/extra:{n - 29}", "gbs": g,
                          "model_dram_bytes": 8e6, "model_warp_instructions": float(n)}
                         for n, g in ((33, 2000.0), (61, 1800.0))])
    q = model_params.Params(**{**vars(p), "instruction_probes": model_instructions.probes_from(rows)})
    first = model_bounds.instruction_slots(q)
    assert model_bounds.instruction_slots(q) is first  # kept
    again = model_params.Params(**vars(q))  # the fields copy, the cache with them, still right
    assert model_bounds.instruction_slots(again) is first
    q.block_rate = 0.8  # fewer block starts: each slot found again, shorter
    changed = model_bounds.instruction_slots(q)
    assert changed is not first and all(changed.slots < first.slots)
