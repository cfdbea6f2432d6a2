"""The tiled transposes (`model_tiles`): DRAM's rate for tiles written to their transposed
places, a 32 x 32 block's slot solved from the moved probe, the exchange's time from the
no-load probes, an unpadded tile's bank conflicts queued behind the SM's other block's.
Checked on cases whose answer is known by hand; which rungs are which."""

import pandas as pd
import pytest

from test_model import params

from gmbtools.analysis import model_bounds, model_params, model_shapes, model_tiles
from gmbtools.analysis.model_bounds import Shape

# 100 SMs of 2048 threads (two 32 x 32 blocks each), each block's probe writing 4 KiB
ROUND_BYTES = 4096 * 2 * 100


def moved_probe(slot_ns: float) -> float:
    """The 32 x 32 moved probe's GB/s with blocks `slot_ns` in their slots: Little's law by hand
    on the flat 400-ns curve, 4 B in flight per thread: a round of the latency, the slot and the
    start wait (100 SMs / 1.6 blocks per ns), read + written."""
    return ROUND_BYTES / (400.0 + slot_ns + 100 / 1.6) * 2


def tiles(**values) -> model_tiles.TileProbes:
    base = dict(moved_gbs=None, big_moved_gbs=moved_probe(700.0), exchange_ns=100.0)
    return model_tiles.TileProbes(**{**base, **values})


def test_the_probes_give_the_exchange_as_its_round_less_the_stores_round():
    gbs = {model_tiles.STORES: ROUND_BYTES / 1000.0, model_tiles.EXCHANGE: ROUND_BYTES / 1100.0,
           model_tiles.MOVED: 3500.0}
    found = model_tiles.probes_from(gbs.get, 100, 2048)
    assert found.moved_gbs == 3500.0 and found.big_moved_gbs is None
    assert found.exchange_ns == pytest.approx(100.0)
    # without the stores' probe no exchange; without any probe, nothing
    del gbs[model_tiles.STORES]
    assert model_tiles.probes_from(gbs.get, 100, 2048).exchange_ns is None
    assert model_tiles.probes_from({}.get, 100, 2048) is None


def test_a_padded_tiles_block_holds_its_slot_for_the_moved_tiles_and_its_exchange():
    p = params(tiles=tiles())
    assert model_bounds.tile_slot_ns(p, model_tiles.moved_shape(1)) == pytest.approx(800.0)
    bound = model_bounds.bounds(p, model_tiles.moved_shape(1))[model_bounds.LATENCY]
    assert bound == pytest.approx(moved_probe(800.0), rel=1e-6)
    # other kernels: no such slot; without the probes a tile's block gets no bound at all
    assert model_bounds.tile_slot_ns(p, model_tiles.moved_shape()) is None
    assert model_bounds.bounds(params(), model_tiles.moved_shape(1)) == {}


def test_an_unpadded_tile_waits_for_its_conflicts_and_the_other_blocks():
    # at 2 GHz a block's 32 x 31 extra wavefronts take 496 ns; two blocks per SM load the
    # shared memory busy = 2 x 496 / round, each waiting busy x 496 / (2 (1 - busy)) more
    assert model_tiles.conflict_ns(2.0, 1984.0, 2) == pytest.approx(496.0 + 0.5 * 496.0 / 1.0)
    assert model_tiles.conflict_ns(None, 1984.0, 2) is None
    p = params(tiles=tiles(), sm_clock_ghz=2.0)
    fixed = 400.0 + 700.0 + 100.0 + 100 / 1.6  # the padded tile's round
    lo, hi = fixed, 1e5  # the round that holds its own conflicts, by hand
    for _ in range(200):
        mid = (lo + hi) / 2
        busy = 2 * 496.0 / mid
        lo, hi = (mid, hi) if fixed + 496.0 + busy * 496.0 / (2 * (1 - busy)) > mid else (lo, mid)
    bound = model_bounds.bounds(p, model_tiles.moved_shape(0))[model_bounds.LATENCY]
    assert bound == pytest.approx(ROUND_BYTES / lo * 2, rel=1e-4)
    # no SM clock: no bound for the unpadded tile, the padded one's as before
    assert model_bounds.bounds(params(tiles=tiles()), model_tiles.moved_shape(0)) == {}


def test_a_probe_above_the_plain_bound_gives_no_slot_of_its_own():
    p = params(tiles=tiles(big_moved_gbs=moved_probe(-100.0)))
    assert model_bounds.tile_slot_ns(p, model_tiles.moved_shape(1)) == pytest.approx(100.0)


def test_tiles_written_to_their_transposed_places_get_dram_at_the_moved_probes_rate():
    copy = Shape(op="copy", load_bytes_per_thread=16.0, grid="full", dram_bytes=1e9,
                 efficiency=1.0, ld_sectors_per_req=4.0)
    moved = Shape(**{**copy.__dict__, "transposed_tiles": True})
    p = params(tiles=tiles(moved_gbs=2000.0))
    assert model_bounds.bounds(p, moved)[model_bounds.DRAM] == pytest.approx(2000.0)
    assert model_bounds.bounds(p, copy)[model_bounds.DRAM] == pytest.approx(2800.0)
    assert model_bounds.bounds(params(), moved)[model_bounds.DRAM] == pytest.approx(2800.0)


def rung(op: str, element: str = "f32") -> pd.Series:
    return pd.Series({"name": f"transpose/{element}/{op}/n:16384", "family": "transpose",
                      "variant": f"{element}/{op}", "type": element, "op": op, "n": "16384",
                      "model_dram_bytes": 2e9, "model_efficiency": 1.0,
                      "model_ld_sectors_per_req": 4.0})


@pytest.mark.parametrize("op, exchange, transposed", [
    ("tile", 0, True), ("tile_padded", 1, True), ("tile_rows8", None, True),
    ("tile_tma", None, True), ("copy", None, False), ("best", None, False)])
def test_which_rungs_are_which(op, exchange, transposed):
    shape = model_shapes.shape_of(rung(op))
    assert (shape.exchange, shape.transposed_tiles) == (exchange, transposed)
    assert shape.threads_per_block == (1024 if exchange is not None else 256)
    assert shape.dram_bytes == 2e9


def test_the_probes_move_f32_tiles_so_f64_rungs_keep_no_tile_terms():
    assert model_shapes.shape_of(rung("tile", "f64")) is None
    assert model_shapes.shape_of(rung("tile_padded", "f64")) is None
    assert not model_shapes.shape_of(rung("tile_rows8", "f64")).transposed_tiles


def test_the_run_reads_the_probes_by_name_and_an_exchange_below_its_stores_adds_nothing():
    rows = pd.DataFrame([{"name": name, "gbs": gbs, "family": "model", "variant": "x",
                          "error": "", "gpu_sms": 100, "gpu_cc": "9.0"}
                         for name, gbs in ((model_tiles.MOVED, 3500.0),
                                           (model_tiles.BIG_MOVED, 1600.0),
                                           (model_tiles.STORES, ROUND_BYTES / 1000.0),
                                           (model_tiles.EXCHANGE, ROUND_BYTES / 900.0))])
    found = model_params.params_from(rows).tiles
    assert (found.moved_gbs, found.big_moved_gbs, found.exchange_ns) == (3500.0, 1600.0, 0.0)


def test_a_probe_no_slot_reaches_gives_none():
    assert model_bounds.time_for(1000.0, lambda ns: 2000.0) is None  # never falls to it
    assert model_bounds.time_for(1000.0, lambda ns: float("nan")) is None
    assert model_bounds.time_for(None, lambda ns: 2000.0) is None
