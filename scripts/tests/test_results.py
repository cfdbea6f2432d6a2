import json
import math
import re
import statistics

import pytest
from conftest import (ALL_FIXTURES, SYNTHETIC_CA, SYNTHETIC_DEFAULT, T, aggregate, iteration,
                      write_gb)

from gmbtools.errors import GmbError
from gmbtools.data.naming import strip_suffixes
from gmbtools.data.results import load, median_by_name

CONTRACT_CONTEXT_KEYS = ("gmb_flavor", "gpu_name", "gpu_cc", "gpu_sms", "gpu_l2_bytes",
                         "gpu_peak_gbs", "gpu_mem_clock_khz", "gpu_bus_bits", "ecc", "driver",
                         "cuda_runtime", "git_sha")


# --- the synthetic files -------------------------------------------------------------------

def test_iteration_only_file_gb171():
    loaded = load(SYNTHETIC_CA)
    assert loaded.context["gmb_flavor"] == "ca"
    assert [r.name for r in loaded.records] == [
        "read/f32x4", "write/f32x4", "copy/f32/ilp:1", "copy/f32x4/ilp:4/grid:persistent",
        "aos/p12/field:x", "ref/memcpy_d2d"]
    assert all(r.run_type == "iteration" and r.aggregate is None for r in loaded.records)
    copy = loaded.records[3]
    assert (copy.family, copy.variant, copy.params) == (
        "copy", "f32x4", {"ilp": "4", "grid": "persistent"})
    assert copy.bytes_per_second == 2.93e12
    assert copy.counters["model_sectors_per_req"] == 16.0
    assert copy.error is None

    medians = median_by_name(loaded.records)
    assert medians["read/f32x4"].bytes_per_second == 2.99e12
    assert medians["read/f32x4"].cv is None  # one run: no spread to report
    assert medians["aos/p12/field:x"].error.startswith("verification failed: 1 of 89478485")
    assert medians["aos/p12/field:x"].bytes_per_second is None


def test_file_with_aggregates_gb183():
    loaded = load(SYNTHETIC_DEFAULT)
    kinds = {(r.run_type, r.aggregate) for r in loaded.records if r.name == "read/f32"}
    assert kinds == {("iteration", None), ("aggregate", "mean"), ("aggregate", "median"),
                     ("aggregate", "stddev"), ("aggregate", "cv")}
    medians = median_by_name(loaded.records)
    read = medians["read/f32"]
    # Repetitions 2.80, 2.90, 2.88 TB/s: the median (2.88) differs from the mean (2.86).
    assert read.bytes_per_second == pytest.approx(2.88e12, rel=1e-12)
    assert read.pct_peak == pytest.approx(2.88e12 / 3352.32e9 * 100, rel=1e-9)
    rates = [2.80e12, 2.90e12, 2.88e12]
    assert read.cv == pytest.approx(statistics.stdev(rates) / statistics.mean(rates), rel=1e-9)
    assert list(medians)[:3] == ["read/f32", "read/f32x4", "write/f32x4"]  # file order


def test_errors_and_skips_gb183():
    medians = median_by_name(load(SYNTHETIC_DEFAULT).records)
    all_failed = medians["copy/f32x4/ilp:8"]
    assert all_failed.error.startswith("verification failed: 17 of 268435456")
    assert all_failed.bytes_per_second is None and all_failed.cv is None
    # One bad repetition of three: GB still wrote aggregates of the other two, but the
    # benchmark must be an error, not a number.
    partial = medians["copy/f64/ilp:2"]
    assert partial.bytes_per_second is None
    assert partial.error.endswith("(in 1 of 3 repetitions)")
    skipped = medians["stride/f32/read/s:8"]
    assert skipped.error == "skipped: stride 8 needs 8 GiB of device memory, 4 GiB free"
    assert (skipped.family, skipped.variant, skipped.params) == ("stride", "f32/read", {"s": "8"})


# --- medians and cv on small hand-made files -----------------------------------------------

def test_median_aggregate_wins_over_iterations(tmp_path):
    path = write_gb(tmp_path / "x.json", [
        iteration("copy/f32", 1 * T, 0), iteration("copy/f32", 2 * T, 1),
        iteration("copy/f32", 3 * T, 2),
        aggregate("copy/f32", "mean", 9 * T), aggregate("copy/f32", "median", 7 * T),
        aggregate("copy/f32", "cv", 0.25),
    ])
    median = median_by_name(load(path).records)["copy/f32"]
    assert median.bytes_per_second == 7 * T
    assert median.pct_peak == 7 * T / 3e10
    assert median.cv == 0.25


