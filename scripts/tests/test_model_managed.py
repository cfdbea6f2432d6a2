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
    """A managed read as the run reports it: the read's traffic counted (so device memory's
    model would have a shape for it)."""
    return pd.Series({"name": f"managed/read/{where}", "family": "managed", "variant": "read",
                      "model_dram_bytes": size, "model_efficiency": 1.0,
                      "model_ld_sectors_per_req": 16.0, "grid": "full", "gbs": 1.0})


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
    # a probe that errored (no GB/s) is no point of the line
    broken = PROBES.astype({"gbs": object})
    broken.at[0, "gbs"] = None
    assert set(model_managed.lines_from(broken)) == {"pages:host"}


def test_a_line_that_gives_no_time_at_the_size_has_no_prediction():
    # the larger probe slower per byte than the smaller: the line through (32 MiB, 1 ms) and
    # (128 MiB, 8 ms) gives 1 - 31 x 7 / 96 ms < 0 at 1 MiB
    lines = {"pages:host": ((32 * MIB, 1e6), (128 * MIB, 8e6))}
    assert model_managed.managed_gbs(lines, benchmark("pages:host", 1 * MIB)) is None
    assert model_managed.managed_gbs(lines, benchmark("pages:host", float("nan"))) is None


def test_migrating_reads_never_take_device_memorys_rate():
    # without the probes the migrating read has no prediction, though its traffic is counted
    # (device memory's model has a shape for it); the pages left on the GPU are device
    # memory's read, bound by DRAM
    assert model_predict.predict_row(params(), benchmark("pages:host")) == (None, None)
    lines = model_managed.lines_from(PROBES)
    gbs, bound = model_predict.predict_row(params(migrations=lines), benchmark("pages:host"))
    assert bound == model_managed.FAULTS and gbs == pytest.approx(64 * MIB / 7.4e6)
    assert not model_managed.migrates(benchmark("touch:gpu"))
    _, bound = model_predict.predict_row(params(migrations=lines), benchmark("touch:gpu"))
    assert bound not in (model_managed.FAULTS, model_managed.MIGRATION, None)


def test_a_run_predicts_its_migrations_from_its_own_probes():
    # the probes (family model) reach the family's rows through the run's parameters
    rows = pd.concat([PROBES, pd.DataFrame([benchmark("prefetch:gpu")])], ignore_index=True)
    rows["file"], rows["error"] = "default.json", "None"
    out = model_predict.predictions(rows)
    assert out.at[len(PROBES), "model_gbs"] == pytest.approx(64 * MIB / (200e3 + 64 * 20e3))
    assert out.at[len(PROBES), "model_bound"] == model_managed.MIGRATION
    assert out.loc[:len(PROBES) - 1, "model_gbs"].isna().all()  # the probes themselves: none


def test_the_run_reads_the_probes_by_name():
    rows = PROBES.assign(error="None")
    p = model_params.params_from(rows)
    assert p.sources["migrations"] == model_managed.PROBES + "*"
    assert set(p.migrations) == {"prefetch:gpu", "pages:host"}
