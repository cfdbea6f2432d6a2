"""The SM's drain (`model_latency`): a persistent read of two or more loads per thread waits,
each round, for the bytes the SM's other warps hold in flight, taken in at a rate found from
one probe. Checked on cases whose answer is known by hand, and its sources on the committed
H200 run with and without the calibration's probe."""

import pytest

from test_model import FLAT, H200_PROBES, params

from gmbtools.analysis import frame, model_bounds, model_latency, model_params
from gmbtools.analysis.model_bounds import Shape
from gmbtools.data import results

PROBE = next(iter(model_latency.DRAIN_SOURCES))


def read(loads: int, grid: str = "persistent", threads: int | None = 1024,
         op: str = "read") -> Shape:
    return Shape(op=op, load_bytes_per_thread=4.0 * loads, grid=grid, dram_bytes=1e9,
                 efficiency=1.0, ld_sectors_per_req=4.0, resident_threads=threads)


def test_the_drain_is_the_rate_that_gives_the_probe_its_gb_s():
    p = params(round_ns=40.0)
    # Little's law by hand: 100 SMs x 1024 threads x 8 B in flight; a round of the flat
    # curve's latency, the warp's own 40 ns and (1024 - 32) x 8 B at 124 B per ns: 64 ns
    round_ns = FLAT.latency(0.0) + 40.0 + (1024 - 32) * 8 / 124.0
    gbs = 100 * 1024 * 8 / round_ns
    with_probe = params(round_ns=40.0, drain_probe=(4, 2, 1024, gbs))
    assert model_bounds.drain_bytes_per_ns(with_probe) == pytest.approx(124.0, rel=1e-6)
    assert model_bounds.bounds(with_probe, read(2))[model_bounds.LATENCY] == \
        pytest.approx(gbs, rel=1e-6)
    # more loads in flight, more to wait for: (1024 - 32) x 16 B of four loads per thread
    four = model_bounds.bounds(with_probe, read(4))[model_bounds.LATENCY]
    assert four == pytest.approx(
        100 * 1024 * 16 / (FLAT.latency(0.0) + 40.0 + (1024 - 32) * 16 / 124.0), rel=1e-6)
    # the probe faster than the model without a drain: no rate gives it, no term
    assert model_bounds.drain_bytes_per_ns(params(drain_probe=(4, 2, 1024, 1e6))) is None


@pytest.mark.parametrize("shape", [read(1), read(2, grid="full"), read(2, op="copy")],
                         ids=["one load", "full grid", "copy"])
def test_only_a_persistent_read_of_two_or_more_loads_waits_for_the_drain(shape):
    plain = params(round_ns=40.0)
    drained = params(round_ns=40.0, drain_probe=(4, 2, 1024, 1500.0))
    assert model_bounds.drain_bytes_per_ns(drained) is not None
    assert model_bounds.bounds(drained, shape)[model_bounds.LATENCY] == \
        model_bounds.bounds(plain, shape)[model_bounds.LATENCY]


def test_the_sources_come_in_order_and_each_family_is_left_out_in_its_turn():
    measured = {"read/f32/ilp:2/grid:persistent": 3700.0,
                "inflight/read/w:4/ilp:4/block:256/bpsm:2/grid:persistent": 2200.0}
    assert model_latency.drain_from(measured.get) == \
        ("read/f32/ilp:2/grid:persistent", (4, 2, None, 3700.0))
    assert model_latency.drain_from({**measured, PROBE: 2000.0}.get) == \
        (PROBE, (4, 2, 1024, 2000.0))
    assert model_latency.drain_from({}.get) is None
    h200 = frame.medians_frame([results.load(H200_PROBES)])
    whole = model_params.params_from(h200)
    assert whole.sources["drain_probe"] == PROBE
    no_probe = h200.loc[h200["family"] != "model"]
    assert model_params.params_from(no_probe).sources["drain_probe"] == \
        "read/f32/ilp:2/grid:persistent"
    without = model_params.params_from(no_probe, without="read")
    assert without.sources["drain_probe"].startswith("inflight/read/")
    for p in (whole, without):  # a rate of tens to hundreds of bytes per ns per SM
        assert 50 < model_bounds.drain_bytes_per_ns(p) < 500
    neither = model_params.params_from(no_probe.loc[no_probe["family"] != "inflight"],
                                       without="read")
    assert neither.drain_probe is None and "drain_probe" not in neither.sources


def test_a_thread_of_four_loads_drains_at_the_deep_probes_rate_and_between_log_linearly():
    def probe_gbs(loads: int, threads: int, rate: float) -> float:  # Little's law by hand
        bif = threads * 4 * loads
        return 100 * bif / (FLAT.latency(0.0) + 40.0 + (bif - 32 * 4 * loads) / rate)

    p = params(round_ns=40.0, drain_probe=(4, 2, 1024, probe_gbs(2, 1024, 180.0)),
               deep_drain_probe=(4, 4, 768, probe_gbs(4, 768, 120.0)))
    assert model_bounds.drain_bytes_per_ns(p) == pytest.approx(180.0, rel=1e-6)
    assert model_bounds.drain_bytes_per_ns(p, 1.0) == pytest.approx(180.0, rel=1e-6)
    assert model_bounds.drain_bytes_per_ns(p, 4.0) == pytest.approx(120.0, rel=1e-6)
    assert model_bounds.drain_bytes_per_ns(p, 8.0) == pytest.approx(120.0, rel=1e-6)
    # three loads: log2(3/2) of the way from 180 to 120, geometrically
    assert model_bounds.drain_bytes_per_ns(p, 3.0) == \
        pytest.approx(180.0 * (120.0 / 180.0) ** 0.5849625, rel=1e-6)
    assert model_bounds.bounds(p, read(4))[model_bounds.LATENCY] == \
        pytest.approx(100 * 1024 * 16 / (FLAT.latency(0.0) + 40.0 + (1024 - 32) * 16 / 120.0),
                      rel=1e-6)
    # without the deep probe, every read drains at the two loads' rate
    q = params(round_ns=40.0, drain_probe=p.drain_probe)
    assert model_bounds.drain_bytes_per_ns(q, 4.0) == pytest.approx(180.0, rel=1e-6)
    assert model_latency.drain_from({next(iter(model_latency.DEEP_DRAIN)): 900.0}.get,
                                    model_latency.DEEP_DRAIN)[1] == (4, 4, 768, 900.0)
