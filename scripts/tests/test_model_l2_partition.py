"""The L2 partition probe (`model/l2_partition/*`, `model_chases.partition_from`): the L2's
latency from each SM to lines it read itself and, on a first read, to lines the lowest SM read;
on a GPU of two partitions the SMs of the other half find those farther. Its paragraph in the
summary's model section says so, or says one L2."""

import pandas as pd

from gmbtools.analysis import model_chases, model_params
from gmbtools.present import model_section

NAME = "model/l2_partition/steps:512"


def probe(far_sms: float, **far) -> pd.DataFrame:
    row = {"name": NAME, "family": "model", "variant": "l2_partition", "gbs": 0.05,
           "error": None, "gpu_sms": 132, "latency_ns": 142.6, "l2_near_ns_min": 137.0,
           "l2_near_ns_max": 149.4, "l2_first_ns": 142.7, "l2_far_side_sms": far_sms, **far}
    return pd.DataFrame([row])


TWO_HALVES = {"l2_first_far_side_ns": 185.1, "l2_first_far_side_ns_min": 177.8,
              "l2_first_far_side_ns_max": 193.9}


def test_two_halves_give_the_far_sides_sms_and_their_first_reads():
    l2 = model_chases.partition_from(probe(66, **TWO_HALVES))
    assert (l2.near_ns, l2.near_min_ns, l2.near_max_ns, l2.first_ns) == (142.6, 137.0, 149.4, 142.7)
    assert (l2.far_sms, l2.far_first_ns, l2.far_first_min_ns, l2.far_first_max_ns) == (
        66, 185.1, 177.8, 193.9)
    lines = model_section.partition_lines(probe(66, **TWO_HALVES))
    assert "142.7 ns on its half and 185.1 ns (177.8 to 193.9) on the other, 66 of 132 SMs" in (
        lines[0])


def test_one_l2_has_no_far_side():
    l2 = model_chases.partition_from(probe(0))
    assert l2.far_sms == 0 and l2.far_first_ns is None
    assert model_section.partition_lines(probe(0))[0].endswith("on every SM: one L2, as near to all.")


def test_a_run_without_the_probe_has_neither_the_parameter_nor_the_paragraph():
    rows = probe(66, **TWO_HALVES).assign(name="model/chase/ws:2097152/lanes:1")
    assert model_chases.partition_from(rows) is None
    assert model_section.partition_lines(rows) == []
    assert model_params.params_from(rows).l2_partition is None


def test_the_parameter_names_its_probe():
    p = model_params.params_from(probe(66, **TWO_HALVES))
    assert p.l2_partition.far_first_ns == 185.1
    assert p.sources["l2_partition"] == "model/l2_partition/*"
