"""The model's terms from the newer probes (persistent streams by request width, the reduce
rungs' trees, the L1's lines per cycle, the staged AoS's rounds, a padded structure's counted
bytes, the loaded chase at other loads, the page term's share by step): each on a case whose answer is known by hand, and the new parameters' sources on the
committed H100 run with every probe (test_model checks that run's predictions family by family)."""

import numpy as np
import pandas as pd
import pytest

from test_model import H100_PROBES, params

from gmbtools.analysis import (frame, model_bounds, model_chases, model_pages, model_params,
                               model_shapes, model_streams, model_trees)
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
    assert model_pages.share(curves, "read", 128) == pytest.approx(0.4)  # log2 halfway
    assert model_pages.share(curves, "read", 4096) == 1.0
    assert model_pages.share(curves, "read", float("inf")) == 1.0
    assert model_pages.share(curves, "read", None) == 0.0
    # stores without probes: log-linear from a 64-B granule to a 256-B page
    assert model_pages.share(curves, "write", 128) == pytest.approx(0.5)


def test_the_page_shares_come_from_the_strided_probes(h100):
    p = model_params.params_from(h100, without="stride")
    assert p.sources["pages"] == "model/stride/f32/*/s:*"
    assert p.sources["scatter_read"] == "gather/random"
    for side in ("read", "write"):
        curve = p.pages[side]
        assert list(curve.steps) == [40, 48, 80, 96, 192, 384, 768]
        assert -0.1 < curve.shares[0] < 0.1 and 0.9 < curve.shares[-1] < 1.1
