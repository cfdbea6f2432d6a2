"""A block over rows far apart (`model_bounds.rows_apart_ns`): a 32 x 8 block whose eight warps
load eight rows of a matrix holds its slot longer than one loading 1 KiB in a row, by a time
found from one probe (`model/matrix/rows/w:2000/pad:0`). Checked on cases whose answer is known
by hand; which kernels are such blocks."""

import math

import pandas as pd
import pytest

from test_model import FLAT, params

from gmbtools.analysis import model_bounds, model_instructions, model_shapes
from gmbtools.analysis.model_bounds import Shape


def copy(rows_apart: bool, grid: str = "full") -> Shape:
    return Shape(op="copy", load_bytes_per_thread=4.0, grid=grid, dram_bytes=1e9, efficiency=1.0,
                 ld_sectors_per_req=4.0, rows_apart=rows_apart)


def probe_at(ns: float) -> tuple:
    """The probe's row as it would measure with blocks `ns` longer in their slots: Little's law
    by hand on the flat 400-ns curve, 100 SMs of 2048 threads, 4 B each in flight: a round of the
    latency, the load slot (200 ns), the start wait (100 / 1.6 blocks per ns) and `ns`."""
    gbs = 100 * 2048 * 4 / (FLAT.latency(0.0) + 200.0 + 100 / 1.6 + ns) * 2  # read + written
    return (40.0, gbs, 1e9, 1.0, 1.0)


def test_the_time_is_what_gives_the_probe_its_gb_s_and_only_blocks_over_rows_pay_it():
    p = params(row_probe=probe_at(60.0))
    assert model_bounds.rows_apart_ns(p) == pytest.approx(60.0, rel=1e-6)
    plain = params()
    assert model_bounds.bounds(p, copy(True))[model_bounds.LATENCY] == \
        pytest.approx(probe_at(60.0)[1], rel=1e-6)
    # a block loading 1 KiB in a row, a persistent grid: as without the probe
    for shape in (copy(False), copy(True, grid="persistent")):
        assert model_bounds.bounds(p, shape)[model_bounds.LATENCY] == \
            model_bounds.bounds(plain, shape)[model_bounds.LATENCY]
    # no probe: no time, the bound as before
    assert model_bounds.rows_apart_ns(plain) is None
    assert model_bounds.bounds(plain, copy(True)) == model_bounds.bounds(plain, copy(False))


def test_a_probe_at_or_above_the_plain_bound_adds_nothing():
    assert model_bounds.rows_apart_ns(params(row_probe=probe_at(0.0))) == pytest.approx(0.0)
    assert model_bounds.rows_apart_ns(params(row_probe=probe_at(-50.0))) == 0.0


def test_the_matrix_rows_and_the_transposes_tiles_are_blocks_over_rows():
    def row(name: str, family: str, variant: str, **keys) -> pd.Series:
        return pd.Series({"name": name, "family": family, "variant": variant,
                          "model_dram_bytes": 1e9, "model_efficiency": 1.0,
                          "model_ld_sectors_per_req": 4.0, **keys})

    over_rows = [row("matrix/rows/w:1000/pad:0", "matrix", "rows", w="1000", pad="0"),
                 row("transpose/f32/copy/n:16384", "transpose", "f32", op="copy", n="16384"),
                 row("transpose/f32/best/n:16384", "transpose", "f32", op="best", n="16384")]
    in_a_row = [row("matrix/cols/w:1000/pad:0", "matrix", "cols", w="1000", pad="0"),
                row("transpose/f32/naive_rows/n:16384", "transpose", "f32", op="naive_rows",
                    n="16384"),
                row("copy/f32/ilp:1/grid:full", "copy", "f32", ilp="1", grid="full")]
    assert all(model_shapes.shape_of(r).rows_apart for r in over_rows)
    assert not any(model_shapes.shape_of(r).rows_apart for r in in_a_row)


def test_the_probe_is_read_from_its_row_with_its_counters():
    rows = pd.DataFrame([{"name": model_instructions.ROW_PROBE, "gbs": 2300.0,
                          "model_warp_instructions": 51.0, "model_dram_bytes": 4e9,
                          "model_efficiency": 1.0}])
    instructions, gbs, dram, efficiency, active = model_instructions.row_probe_from(rows)
    assert (instructions, gbs, dram, efficiency) == (51.0, 2300.0, 4e9, 1.0)
    assert active == pytest.approx(2000 / 2016)  # 63 warps along a row, the last in part
    assert model_instructions.row_probe_from(rows.assign(gbs=math.nan)) is None
    assert model_instructions.row_probe_from(rows.assign(name="matrix/rows/w:1000/pad:0")) is None
