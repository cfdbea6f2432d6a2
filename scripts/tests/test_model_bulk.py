"""A bulk copy's turnaround in its block (analysis/model_bulk.py, Params.bulk_chunk_ns): its
arithmetic, and on the committed H100 and H200 runs (made before the calibration's bulk read
existed) the turnaround taken from one bulk read's shape predicting the family's other reads."""

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


def test_the_turnaround_is_the_round_less_the_latency_over_the_chunks():
    curve = LoadedCurve(np.array([100.0, 4000.0]), np.array([500.0, 500.0]))  # a flat 500 ns
    p = model_params.Params(sms=100, read_curve=curve, round_ns=20.0)
    # 100 SMs x 2048 B x 8 stages at 1000 GB/s: a round of 1638.4 ns
    assert model_bulk.bulk_chunk_ns(p, 1000.0, PROBE) == pytest.approx((1638.4 - 520) / 8)
    assert model_bulk.bulk_chunk_ns(p, None, PROBE) is None
    assert model_bulk.bulk_chunk_ns(model_params.Params(sms=100), 1000.0, PROBE) is None


def test_the_turnaround_adds_one_per_chunk_a_block_handles_to_littles_law():
    curve = LoadedCurve(np.array([100.0, 4000.0]), np.array([500.0, 500.0]))
    p = model_params.Params(sms=100, read_curve=curve, read_gbs=3000.0, write_gbs=3000.0,
                            copy_gbs=3000.0, bulk_chunk_ns=100.0)
    row = pd.Series({"family": "bulk", "variant": "read", "bytes": "1024", "stages": "4",
                     "bpsm": "1", "warps": "4"})
    shape = model_shapes.shape_of(row)
    assert shape.chunks == 4
    gbs, bound = model_bounds.predict(p, shape)
    assert bound == model_bounds.LATENCY
    assert gbs == pytest.approx(100 * 4096 / (500 + 4 * 100), rel=0.02)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.parent.name)
def test_one_shapes_turnaround_predicts_the_other_bulk_reads_within_5_percent(run):
    if not run.is_dir():
        pytest.skip("no results/ here")
    medians = frame.readable_medians(run, results.load_folder(run))
    rows = medians.loc[medians["flavor"] == "default"]
    p = model_params.params_from(rows, without="bulk")
    stand_in = "bulk/read/bytes:1024/stages:4/bpsm:1/warps:4"  # in place of the probe
    turnaround = model_bulk.bulk_chunk_ns(
        p, float(rows.loc[rows["name"] == stand_in, "gbs"].iloc[0]), stand_in)
    assert 100 < turnaround < 200  # ns: about 260 SM cycles
    p = dataclasses.replace(p, bulk_chunk_ns=turnaround)
    for name in ("bulk/read/bytes:1024/stages:1/bpsm:1/warps:4",
                 "bulk/read/bytes:4096/stages:2/bpsm:1/warps:4",
                 "bulk/read/bytes:8192/stages:4/bpsm:1/warps:4",
                 "bulk/read/bytes:1024/stages:4/bpsm:1/warps:1",
                 "bulk/read/bytes:1024/stages:4/bpsm:4/warps:1"):
        row = rows.loc[rows["name"] == name].iloc[0]
        gbs, _ = model_bounds.predict(p, model_shapes.shape_of(row))
        assert row["gbs"] / gbs == pytest.approx(1.0, abs=0.05), name
