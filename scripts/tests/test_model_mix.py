"""The mix and depth terms (model_mix): a mix of reads and writes pays the factor its probes
measured off the straight line between the read's, the copy's and the write's rates, and a
plain copy the factor of its depth; each on numbers whose answer is known by hand."""

import pandas as pd
import pytest

from test_model import params

from gmbtools.analysis import model_bounds, model_mix, model_params
from gmbtools.analysis.model_bounds import Shape


def _probes(p, mixes: dict, depths: dict) -> pd.DataFrame:
    """Probe rows: reads:K at `factor` times the straight line's time; copies of `bytes` per
    thread at `factor` times memcpy's."""
    rows = []
    for reads, factor in mixes.items():
        share = 1 / (reads + 1)
        rows.append({"name": f"{model_mix.MIX_PROBES}{reads}",
                     "gbs": 1 / (factor * p.dram_ns_per_byte(1 - share, share))})
    words = {64: "f32", 128: "f64", 256: "f32x4"}
    for depth, factor in depths.items():
        rows.append({"name": f"{model_mix.DEPTH_PROBES}{words[depth]}/ilp:16",
                     "gbs": p.copy_gbs / factor})
    return pd.DataFrame(rows)


def test_a_mix_pays_the_factor_its_probes_measured_between_them_and_none_at_the_ends():
    p = params()
    terms = model_mix.terms_from(_probes(p, {5: 1.06, 12: 1.02}, {}), p)
    assert terms.shares == pytest.approx((1 / 13, 1 / 6))
    assert terms.mix(1 / 6) == pytest.approx(1.06)
    assert terms.mix(1 / 13) == pytest.approx(1.02)
    assert terms.mix(0.0) == 1.0 and terms.mix(0.5) == 1.0 and terms.mix(0.8) == 1.0
    # halfway between 1/6 and 1/2 the factor is halfway to 1
    assert terms.mix((1 / 6 + 0.5) / 2) == pytest.approx(1.03)
    straight = p.dram_ns_per_byte(0.8, 0.2)
    q = model_params.Params(**{**vars(p), "mix": terms})
    assert q.dram_ns_per_byte(0.8, 0.2) == pytest.approx(straight * terms.mix(0.2))
    assert q.dram_ns_per_byte(1.0, 1.0) == pytest.approx(p.dram_ns_per_byte(1.0, 1.0))
    # a persistent grid streams at its own rates, with no factor
    assert q.dram_ns_per_byte(0.8, 0.2, persistent=True) == \
        pytest.approx(p.dram_ns_per_byte(0.8, 0.2, persistent=True))


def test_probes_to_two_outputs_give_their_write_share():
    p = params()
    rows = [{"name": f"{model_mix.MIX_PROBES}8/writes:2",  # 8 read, 2 written: 1/5
             "gbs": 1 / (1.05 * p.dram_ns_per_byte(0.8, 0.2))},
            {"name": f"{model_mix.MIX_PROBES}4/writes:2", "gbs": 1.0},  # 1/3: latency-bound
            {"name": f"{model_mix.MIX_PROBES}5/writes:x", "gbs": 1.0}]  # not a probe's name
    terms = model_mix.terms_from(pd.concat([_probes(p, {5: 1.0}, {}), pd.DataFrame(rows)]), p)
    assert terms.shares == pytest.approx((1 / 6, 1 / 5))
    assert terms.mix(1 / 5) == pytest.approx(1.05)
    assert terms.mix(0.35) == pytest.approx(1.025)  # halfway between 1/5 and 1/2


def test_a_plain_copy_pays_the_factor_of_its_depth_and_other_shapes_none():
    p = params()
    terms = model_mix.terms_from(_probes(p, {}, {64: 1.04, 256: 1.08}), p)
    assert terms.depth(16.0) == 1.0 and terms.depth(4.0) == 1.0
    assert terms.depth(64.0) == pytest.approx(1.04)
    assert terms.depth(32.0) == pytest.approx(1.02)  # halfway in log2 between 16 and 64 B
    assert terms.depth(128.0) == pytest.approx(1.06)
    assert terms.depth(1024.0) == pytest.approx(1.08)  # flat past the deepest
    q = model_params.Params(**{**vars(p), "mix": terms})
    deep = Shape(op="copy", load_bytes_per_thread=64.0, grid="full", dram_bytes=1e9,
                 efficiency=1.0, ld_sectors_per_req=4.0, spread_loads=True)
    assert model_bounds.bounds(q, deep)[model_bounds.DRAM] == pytest.approx(p.copy_gbs / 1.04)
    persistent = Shape(**{**vars(deep), "grid": "persistent"})  # its loads as far apart
    assert model_bounds.bounds(q, persistent)[model_bounds.DRAM] == \
        pytest.approx(model_bounds.bounds(p, persistent)[model_bounds.DRAM] / 1.04)
    # loads of one thread in one line (a structure's fields), a strided copy
    for other in ({"spread_loads": False}, {"read_step": 16.0, "spread_loads": False}):
        shape = Shape(**{**vars(deep), **other})
        assert model_bounds.bounds(q, shape)[model_bounds.DRAM] == \
            pytest.approx(model_bounds.bounds(p, shape)[model_bounds.DRAM])


def test_without_probes_or_rates_there_is_no_term():
    p = params()
    assert model_mix.terms_from(pd.DataFrame([{"name": "copy/f32/ilp:1/grid:full",
                                               "gbs": 1.0}]), p) is None
    assert model_mix.terms_from(_probes(p, {5: 1.1}, {}), params(copy_gbs=None)) is None


