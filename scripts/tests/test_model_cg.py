"""The `cg` build (-dlcm=cg) in the model: its plain loads keep no line in the L1, so a
stencil's window goes to the L2 load by load and a hot read of any set the L2 holds is the
L2's; explicit operators that keep their lines (`ld:ldg|ca|cs`) are unchanged."""

import pandas as pd
import pytest

from test_model import H200_CG, params

from gmbtools.analysis import frame, model_bounds, model_check, model_onchip, model_shapes
from gmbtools.analysis.model_bounds import Shape
from gmbtools.data import results


def stencil(family: str, flavor: str, **keys) -> pd.Series:
    return pd.Series({"family": family, "variant": "stencil", "flavor": flavor, "ld": None,
                      "model_dram_bytes": 8e9, "model_efficiency": 1.0,
                      "model_ld_sectors_per_req": 4.8, **keys})


@pytest.mark.parametrize("family, keys, window", [
    ("reuse", {"r": "1"}, 3), ("reuse", {"r": "4"}, 9),
    ("cache_op", {"ld": "default", "st": "default"}, 5),
    ("readonly", {"r": "2", "ld": "default"}, 5)])
def test_a_plain_stencil_of_the_cg_build_sends_its_whole_window_to_the_l2(family, keys, window):
    cg = model_shapes.shape_of(stencil(family, "cg", **keys))
    assert (cg.requests, cg.l1_reuse) == (window, False)
    default = model_shapes.shape_of(stencil(family, "default", **keys))
    assert default.requests is None and default.l1_reuse


@pytest.mark.parametrize("ld", ["ldg", "ca", "cs"])
def test_operators_that_keep_their_lines_in_the_l1_do_so_in_the_cg_build(ld):
    shape = model_shapes.shape_of(stencil("cache_op", "cg", ld=ld, st="default"))
    assert shape.requests is None
    assert model_shapes.shape_of(stencil("cache_op", "default", ld="cg", st="default")).requests == 5


def test_each_request_past_the_l1_brings_its_own_sectors_from_the_l2():
    p = params(l2_gbs=9000.0)
    window = Shape(op="copy", load_bytes_per_thread=4, grid="full", dram_bytes=1e9,
                   efficiency=1.0, ld_sectors_per_req=5.0, l1_reuse=False, requests=9.0)
    # 9 requests of 5 sectors for one 4-B word a lane, read and written (factor 2)
    assert model_bounds.bounds(p, window)[model_bounds.L2] == \
        pytest.approx(9000.0 * 128 / (5 * 32 * 9) * 2)


def test_a_hot_read_of_the_cg_build_is_the_l2s_at_every_set_it_holds():
    probes = model_onchip.OnChipProbes(read_gbs={"l1": 5000.0, "l2": 9000.0}, l1_set=40960.0,
                                       l2_sets={2**20: 11000.0, 8 * 2**20: 9000.0})
    l1, l2 = 256 * 1024, 50 * 2**20

    def hot(ws, flavor="cg", **extra):
        row = pd.Series({"family": "cache", "variant": "read", "ws": str(ws), "flavor": flavor,
                         **extra})
        return model_onchip.hot_read(probes, row, l1, l2, 9.0, 3000.0)

    # a set no larger than the 40-KiB probe's: its rate (few lines, part of the L2's slices)
    assert hot(16384) == 5000.0 and hot(40960) == 5000.0
    # larger: the L2 probes' rates by log2(set), nothing held in the L1
    assert hot(65536) == 11000.0
    assert hot(2 * 2**20) == pytest.approx(11000.0 - 2000.0 / 3)
    assert hot(2 * 2**20, flavor="default") > 11000.0  # the default build's L1 holds a share
    assert hot(2**20, l1="small") == 9000.0  # the smallest carve-out: the L2 bound's probe's
    assert hot(2**30) == 3000.0  # past the L2: DRAM's without the probe past it


def test_a_gather_with_an_operator_that_keeps_no_line_in_the_l1_bypasses_it_in_every_build():
    row = pd.Series({"family": "cache_op", "variant": "gather", "flavor": "default", "ld": "cg",
                     "st": "default", "model_dram_bytes": 8e9, "model_efficiency": 0.25,
                     "model_ld_sectors_per_req": 32.0})
    shape = model_shapes.shape_of(row)
    assert shape.requests is None and not shape.l1_reuse


def test_the_h200s_cg_build_reads_its_plain_stencils_within_5_percent():
    rows = model_check.ratios(frame.medians_frame([results.load(H200_CG)])).set_index("name")
    plain = ["reuse/stencil/r:2", "cache_op/stencil/ld:default/st:default",
             "readonly/stencil/r:2/ld:default"]
    for name in plain:
        assert rows.loc[name, "model_bound"] == "latency"
        assert abs(rows.loc[name, "ratio"] - 1) <= 0.05, name
    # the read-only path keeps its lines in the L1 in this build too: the default shape
    assert rows.loc["readonly/stencil/r:2/ld:ldg", "model_gbs"] > \
        rows.loc["readonly/stencil/r:2/ld:default", "model_gbs"]
