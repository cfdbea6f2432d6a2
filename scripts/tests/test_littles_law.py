"""The Little's-law model of the inflight family, on frames whose answer is known by hand."""

import math

import numpy as np
import pandas as pd
import pytest

from gmbtools.analysis import littles_law
from gmbtools.analysis.littles_law import LoadedCurve

FLAT = LoadedCurve(np.array([0.0, 4000.0]), np.array([400.0, 400.0]))
RISING = LoadedCurve(np.array([0.0, 2000.0, 4000.0]), np.array([300.0, 400.0, 800.0]))


def test_a_flat_latency_gives_plain_littles_law():
    # 100 SMs x 4096 B / 400 ns = 1024 B/ns = 1024 GB/s
    assert littles_law.solve(4096, 100, 5000, FLAT) == pytest.approx(1024, rel=1e-9)
    # twice the bytes, twice the bandwidth; a copy moves twice what it reads
    assert littles_law.solve(8192, 100, 5000, FLAT) == pytest.approx(2048, rel=1e-9)
    assert littles_law.solve(4096, 100, 5000, FLAT, factor=2) == pytest.approx(2048, rel=1e-9)
    # extra time per round: 100 x 4096 / 500
    assert littles_law.solve(4096, 100, 5000, FLAT, extra_ns=100) == pytest.approx(819.2)


def test_the_peak_and_a_cap_bound_the_prediction():
    assert littles_law.solve(1 << 20, 100, 3000, FLAT) == 3000
    assert littles_law.solve(4096, 100, 5000, FLAT, cap_gbs=500) == pytest.approx(500)


def test_a_rising_latency_is_solved_at_its_fixed_point():
    b = littles_law.solve(16384, 132, 5000, RISING)
    assert b == pytest.approx(132 * 16384 / RISING.latency(b), rel=1e-6)
    assert 2000 < b < 4000  # where the latency is between 400 and 800 ns
    # more bytes in flight: more bandwidth, never past the peak
    assert littles_law.solve(32768, 132, 5000, RISING) > b


def test_the_curve_interpolates_and_stays_flat_beyond_its_points():
    assert RISING.latency(1000) == pytest.approx(350)
    assert RISING.latency(9000) == 800
    assert RISING.idle_ns == 300


def row(name, **values):
    parts = name.split("/")
    params = dict(p.split(":") for p in parts[2:])
    numeric = {k: (int(v) if v.isdigit() else v) for k, v in params.items()}
    return {"name": name, "family": parts[0], "variant": parts[1], "file": "default.json",
            "gpu_sms": 100, "gpu_peak_gbs": 5000.0, **numeric, **values}


def frame(rows):
    return pd.DataFrame(rows)


LOADED = [
    row("latency/loaded/load:read/sms:0", latency_ns=400.0, load_gbs=0.0, gbs=0.0),
    row("latency/loaded/load:read/sms:99", latency_ns=400.0, load_gbs=4000.0, gbs=0.0),
    row("latency/loaded/load:copy/sms:0", latency_ns=500.0, load_gbs=0.0, gbs=0.0),
    row("latency/loaded/load:copy/sms:99", latency_ns=500.0, load_gbs=4000.0, gbs=0.0),
]


def test_model_gbs_of_persistent_reads_adds_one_warps_own_round():
    rows = LOADED + [
        # one warp per SM: 128 B per round at 100 SMs -> 25.6 GB/s is a 500-ns round,
        # 100 ns beyond the 400-ns chase
        row("inflight/read/w:4/ilp:1/block:32/bpsm:1/grid:persistent",
            bytes_in_flight_per_sm=128.0, gbs=25.6),
        row("inflight/read/w:4/ilp:1/block:256/bpsm:8/grid:persistent",
            bytes_in_flight_per_sm=8192.0, gbs=1500.0),
        row("inflight/read/w:16/ilp:1/block:256/bpsm:2/grid:persistent",
            bytes_in_flight_per_sm=8192.0, gbs=1500.0),  # no one-warp case: plain Little
    ]
    model = littles_law.model_gbs(frame(rows))
    assert model.iloc[4] == pytest.approx(25.6)  # the calibration case predicts itself
    assert model.iloc[5] == pytest.approx(100 * 8192 / 500)
    assert model.iloc[6] == pytest.approx(100 * 8192 / 400)
    assert model.iloc[:4].isna().all()  # latency rows get no model


