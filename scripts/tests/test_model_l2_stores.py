"""The `SM to L2` bound (`model_bounds`): lone stores reach the L2 one line each, at the rate of
the calibration's column walk (`l2_stores_per_ns`), else 128 B of the L2's read rate each."""

import pandas as pd
import pytest

from test_model import params

from gmbtools.analysis import model_bounds, model_params
from gmbtools.analysis.model_bounds import Shape

PROBE = model_params.SOURCES["l2_stores_per_ns"]
COLUMN_COPY = Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=1e9,
                    efficiency=1.0, read_step=4000.0, write_step=4000.0)


def test_lone_stores_run_at_the_probes_rate_else_at_a_line_of_the_l2s_each():
    # 70 stores per ns, each with 8 B counted (4 read, 4 written): 560 GB/s
    assert model_bounds.bounds(params(l2_gbs=9600.0, l2_stores_per_ns=70.0), COLUMN_COPY)[
        model_bounds.L2_STORES] == pytest.approx(560.0)
    assert model_bounds.bounds(params(l2_gbs=9600.0), COLUMN_COPY)[
        model_bounds.L2_STORES] == pytest.approx(9600.0 / 128 * 8)
    # stores 4 B apart share their lines: no such bound
    coalesced = Shape(**{**vars(COLUMN_COPY), "write_step": 4.0})
    assert model_bounds.L2_STORES not in model_bounds.bounds(
        params(l2_stores_per_ns=70.0), coalesced)


def test_the_rate_is_the_probes_gb_s_over_its_eight_bytes_per_store():
    rows = pd.DataFrame([{"name": PROBE, "family": "model", "variant": "matrix", "gbs": 560.0,
                          "error": "None"}])
    p = model_params.params_from(rows)
    assert p.l2_stores_per_ns == pytest.approx(70.0)
    assert p.sources["l2_stores_per_ns"] == PROBE
    assert model_params.params_from(rows.iloc[:0]).l2_stores_per_ns is None