def _curve(ns: float, most: float):
    """A loaded curve flat at `ns` from 0 to `most` GB/s (a test's stand-in)."""
    import numpy as np
    from gmbtools.analysis.littles_law import LoadedCurve
    return LoadedCurve(np.array([0.0, most]), np.array([ns, ns]))


def test_a_mixs_latency_lies_between_the_two_measured_curves_nearest_its_write_share():
    from gmbtools.analysis import model_latency
    p = model_params.Params(read_curve=_curve(400.0, 4000.0), copy_curve=_curve(1000.0, 3000.0))
    fifth = Shape(op="copy", load_bytes_per_thread=16.0, grid="full", dram_bytes=5.0,
                  efficiency=1.0, store_bytes_per_thread=4.0)  # 4 read, 1 written: a fifth
    assert fifth.dram_split == pytest.approx((4.0, 1.0))
    # without the mix's curve: 2/5 of the way from the read's to the copy's
    assert model_latency.mixed_curve(p, fifth).latency(100.0) == pytest.approx(640.0)
    p.mix_curve = _curve(900.0, 3500.0)  # measured: the mix's own
    assert model_latency.mixed_curve(p, fifth) is p.mix_curve
    tenth = Shape(op="copy", load_bytes_per_thread=36.0, grid="full", dram_bytes=10.0,
                  efficiency=1.0, store_bytes_per_thread=4.0)  # 9 read, 1 written
    curve = model_latency.mixed_curve(p, tenth)  # halfway between the read's and the mix's
    assert curve.latency(100.0) == pytest.approx(650.0)
    assert curve.most_gbs == pytest.approx(3750.0)
    third = Shape(op="copy", load_bytes_per_thread=8.0, grid="full", dram_bytes=3.0,
                  efficiency=1.0, store_bytes_per_thread=4.0)  # 2 read, 1 written
    # a third: 4/9 of the way from the mix's (1/5) to the copy's (1/2)
    assert model_latency.mixed_curve(p, third).latency(100.0) == pytest.approx(900 + 100 * 4 / 9)


def test_the_mixs_curve_comes_from_its_probes_with_the_idle_chase_of_the_reads():
    rows = pd.DataFrame([
        {"name": "model/loaded/load:read/sms:0", "family": "model", "variant": "loaded",
         "load": "read", "load_gbs": 0.0, "latency_ns": 350.0, "gbs": 1.0, "error": "None"},
        {"name": "model/loaded/load:read/sms:8", "family": "model", "variant": "loaded",
         "load": "read", "load_gbs": 500.0, "latency_ns": 360.0, "gbs": 1.0, "error": "None"},
        {"name": "model/loaded/load:mix/sms:8", "family": "model", "variant": "loaded",
         "load": "mix", "load_gbs": 600.0, "latency_ns": 370.0, "gbs": 1.0, "error": "None"},
        {"name": "model/loaded/load:mix/sms:24", "family": "model", "variant": "loaded",
         "load": "mix", "load_gbs": 1700.0, "latency_ns": 390.0, "gbs": 1.0, "error": "None"},
    ])
    p = model_params.params_from(rows)
    assert list(p.mix_curve.gbs) == [0.0, 600.0, 1700.0]
    assert list(p.mix_curve.ns) == [350.0, 370.0, 390.0]
    assert p.sources["mix_curve"] == "model/loaded/load:mix/*"


def test_a_mix_mostly_read_gets_no_more_from_dram_than_one_arrays_streams_moved():
    # the deep probes' straight line gives 1/5 written 4,000 GB/s; the loaded chase's streams
    # (one array read, a fifth of its bytes written in place) moved at most 3,500
    p = params(read_gbs=4000.0, write_gbs=4000.0, copy_gbs=4000.0, read_curve=_curve(400.0, 3900.0),
               copy_curve=_curve(1000.0, 3000.0))
    fifth = Shape(op="copy", load_bytes_per_thread=16.0, grid="full", dram_bytes=5.0,
                  efficiency=1.0, store_bytes_per_thread=4.0)
    assert model_bounds.bounds(p, fifth)[model_bounds.DRAM] == pytest.approx(4000.0)
    assert model_bounds.read_mostly_gbs(p, fifth) is None  # without the mix's streams
    p.mix_curve = _curve(900.0, 3500.0)
    assert model_bounds.read_mostly_gbs(p, fifth) == pytest.approx(3500.0)
    assert model_bounds.bounds(p, fifth)[model_bounds.DRAM] == pytest.approx(3500.0)
    tenth = Shape(op="copy", load_bytes_per_thread=36.0, grid="full", dram_bytes=10.0,
                  efficiency=1.0, store_bytes_per_thread=4.0)  # halfway to the read's streams
    assert model_bounds.read_mostly_gbs(p, tenth) == pytest.approx(3700.0)
    third = Shape(op="copy", load_bytes_per_thread=8.0, grid="full", dram_bytes=3.0,
                  efficiency=1.0, store_bytes_per_thread=4.0)  # 4/9 of the way to memcpy's
    assert model_bounds.read_mostly_gbs(p, third) == pytest.approx(3500.0 + 500.0 * 4 / 9)
    even = Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=2.0,
                 efficiency=1.0)  # a copy: DRAM's rate for it is memcpy's, no cap
    assert model_bounds.read_mostly_gbs(p, even) is None
    read = Shape(op="read", load_bytes_per_thread=16.0, grid="full", dram_bytes=4.0,
                 efficiency=1.0)
    assert model_bounds.read_mostly_gbs(p, read) is None
