"""The L2 partition probe (`model/l2_partition/*`, `model_chases.partition_from`): the L2's
latency from each SM to lines it read itself and, on a first read, to lines the lowest SM read;
on a GPU of two partitions the SMs of the other half find those farther. Its paragraph in the
summary's model section says so, or says one L2."""

from pathlib import Path

import pandas as pd

from gmbtools.analysis import frame, model_chases, model_params
from gmbtools.data import results
from gmbtools.present import model_section

NAME = "model/l2_partition/steps:512"
RECORD = (Path(__file__).resolve().parents[2]
          / "results/nvidia-h200/20261202-074929-l2-partition")


def probe(far_sms: float, **far) -> pd.DataFrame:
    row = {"name": NAME, "family": "model", "variant": "l2_partition", "gbs": 0.05,
           "flavor": "default", "model_gbs": None, "model_bound": None, "error": None,
           "gpu_sms": 132, "latency_ns": 142.6, "l2_near_ns_min": 137.0, "l2_near_ns_max": 149.4, "l2_first_ns": 142.7, "l2_far_side_sms": far_sms, **far}
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
    line = model_section.partition_lines(probe(0))[0]
    assert line.endswith("on every SM: one L2, as near to all.")


def test_a_run_without_the_probe_has_neither_the_parameter_nor_the_paragraph():
    rows = probe(66, **TWO_HALVES).assign(name="model/chase/ws:2097152/lanes:1")
    assert model_chases.partition_from(rows) is None
    assert model_section.partition_lines(rows) == []
    assert model_params.params_from(rows).l2_partition is None


def test_the_parameter_names_its_probe():
    p = model_params.params_from(probe(66, **TWO_HALVES))
    assert p.l2_partition.far_first_ns == 185.1
    assert p.sources["l2_partition"] == "model/l2_partition/*"


def test_a_run_of_the_probe_alone_still_says_what_it_found():
    lines = model_section.model_lines(probe(66, **TWO_HALVES))
    assert lines[0] == model_section.HEADING
    assert "66 of 132 SMs: two partitions." in lines[2]
    assert lines[-2] == "No benchmark of this run has a prediction."


def test_the_h200s_l2_is_two_halves_of_66_sms():
    for run in (RECORD / "default.json.gz", RECORD / "explore/probe.json.gz"):
        l2 = model_chases.partition_from(frame.medians_frame([results.load(run)]))
        assert l2.far_sms == 66  # of 132
        # the far half's slowest first read above every SM's second; the home half's near
        assert l2.far_first_min_ns > 1.15 * l2.near_max_ns
        assert abs(l2.first_ns / l2.near_ns - 1) < 0.01
