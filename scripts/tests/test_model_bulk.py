"""A bulk copy's turnaround in its block (analysis/model_bulk.py, Params.bulk_chunk_ns and
bulk_write_ns): its arithmetic, a read's and a write's line; on the committed H100 and H200 runs
(made before the calibration's bulk read existed) the turnaround of one bulk read whose stages
are more than the latency needs, predicting the family's other reads; and end to end on the
runs with the probes."""

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gmbtools.analysis import frame, model_bounds, model_bulk, model_params, model_shapes
from gmbtools.analysis.littles_law import LoadedCurve
from gmbtools.data import results

REPO = Path(__file__).resolve().parents[2]
RUNS = [REPO / "results" / "nvidia-h100-80gb-hbm3" / "20261127-043312-time",
        REPO / "results" / "nvidia-h200" / "20261127-044635-time"]
PROBE = model_params.SOURCES["bulk_chunk_ns"]


def bulk_row(size, stages, bpsm=1, op="read", warps=4):
    return pd.Series({"family": "bulk", "variant": op, "bytes": str(size), "stages": str(stages),
                      "bpsm": str(bpsm), "warps": str(warps)})


def test_the_turnaround_is_a_blocks_chunk_over_its_rate():
    # 100 SMs, one block each, 2048-B chunks at 1000 GB/s: one chunk per 204.8 ns a block
    assert model_bulk.bulk_chunk_ns(100, 1000.0, PROBE) == pytest.approx(204.8)
    assert model_bulk.bulk_chunk_ns(100, None, PROBE) is None
    assert model_bulk.bulk_chunk_ns(None, 1000.0, PROBE) is None


def test_a_block_turns_one_chunk_around_at_a_time_and_each_stage_waits_for_it():
    curve = LoadedCurve(np.array([100.0, 4000.0]), np.array([500.0, 500.0]))  # a flat 500 ns
    p = model_params.Params(sms=100, read_curve=curve, read_gbs=3000.0, write_gbs=3000.0,
                            copy_gbs=3000.0, bulk_chunk_ns=250.0, round_ns=40.0)
    # enough stages: one chunk per turnaround, each block
    gbs, bound = model_bounds.predict(p, model_shapes.shape_of(bulk_row(1024, 8)))
    assert (gbs, bound) == (pytest.approx(100 * 1024 / 250), model_bounds.TURNAROUND)
    # one stage: the copy's latency and the turnaround, no persistent warp's round
    gbs, bound = model_bounds.predict(p, model_shapes.shape_of(bulk_row(1024, 1)))
    assert bound == model_bounds.LATENCY
    assert gbs == pytest.approx(100 * 1024 / (500 + 250), rel=0.02)
    # a copy counts its bytes twice
    gbs, _ = model_bounds.predict(p, model_shapes.shape_of(bulk_row(1024, 8, op="copy")))
    assert gbs == pytest.approx(2 * 100 * 1024 / 250)


def test_a_chunk_a_warp_checks_for_longer_than_the_turnaround_holds_the_block_that_long():
    # one at a time: 1,000 ns for 1 KiB, 3,048 ns for 21 KiB: 0.1 ns per byte
    line = {1024.0: 1000.0, 21504.0: 3048.0}
    assert model_bulk.turnaround_ns(250.0, line, 1024.0) == 250.0  # 102 ns of checking: hidden
    assert model_bulk.turnaround_ns(250.0, line, 32768.0) == pytest.approx(3276.8)
    assert model_bulk.turnaround_ns(250.0, None, 32768.0) == 250.0
    assert model_bulk.turnaround_ns(None, line, 32768.0) is None
    curve = LoadedCurve(np.array([100.0, 4000.0]), np.array([500.0, 500.0]))
    p = model_params.Params(sms=100, read_curve=curve, read_gbs=30000.0, write_gbs=30000.0,
                            copy_gbs=30000.0, bulk_chunk_ns=250.0, round_ns=40.0,
                            bulk_latency=line)
    # one warp checks a 32-KiB chunk: the block turns one around per 3,276.8 ns; four warps a
    # quarter each: 819.2 ns; a copy checks nothing: the turnaround
    for warps, ns in ((1, 3276.8), (4, 819.2)):
        gbs, bound = model_bounds.predict(p, model_shapes.shape_of(bulk_row(32768, 8, warps=warps)))
        assert (gbs, bound) == (pytest.approx(100 * 32768 / ns), model_bounds.TURNAROUND)
    gbs, _ = model_bounds.predict(p, model_shapes.shape_of(bulk_row(32768, 8, op="copy")))
    assert gbs == pytest.approx(2 * 100 * 32768 / 250)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.parent.name)
