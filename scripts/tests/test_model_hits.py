"""Hits beside misses (model_hits): the probe's time per hit beyond its DRAM bound, a pattern's
hits from its DRAM bytes, charged only where its loads are translated."""

from pathlib import Path

import pandas as pd
import pytest

from gmbtools.analysis import model_bounds, model_hits, model_params, pattern_model

RUN = Path(__file__).resolve().parents[2] / "results" / "nvidia-h200" / "20261203-211017-pattern"


def test_the_probes_time_per_hit_is_its_time_past_its_dram_bound():
    logical = 2**24 * 8.0
    probe = (400.0, logical / 0.25, 0.25)
    # DRAM gives the probe's shape, hits free, 500 GB/s: 2^23 hits take the difference
    assert model_hits.hit_ns(probe, lambda s: 500.0) == \
        pytest.approx((logical / 400.0 - logical / 500.0) / 2**23)
    assert model_hits.hit_ns(probe, lambda s: 300.0) == 0.0  # never negative
    assert model_hits.hit_ns(None, lambda s: 500.0) is None
    assert model_hits.hit_ns(probe, lambda s: None) is None
    # the bound it is measured against is the shape without hits
    seen = []
    model_hits.hit_ns(probe, lambda s: seen.append(s) or 500.0)
    assert seen[0].hits_per_dram_byte == 0.0 and seen[0].lone_loads
    assert model_hits.probe_shape(1e9, 0.25).hits_per_dram_byte == pytest.approx(2**23 / 1e9)


def test_the_probe_is_a_parameter_with_its_source():
    rows = pd.DataFrame({"name": [model_hits.PROBE], "gbs": [486.8], "family": ["model"],
                         "variant": ["hits"], "error": [None], "model_dram_bytes": [612368384.0],
                         "model_efficiency": [0.2192]})
    p = model_params.params_from(rows)
    assert p.hits_probe == (486.8, 612368384.0, 0.2192)
    assert p.sources["hits_probe"] == model_hits.PROBE


def test_lone_hits_are_the_loads_less_those_bringing_a_granule_each():
    assert model_hits.lone_hits(100.0, 64.0 * 80) == 20.0
    assert model_hits.lone_hits(100.0, 64.0 * 120) == 0.0


def test_a_patterns_hits_count_only_where_its_loads_are_translated():
    # a hash's gather over 2 GiB: 52 B of DRAM per pick, a 4-B coalesced store each
    threads = 2**24
    counters = {"model_dram_bytes": threads * 56.0, "model_efficiency": 8 / 56,
                "pattern_threads": threads, "model_ld_sectors_per_req": 32.0,
                "bytes_in_flight_per_sm": 8192.0, "pattern_set_page_bytes": 2.0**31}
    spread = pattern_model.pattern_shape("gather", 4, 1, 256, counters, reach=2.0**27)
    assert spread.translated and spread.lone_loads
    assert spread.hits_per_dram_byte * threads * 56.0 == pytest.approx(threads * (1 - 52 / 64))
    held = pattern_model.pattern_shape("gather", 4, 1, 256, counters, reach=2.0**32)
    assert not held.translated and held.hits_per_dram_byte == 0.0


def test_the_hit_time_lowers_only_the_dram_bound_of_a_shape_with_hits():
    p = model_params.Params(read_gbs=4000.0, write_gbs=3800.0, copy_gbs=3600.0,
                            scatter_read=0.0005)
    free = model_bounds.bounds(p, model_hits.probe_shape(6e8, 0.22, hits=False))[model_bounds.DRAM]
    assert model_bounds.bounds(p, model_hits.probe_shape(6e8, 0.22))[model_bounds.DRAM] == free
    p.hits_probe = (0.8 * free, 6e8, 0.22)  # the probe runs at 0.8 of its misses' DRAM bound
    assert model_bounds.bounds(p, model_hits.probe_shape(6e8, 0.22))[model_bounds.DRAM] == \
        pytest.approx(0.8 * free)  # the probe's own shape: its GB/s again
    assert model_bounds.bounds(p, model_hits.probe_shape(6e8, 0.22, hits=False))[
        model_bounds.DRAM] == pytest.approx(free)  # no hits, no term


@pytest.mark.skipif(not RUN.is_dir(), reason="results/ is not in this checkout")
def test_the_hash_over_2_gib_comes_within_5_percent_with_the_probes_hits():
    from gmbtools.analysis import pattern_explain
    where, explanations = pattern_explain.explain_file(RUN / "pattern.json.gz")
    assert model_bounds.hit_ns(where.params) == pytest.approx(0.00623, rel=0.01)
    ratios = {e.expression: e.gbs / e.predicted_gbs for e in explanations}
    for expression in ("(i*2654435761)%n", "(i*2654435761)%268435456"):
        assert abs(ratios[expression] - 1) <= 0.03, expression
    assert abs(ratios["((i*2654435761)%33554432)*16"] - 1) <= 0.02  # no hits: as before
    assert sum(abs(r - 1) <= 0.05 for r in list(ratios.values())[:13]) == 11