def test_median_and_cv_computed_from_iterations(tmp_path):
    rates = [1.0 * T, 4.0 * T, 2.0 * T, 3.0 * T]
    path = write_gb(tmp_path / "x.json",
                    [iteration("read/f32", r, i) for i, r in enumerate(rates)])
    median = median_by_name(load(path).records)["read/f32"]
    assert median.bytes_per_second == 2.5 * T
    assert median.pct_peak == pytest.approx(2.5 * T / 3e10)
    assert median.cv == pytest.approx(statistics.stdev(rates) / 2.5e12)


def test_user_defined_aggregate_without_run_name(tmp_path):
    entry = aggregate("read/f32", "p90", 5 * T)
    del entry["run_name"]
    path = write_gb(tmp_path / "x.json", [entry])
    record = load(path).records[0]
    assert (record.name, record.aggregate, record.run_type) == ("read/f32", "p90", "aggregate")


def test_counters_are_the_non_gb_numeric_keys(tmp_path):
    entry = iteration("read/f32", 1 * T, model_dram_bytes=64.0, model_efficiency=0.5,
                      family_index=3, per_family_instance_index=0, label="x")
    record = load(write_gb(tmp_path / "x.json", [entry])).records[0]
    assert set(record.counters) == {"bytes_per_second", "pct_peak", "model_dram_bytes",
                                    "model_efficiency"}
    assert record.real_time == 1.0 and record.time_unit == "ms" and record.repetition_index == 0


def test_error_flags(tmp_path):
    path = write_gb(tmp_path / "x.json", [
        iteration("a/x", 1 * T, error_occurred=True, error_message="bad"),
        iteration("b/x", 1 * T, error_occurred=True),
        iteration("c/x", 1 * T, skipped=True, skip_message="no room"),
        iteration("d/x", 1 * T, error_occurred=False),
    ])
    assert [r.error for r in load(path).records] == [
        "bad", "error (no message)", "skipped: no room", None]


def test_nan_and_infinity_from_errored_runs_load(tmp_path):
    path = tmp_path / "x.json"
    text = json.dumps({"context": {}, "benchmarks": [
        iteration("a/x", 1.0, error_occurred=True, error_message="bad")]})
    path.write_text(text.replace('"bytes_per_second": 1.0', '"bytes_per_second": Infinity'))
    records = load(path).records
    assert math.isinf(records[0].bytes_per_second)
    assert median_by_name(records)["a/x"].bytes_per_second is None


# --- files a user can get wrong -------------------------------------------------------------

def assert_one_line_error(path, fragment):
    with pytest.raises(GmbError) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message
    assert fragment in message
    return message


def test_missing_file(tmp_path):
    assert_one_line_error(tmp_path / "nope.json", "no such file")


def test_directory_instead_of_file(tmp_path):
    assert_one_line_error(tmp_path, "is a folder, not a JSON file")


@pytest.mark.parametrize("content", ["", "  \n"])
def test_empty_file(tmp_path, content):
    path = tmp_path / "empty.json"
    path.write_text(content)
    assert_one_line_error(path, "empty")


def test_truncated_file(tmp_path):
    path = tmp_path / "cut.json"
    cut = SYNTHETIC_DEFAULT.read_text()[:5000]
    path.write_text(cut)
    last_line = cut.count("\n") + 1  # the error is located where the file ends
    assert_one_line_error(path, f"truncated or corrupt JSON (line {last_line} ")


def test_corrupt_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"context": {}, "benchmarks": [}, ]}\n')
    assert_one_line_error(path, "truncated or corrupt JSON (line 1 column 32")


@pytest.mark.parametrize(
    ("doc", "fragment"),
    [
        ([], "no 'benchmarks' list"),
        ({"foo": 1}, "no 'benchmarks' list"),
        ({"context": {}, "benchmarks": {}}, "no 'benchmarks' list"),
        ({"benchmarks": []}, "no 'context' object"),
        ({"context": "x", "benchmarks": []}, "no 'context' object"),
        ({"context": {}, "benchmarks": [1]}, "benchmarks[0] has no 'name'"),
        ({"context": {}, "benchmarks": [{"real_time": 1}]}, "benchmarks[0] has no 'name'"),
    ],
)
def test_json_that_is_not_google_benchmark_output(tmp_path, doc, fragment):
    path = tmp_path / "other.json"
    path.write_text(json.dumps(doc))
    message = assert_one_line_error(path, fragment)
    assert "not Google Benchmark JSON output" in message