def test_one_reads_turnaround_predicts_the_other_small_bulk_reads_within_5_percent(run):
    if not run.is_dir():
        pytest.skip("no results/ here")
    medians = frame.readable_medians(run, results.load_folder(run))
    rows = medians.loc[medians["flavor"] == "default"]
    p = model_params.params_from(rows, without="bulk")
    stand_in = "bulk/read/bytes:1024/stages:4/bpsm:1/warps:4"  # in place of the probe
    turnaround = model_bulk.bulk_chunk_ns(
        p.sms, float(rows.loc[rows["name"] == stand_in, "gbs"].iloc[0]), stand_in)
    assert 200 < turnaround < 260  # ns: about 460 SM cycles
    p = dataclasses.replace(p, bulk_chunk_ns=turnaround)
    for name in ("bulk/read/bytes:4096/stages:4/bpsm:1/warps:4",
                 "bulk/read/bytes:1024/stages:4/bpsm:1/warps:1",
                 "bulk/read/bytes:1024/stages:4/bpsm:4/warps:1"):
        row = rows.loc[rows["name"] == name].iloc[0]
        gbs, bound = model_bounds.predict(p, model_shapes.shape_of(row))
        assert bound == model_bounds.TURNAROUND
        assert row["gbs"] / gbs == pytest.approx(1.0, abs=0.05), name


def test_a_default_run_with_the_probe_predicts_the_small_four_stage_reads_within_5_percent():
    """End to end on an H100 run that measured the probe (results/.../20261128-074929)."""
    run = REPO / "results" / "nvidia-h100-80gb-hbm3" / "20261128-074929"
    if not run.is_dir():
        pytest.skip("no results/ here")
    medians = frame.readable_medians(run, results.load_folder(run))
    rows = medians.loc[medians["flavor"] == "default"].set_index("name")
    assert model_params.params_from(rows.reset_index()).sources["bulk_chunk_ns"] == PROBE
    for name in ("bulk/read/bytes:1024/stages:4/bpsm:1/warps:4",
                 "bulk/read/bytes:4096/stages:4/bpsm:1/warps:4",
                 "bulk/read/bytes:1024/stages:4/bpsm:1/warps:1",
                 "bulk/read/bytes:1024/stages:4/bpsm:4/warps:1",
                 "bulk/read/bytes:32768/stages:4/bpsm:1/warps:1"):  # one warp checks 32 KiB
        assert rows.loc[name, "model_bound"] == model_bounds.TURNAROUND, name
        assert abs(rows.loc[name, "gbs"] / rows.loc[name, "model_gbs"] - 1) <= 0.05, name


def test_a_writes_turnaround_is_the_write_probes_line_at_the_bytes_its_warp_fills():
    # probes: 240 ns at 2 KiB, 360 ns at 8 KiB: 200 ns fixed, 0.01953125 ns per byte
    line = {2048.0: 240.0, 8192.0: 360.0}
    assert model_bulk.write_turnaround_ns(line, 4096.0) == pytest.approx(280.0)
    assert model_bulk.write_turnaround_ns(line, 32768.0) == pytest.approx(840.0)
    assert model_bulk.write_turnaround_ns(line, 512.0) == pytest.approx(210.0)
    assert model_bulk.write_turnaround_ns({2048.0: 400.0, 8192.0: 100.0}, 32768.0) == 0.0
    assert model_bulk.write_turnaround_ns(None, 4096.0) is None
    curve = LoadedCurve(np.array([100.0, 4000.0]), np.array([500.0, 500.0]))
    p = model_params.Params(sms=100, read_curve=curve, read_gbs=30000.0, write_gbs=30000.0,
                            copy_gbs=30000.0, bulk_chunk_ns=250.0, round_ns=40.0)
    write = model_shapes.shape_of(bulk_row(4096, 4, op="write"))
    # without the write probes a write takes the read's turnaround; with them, its own line
    assert model_bounds.predict(p, write) == (pytest.approx(100 * 4096 / 250),
                                              model_bounds.TURNAROUND)
    p = dataclasses.replace(p, bulk_write_ns=line)
    assert model_bounds.predict(p, write) == (pytest.approx(100 * 4096 / 280),
                                              model_bounds.TURNAROUND)
    # blocks per SM turn their chunks around each on its own; reads keep the read's turnaround
    two = model_shapes.shape_of(bulk_row(4096, 4, bpsm=2, op="write"))
    assert model_bounds.predict(p, two)[0] == pytest.approx(2 * 100 * 4096 / 280)
    read = model_shapes.shape_of(bulk_row(1024, 8))
    assert model_bounds.predict(p, read)[0] == pytest.approx(100 * 1024 / 250)


def test_a_default_run_with_the_write_probes_predicts_the_small_write_within_5_percent():
    """End to end on the H200 run that measured them (results/nvidia-h200/20261128-134734)."""
    run = REPO / "results" / "nvidia-h200" / "20261128-134734"
    if not run.is_dir():
        pytest.skip("no results/ here")
    medians = frame.readable_medians(run, results.load_folder(run))
    rows = medians.loc[medians["flavor"] == "default"]
    p = model_params.params_from(rows)
    assert p.sources["bulk_write_ns"] == model_bulk.WRITE_PROBES + "*"
    assert sorted(p.bulk_write_ns) == [2048.0, 8192.0]
    assert p.bulk_write_ns[2048.0] > p.bulk_chunk_ns  # a write turns around more slowly
    # the probes are the calibration's: the bulk family left out keeps them
    assert model_params.params_from(rows, without="bulk").bulk_write_ns == p.bulk_write_ns
    row = rows.set_index("name").loc["bulk/write/bytes:4096/stages:4/bpsm:1"]
    assert row["model_bound"] == model_bounds.TURNAROUND
    assert abs(row["gbs"] / row["model_gbs"] - 1) <= 0.05
