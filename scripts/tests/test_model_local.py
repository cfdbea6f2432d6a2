"""Local memory (`model_local`): a `local/` kernel is bounded by its warps' instructions at one
per scheduler per cycle, by its local stores at the rate the calibration's spilling kernel
moves them, and (the arrays, one pass of a chain) by the copy's latency with its instructions.
Checked on cases whose answer is known by hand, then on the H200's record."""

from pathlib import Path

import pandas as pd
import pytest

from test_model import params, record_family

from gmbtools.analysis import model_bounds, model_local, model_params

RECORD = Path(__file__).resolve().parents[2] / "results/nvidia-h200/20261202-022619"


def row(variant: str, instructions: float, lines: float | None, **extra) -> pd.Series:
    return pd.Series({"name": f"local/{variant}", "family": "local", "variant": variant,
                      "model_warp_instructions": instructions,
                      "model_local_store_lines": float("nan") if lines is None else lines,
                      "resident_blocks_per_sm": 8.0, **extra})


def no_copy(p, shape):
    return {}


def test_a_spill_is_bound_by_its_issue_or_its_local_stores():
    p = params(sms=100, cc=9.0, sm_clock_ghz=2.0, local_lines_per_ns=40.0)
    # 8 B per thread counted: 256 B per warp; 800 warps per ns issue 1,000 instructions each
    found = model_local.local_bounds(p, row("spill", 1000.0, 100.0), no_copy)
    assert found[model_local.ISSUE] == pytest.approx(100 * 4 * 2.0 / 1000 * 256)
    assert found[model_local.STORES] == pytest.approx(40.0 / 100 * 256)
    assert model_local.local_gbs(p, row("spill", 1000.0, 100.0), no_copy) == (
        pytest.approx(40.0 / 100 * 256), model_local.STORES)
    # nothing spilled: issue alone; no clock: no issue bound
    assert set(model_local.local_bounds(p, row("spill", 1000.0, None), no_copy)) == {
        model_local.ISSUE}
    assert model_local.local_gbs(params(sms=100, cc=9.0), row("spill", 1000.0, None),
                                 no_copy) is None
    assert model_local.STORES == model_bounds.L2_STORES
    assert model_local.LATENCY == model_bounds.LATENCY


def test_an_array_counts_its_words_and_takes_the_copys_latency_with_its_instructions():
    p = params(sms=100, cc=9.0, sm_clock_ghz=2.0)
    seen = []

    def copy_bounds(_, shape):
        seen.append(shape)
        return {model_bounds.LATENCY: 1000.0, model_bounds.DRAM: 5000.0}

    array = row("array", 440.0, 32.0, size="32")
    assert model_local.bytes_per_thread(array) == 8 + 4 * (32 + 64)
    found = model_local.local_bounds(p, array, copy_bounds)
    # the copy's GB/s of its 8 global bytes per thread, scaled to the bytes the array counts
    assert found[model_local.LATENCY] == pytest.approx(1000.0 * (8 + 4 * 96) / 8)
    assert seen[0].instructions == 440.0 and seen[0].resident_threads == 8 * 256
    assert model_local.STORES not in found  # no probe: no store bound


def test_the_probe_gives_lines_per_ns():
    probe = pd.DataFrame([{"name": model_local.PROBE, "gbs": 16.0,
                           "model_local_store_lines": 560.0}])
    # 16 GB/s of 256 B per warp: 1/16 warp per ns, 560 lines each
    assert model_local.store_rate_from(probe) == pytest.approx(16.0 / 256 * 560)
    assert model_local.store_rate_from(probe.drop(columns="model_local_store_lines")) is None
    assert model_local.store_rate_from(probe.assign(name="other")) is None


def test_the_record_predicts_every_local_benchmark_and_the_whole_constant_bank():
    m, local = record_family(RECORD, "local")
    assert len(local) == 6
    spill = local.loc["local/spill/live:64/regs:32"]
    assert spill["model_bound"] == model_bounds.L2_STORES and abs(spill["ratio"] - 1) <= 0.05
    assert local.loc["local/spill/live:64/regs:255", "model_bound"] == model_local.ISSUE
    bank = record_family(RECORD, "constant")[1].loc["constant/read/distinct:1/ws:65536/path:constant"]
    assert abs(bank["ratio"] - 1) <= 0.05
    # the store rate is the calibration's, the same with the family left out
    whole, without = model_params.params_from(m), model_params.params_from(m, without="local")
    assert whole.sources["local_lines_per_ns"] == model_local.PROBE
    assert without.local_lines_per_ns == pytest.approx(whole.local_lines_per_ns)