# --- every fixture, including real runs added later -----------------------------------------

@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_every_fixture_loads_and_follows_the_contract(path):
    loaded = load(path)
    assert loaded.records, "no benchmarks"
    for key in CONTRACT_CONTEXT_KEYS:
        assert key in loaded.context, f"context key {key} missing"
    for record in loaded.records:
        assert record.family, record
        assert strip_suffixes(record.name) == record.name
        assert not re.search(r"(manual_time|_mean|_median|_stddev|_cv)$", record.name)
    peak = float(loaded.context["gpu_peak_gbs"]) * 1e9
    for median in median_by_name(loaded.records).values():
        if median.error is None:
            assert median.bytes_per_second and median.bytes_per_second > 0, median
            # docs/design.md: pct_peak is the effective bandwidth over the context's peak.
            assert median.pct_peak == pytest.approx(median.bytes_per_second / peak * 100,
                                                    rel=2e-3), median.name


def test_compressed_files_load_like_plain_ones(tmp_path):
    import gzip
    import shutil

    from conftest import SYNTHETIC_DEFAULT

    from gmbtools.errors import GmbError
    from gmbtools.data.results import load_folder

    shutil.copy(SYNTHETIC_DEFAULT, tmp_path / "plain.json")
    (tmp_path / "default.json.gz").write_bytes(gzip.compress(SYNTHETIC_DEFAULT.read_bytes()))
    assert load(tmp_path / "default.json.gz").records == load(tmp_path / "plain.json").records
    assert load_folder(tmp_path)["default"].path.name == "default.json.gz"
    (tmp_path / "cut.json.gz").write_bytes(gzip.compress(b"{}")[:-6])
    with pytest.raises(GmbError, match="gzip file cut short"):
        load(tmp_path / "cut.json.gz")


# Peer context as each generation of the binary wrote it, and as every file now reads.
NEW_PEER = {"gmb_peer": "only", "gmb_peer_partner": "1",
            "gmb_peer_partner_source": "--gmb_peer_partner"}
OLD_PEER = {"gmb_peer": "1", "gmb_peer_partner": "--gmb_peer_partner", "gmb_peer_scope": "only"}


@pytest.mark.parametrize("written, read", [
    (NEW_PEER, NEW_PEER),
    (OLD_PEER, NEW_PEER),
    ({"gmb_peer": "none (one GPU visible)"}, {"gmb_peer_partner": "none (one GPU visible)"}),
    ({"gmb_peer": "none (one GPU visible)", "gmb_peer_scope": "all",
      "gmb_peer_partner": "default: (device + 1) mod count"},
     {"gmb_peer": "all", "gmb_peer_partner": "none (one GPU visible)",
      "gmb_peer_partner_source": "default: (device + 1) mod count"}),
    ({"gmb_flavor": "ca"}, {"gmb_flavor": "ca"}),
], ids=["today", "before-renaming", "oldest", "before-renaming-no-partner", "no-peer-keys"])
def test_peer_context_keys_read_with_todays_names(tmp_path, written, read):
    path = write_gb(tmp_path / "run.json", [iteration("read/f32", 1e12)], context=written)
    assert load(path).context == read


@pytest.mark.parametrize("context, names", [
    ({}, ["peer/copy/f32x4/ilp:4/dir:both_pull", "peer/copy/f32x4/ilp:4/dir:both",
          "ref/memcpy_peer/dir:both", "peer/copy/f32/ilp:1/dir:pull"]),
    ({"gmb_peer_both": "push"}, ["peer/copy/f32x4/ilp:4/dir:both",
                                 "peer/copy/f32x4/ilp:4/dir:both_push",
                                 "ref/memcpy_peer/dir:both", "peer/copy/f32/ilp:1/dir:pull"]),
], ids=["before-gmb_peer_both", "with-gmb_peer_both"])
def test_the_peer_copies_both_ways_read_with_todays_names(tmp_path, context, names):
    """Before gmb_peer_both, dir:both was each GPU pulling and dir:both_push each pushing."""
    written = ["peer/copy/f32x4/ilp:4/dir:both", "peer/copy/f32x4/ilp:4/dir:both_push",
               "ref/memcpy_peer/dir:both", "peer/copy/f32/ilp:1/dir:pull"]
    path = write_gb(tmp_path / "run.json", [iteration(n, 1e12) for n in written], context=context)
    assert [r.name for r in load(path).records] == names