def test_model_gbs_of_one_block_per_tile_adds_the_slot_and_the_launch_rate():
    rows = LOADED + [
        row("inflight/blocks/block:256/bpsm:1", block_slot_ns=200.0, blocks_per_us=600.0),
        row("inflight/blocks/block:256/bpsm:8", block_slot_ns=600.0, blocks_per_us=1500.0),
        row("inflight/read/w:4/ilp:1/block:256/bpsm:1/grid:full",
            bytes_in_flight_per_sm=1024.0, gbs=100.0),
        row("inflight/read/w:4/ilp:1/block:256/bpsm:8/grid:full",
            bytes_in_flight_per_sm=8192.0, gbs=1000.0),
    ]
    model = littles_law.model_gbs(frame(rows))
    # one block per SM: 100 x 1024 B per (400 + 200) ns
    assert model.iloc[6] == pytest.approx(100 * 1024 / 600)
    # eight: min(Little: 100 x 8192 / 600 = 1365.3, launch rate: 1500/us x 1 KiB = 1536)
    assert model.iloc[7] == pytest.approx(100 * 8192 / 600)
    capped = littles_law.model_gbs(frame(rows[:5] + [
        row("inflight/blocks/block:256/bpsm:8", block_slot_ns=600.0, blocks_per_us=1000.0),
        rows[7]]))
    assert capped.iloc[6] == pytest.approx(1000e6 * 1024 / 1e9)  # the launch rate binds


def test_model_gbs_of_copies_uses_the_copy_curve_and_counts_both_directions():
    rows = LOADED + [row("inflight/copy/w:4/ilp:1/block:256/bpsm:2/grid:persistent",
                         bytes_in_flight_per_sm=2048.0, gbs=500.0)]
    model = littles_law.model_gbs(frame(rows))
    assert model.iloc[4] == pytest.approx(2 * 100 * 2048 / 500)


def test_no_loaded_curve_no_model():
    rows = [row("inflight/read/w:4/ilp:1/block:256/bpsm:8/grid:persistent",
                bytes_in_flight_per_sm=8192.0, gbs=1500.0, latency_ns=math.nan,
                load_gbs=math.nan, load=None)]
    assert littles_law.model_gbs(frame(rows)).isna().all()
    assert littles_law.model_gbs(pd.DataFrame()).empty


CHASE_NS = {"read": 400.0, "copy": 500.0}  # LOADED's flat curves


def inflight_row(op, block, bpsm, w=4, ilp=1, drain=50.0, e1=100.0):
    """A persistent case whose round is the chase + e1 + the other warps' bytes at `drain`
    B/ns (a copy's gbs counts both directions)."""
    bif = block * bpsm * ilp * w
    others = bif - 32 * ilp * w
    round_ns = CHASE_NS[op] + e1 + others / drain
    factor = 2 if op == "copy" else 1
    return row(f"inflight/{op}/w:{w}/ilp:{ilp}/block:{block}/bpsm:{bpsm}/grid:persistent",
               bytes_in_flight_per_sm=float(bif), gbs=factor * 100 * bif / round_ns)


@pytest.mark.parametrize("op", ["read", "copy"])
def test_enough_few_warp_cases_fit_the_drain_and_predict_many_warps(op):
    few = [inflight_row(op, b, k, w, ilp) for b, k in ((64, 1), (128, 1), (32, 2), (64, 2), (32, 4))
           for w, ilp in ((4, 1), (16, 2))]  # 2 to 4 warps per SM, 10 cases
    many = inflight_row(op, 256, 4)  # 32 warps, 4 KiB in flight: 3,968 B behind any one warp
    ones = [inflight_row(op, 32, 1), inflight_row(op, 32, 1, 16, 2)]
    cases = frame(LOADED + ones + few + [many])
    model = littles_law.model_gbs(cases)
    assert model.iloc[-1] == pytest.approx(many["gbs"], rel=1e-6)
    assert model.iloc[4:].to_numpy() == pytest.approx(cases["gbs"].iloc[4:].to_numpy(), rel=1e-6)
    # with too few calibration cases there is no drain term: plain rounds, faster
    sparse = littles_law.model_gbs(frame(LOADED + ones[:1] + few[:3] + [many]))
    factor = 2 if op == "copy" else 1
    assert sparse.iloc[-1] == pytest.approx(factor * 100 * 4096 / (CHASE_NS[op] + 100))


def test_a_round_that_does_not_grow_with_other_warps_fits_no_drain():
    ones = [inflight_row("read", 32, 1)]
    flat = [inflight_row("read", b, k, drain=math.inf) for b, k in
            ((64, 1), (128, 1), (32, 2), (64, 2), (32, 4), (96, 1), (32, 3), (128, 1))]
    model = littles_law.model_gbs(frame(LOADED + ones + flat))
    assert model.iloc[5:].to_numpy() == pytest.approx(frame(flat)["gbs"].to_numpy(), rel=1e-6)


def test_a_curve_is_sorted_by_bandwidth_and_its_latency_never_falls():
    # near saturation a point of more streams can read a shorter latency at more bandwidth
    curve = littles_law.curve_of([3000, 1000, 3100, 2000], [900, 350, 880, 400])
    assert list(curve.gbs) == [1000, 2000, 3000, 3100]
    assert list(curve.ns) == [350, 400, 900, 900]
