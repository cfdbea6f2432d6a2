"""Managed pages that migrate (`model_managed`): each migration's time is a line through the
calibration's two sizes, read at the benchmark's own size; the pages left on the GPU keep
device memory's model. Checked on cases whose answer is known by hand."""

import pandas as pd
import pytest

from test_model import params

from gmbtools.analysis import model_managed, model_params, model_predict

MIB = 1 << 20


def probe(where: str, size: int, ns: float) -> dict:
    return {"name": f"{model_managed.PROBES}{where}/bytes:{size}", "gbs": size / ns,
            "family": "model", "variant": "managed/read", "error": "None"}


def benchmark(where: str, size: float = 64 * MIB) -> pd.Series:
    return pd.Series({"name": f"managed/read/{where}", "family": "managed", "variant": "read",
                      "model_dram_bytes": size, "gbs": 1.0})


# a prefetch of 200 us plus 20 us per MiB; faults of 1 ms plus 100 us per MiB
PROBES = pd.DataFrame([probe("prefetch:gpu", 32 * MIB, 200e3 + 32 * 20e3),
                       probe("prefetch:gpu", 128 * MIB, 200e3 + 128 * 20e3),
                       probe("pages:host", 32 * MIB, 1e6 + 32 * 100e3),
                       probe("pages:host", 128 * MIB, 1e6 + 128 * 100e3)])


def test_each_migration_is_a_line_through_its_two_probes():
    lines = model_managed.lines_from(PROBES)
    assert set(lines) == {"prefetch:gpu", "pages:host"}
    gbs, bound = model_managed.managed_gbs(lines, benchmark("prefetch:gpu"))
    assert gbs == pytest.approx(64 * MIB / (200e3 + 64 * 20e3))
    assert bound == model_managed.MIGRATION
    gbs, bound = model_managed.managed_gbs(lines, benchmark("pages:host", 16 * MIB))
    assert gbs == pytest.approx(16 * MIB / (1e6 + 16 * 100e3))
    assert bound == model_managed.FAULTS


def test_a_migration_without_its_two_probes_has_no_prediction():
    lines = model_managed.lines_from(PROBES.iloc[[0, 2, 3]])  # one prefetch probe left
    assert set(lines) == {"pages:host"}
    assert model_managed.managed_gbs(lines, benchmark("prefetch:gpu")) is None
    assert model_managed.managed_gbs(lines, benchmark("advice:read_mostly")) is None
    assert model_managed.lines_from(PROBES.iloc[:0]) is None


def test_migrating_reads_never_take_device_memorys_rate():
    # without the probes the migrating read has no prediction, though its traffic is counted;
    # the pages left on the GPU are device memory's read
    assert model_predict.predict_row(params(), benchmark("pages:host")) == (None, None)
    lines = model_managed.lines_from(PROBES)
    gbs, bound = model_predict.predict_row(params(migrations=lines), benchmark("pages:host"))
    assert bound == model_managed.FAULTS and gbs == pytest.approx(64 * MIB / 7.4e6)
    assert not model_managed.migrates(benchmark("touch:gpu"))


def test_the_run_reads_the_probes_by_name():
    rows = PROBES.assign(error="None")
    p = model_params.params_from(rows)
    assert p.sources["migrations"] == model_managed.PROBES + "*"
    assert set(p.migrations) == {"prefetch:gpu", "pages:host"}
