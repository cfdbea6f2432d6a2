"""A warp's round and a block's slot beyond the loaded latency (model_rounds): cp.async's
staging from the calibration's pair of persistent reads, the slot of 1,024-thread blocks from
the calibration's full grid of them, each on numbers whose answer is known by hand."""

import pandas as pd
import pytest

from gmbtools.analysis import model_bounds, model_params, model_rounds
from gmbtools.analysis.model_bounds import Shape

SMS, LATENCY, START = 100, 400.0, 62.5  # SMs; the flat loaded chase; sms / block rate (1.6 / ns)


def _row(name: str, gbs: float, **more) -> dict:
    family, variant = name.split("/")[:2]
    return {"name": name, "family": family, "variant": variant, "gbs": gbs, "error": "None",
            "gpu_sms": SMS, "gpu_cc": 9.0, **more}


def _rows(*extra: dict) -> pd.DataFrame:
    rows = [_row(f"model/loaded/load:read/sms:{k}", 1.0, load="read", load_gbs=g,
                 latency_ns=LATENCY) for k, g in ((8, 500.0), (24, 1500.0), (128, 4000.0))]
    rows.append(_row("write/f32/ilp:1/grid:full", 1.6 * 1024))  # 1 KiB blocks: 1.6 per ns
    # 2,048 threads of one 4-B load per SM, a block per tile: a round of the latency, the
    # start and a slot of 150 ns
    rows.append(_row("read/f32/ilp:1/grid:full", 2048 * 4 * SMS / (LATENCY + START + 150.0)))
    return pd.DataFrame(rows + list(extra))


def _round_gbs(bytes_per_sm: float, round_ns: float) -> float:
    return bytes_per_sm * SMS / round_ns


def test_cp_async_adds_its_staging_to_a_persistent_warps_round():
    staged, plain = model_rounds.GRID_PAIR
    p = model_params.params_from(_rows(_row(staged, _round_gbs(6144, 520.0)),
                                       _row(plain, _round_gbs(6144, 500.0))))
    assert p.async_ns == pytest.approx(20.0)
    assert p.sources["async_ns"] == staged
    # 2,048 threads of one 4-B load each: 8 KiB per SM, one line a warp, a round of 400 ns
    # loaded plus the staging
    read = Shape(op="read", load_bytes_per_thread=4.0, grid="persistent", dram_bytes=1.0,
                 efficiency=1.0, ld_sectors_per_req=4.0, resident_threads=2048)
    p.round_ns = 0.0
    plain_gbs = model_bounds.bounds(p, read)[model_bounds.LATENCY]
    assert plain_gbs == pytest.approx(SMS * 8192 / LATENCY, rel=1e-6)
    staged_shape = Shape(**{**vars(read), "staged": True})
    assert model_bounds.bounds(p, staged_shape)[model_bounds.LATENCY] == \
        pytest.approx(SMS * 8192 / (LATENCY + 20.0), rel=1e-6)
    # without the pair: no staging term
    q = model_params.params_from(_rows())
    assert q.async_ns is None


def test_a_block_holds_its_slot_on_the_line_between_the_small_and_the_large_blocks():
    big = _row(model_rounds.BIG_SLOT, _round_gbs(1024 * 4, LATENCY + START + 300.0))
    p = model_params.params_from(_rows(big))
    assert p.load_slot_ns == pytest.approx(150.0)
    assert p.big_slot_ns == pytest.approx(300.0)
    assert model_rounds.load_slot(p, 128) == pytest.approx(150.0)
    assert model_rounds.load_slot(p, 256) == pytest.approx(150.0)
    assert model_rounds.load_slot(p, 512) == pytest.approx(200.0)
    assert model_rounds.load_slot(p, 1024) == pytest.approx(300.0)
    # without the large blocks' probe every block holds the 256-thread blocks' slot
    q = model_params.params_from(_rows())
    assert q.big_slot_ns is None and model_rounds.load_slot(q, 1024) == pytest.approx(150.0)
    # a full grid of 1,024-thread blocks, two per SM: a round of the latency, the start and
    # the large blocks' slot
    read = Shape(op="read", load_bytes_per_thread=4.0, grid="full", dram_bytes=1.0,
                 efficiency=1.0, threads_per_block=1024, ld_sectors_per_req=4.0,
                 resident_threads=2048)
    for params, slot in ((p, 300.0), (q, 150.0)):
        assert model_bounds.bounds(params, read)[model_bounds.LATENCY] == \
            pytest.approx(SMS * 8192 / (LATENCY + START + slot), rel=1e-6)


def test_a_persistent_warps_round_is_on_the_line_of_its_sms_bytes_in_flight():
    _, plain = model_rounds.GRID_PAIR
    # the calibration's grid of 6 KiB per SM: 60 ns beyond the latency
    p = model_params.params_from(_rows(_row(plain, _round_gbs(6144, LATENCY + 60.0))))
    assert p.grid_round_ns == pytest.approx(60.0)
    assert model_rounds.grid_round(p, 6144, 204.8) == pytest.approx(60.0)
    assert model_rounds.grid_round(p, 2048, 204.8) == pytest.approx(40.0)  # 4 KiB less
    assert model_rounds.grid_round(p, 8192, 204.8) == pytest.approx(70.0)
    assert model_rounds.grid_round(p, 0, 20.0) == 0.0  # never below 0
    assert model_rounds.grid_round(p, 2048, None) is None
    assert model_rounds.grid_round(model_params.params_from(_rows()), 2048, 200.0) is None


def test_the_grid_round_is_a_persistent_read_or_copy_of_one_load_per_thread():
    from gmbtools.analysis import model_latency
    one = Shape(op="read", load_bytes_per_thread=4.0, grid="persistent", dram_bytes=1.0,
                efficiency=1.0)
    assert model_latency.grid_round(one)
    assert model_latency.grid_round(Shape(**{**vars(one), "op": "copy"}))
    assert model_latency.grid_round(Shape(**{**vars(one), "load_bytes_per_thread": 16.0,
                                             "word_bytes": 16.0}))  # one 16-B load
    assert not model_latency.grid_round(Shape(**{**vars(one), "load_bytes_per_thread": 8.0}))
    assert not model_latency.grid_round(Shape(**{**vars(one), "grid": "full"}))
    assert not model_latency.grid_round(Shape(**{**vars(one), "op": "write"}))
