import json
import math

import pytest
from conftest import H200_RUN, SYNTHETIC_DEFAULT, SYNTHETIC_FAMILIES, T, aggregate, write_gb

from gmbtools.analysis import frame, headlines
from gmbtools.data import results
from gmbtools.errors import GmbError

H200_DEFAULT = H200_RUN / "default.json"
GB_SUFFIX = "/min_time:0.050/manual_time"


def entries(path):
    return json.loads(path.read_text())["benchmarks"]


def entry(path, name):
    return next(e for e in entries(path) if e["name"] == name)


# --- one row per entry -----------------------------------------------------------------------

def test_rows_frame_columns_and_values_of_a_real_run():
    rows = frame.load_frame([H200_DEFAULT])
    assert len(rows) == len(entries(H200_DEFAULT))  # every repetition and aggregate
    assert list(rows.columns[:7]) == ["name", "family", "variant", "type", "op", "ilp", "grid"]
    assert set(frame.ROW_COLUMNS) <= set(rows.columns)

    read = rows.loc[rows["name"] == "read/f32/ilp:1/grid:full"]
    assert list(read["run_type"]) == ["iteration"] * 5 + ["aggregate"] * 4
    assert list(read["repetition_index"].iloc[:5]) == [0, 1, 2, 3, 4]
    median = read.loc[read["aggregate"] == "median"].iloc[0]
    expected = entry(H200_DEFAULT, f"read/f32/ilp:1/grid:full{GB_SUFFIX}_median")
    assert median["gbs"] == expected["bytes_per_second"] / 1e9
    assert median["pct_peak"] == expected["pct_peak"]
    assert median["model_sectors_per_req"] == expected["model_sectors_per_req"] == 4.0
    assert median["model_efficiency"] == 1.0
    assert (median["family"], median["variant"], median["type"]) == ("read", "f32", "f32")
    assert median["ilp"] == 1 and median["grid"] == "full"
    assert (median["flavor"], median["gpu_name"], median["gpu_peak_gbs"]) == (
        "default", "NVIDIA H200", 4814.3)
    assert median["gpu_l2_bytes"] == 62914560 and median["file"] == str(H200_DEFAULT)
    assert str(rows["ilp"].dtype) == "Int64"
    assert rows["op"].isna().all()  # coalesced families have no op after the type
    refs = rows.loc[rows["family"] == "ref"]
    assert refs["ilp"].isna().all() and refs["model_efficiency"].isna().all()
    # The cv aggregate's bytes_per_second is a fraction: kept, but it is no rate.
    cv = rows.loc[rows["aggregate"] == "cv"]
    assert cv["gbs"].isna().all() and (cv["bytes_per_second"] < 1).all()


def test_type_op_and_numeric_params_of_the_new_families():
    rows = frame.load_frame([SYNTHETIC_FAMILIES["default"]]).set_index("name")
    assert tuple(rows.loc["stride/f64/both/s:1024", ["type", "op", "s"]]) == ("f64", "both", 1024)
    assert tuple(rows.loc["offset/f32x4/copy/off:2", ["type", "op", "off"]]) == (
        "f32x4", "copy", 2)
    assert tuple(rows.loc["aos_staged/p12/fields:all", ["family", "type", "fields"]]) == (
        "aos_staged", "p12", "all")
    assert rows.loc["cache/read/ws:1073741824", "ws"] == 2**30
    assert tuple(rows.loc["vector/w2/ilp:8", ["type", "ilp"]]) == ("w2", 8)
    for column in ("s", "off", "ws", "ilp"):
        assert str(rows[column].dtype) == "Int64", column
    assert str(rows["fields"].dtype) == "str"
    assert rows.loc["cache/read/ws:16384", "gpu_l1_shared_per_sm_bytes"] == 262144
    assert rows.loc["cache/read/ws:16384", "gpu_sms"] == 132


def test_ladder_rung_and_sectors_per_request():
    path = SYNTHETIC_FAMILIES["default"]
    medians = frame.medians_frame([results.load(path)]).set_index("name")
    ladder = {e["name"].removesuffix(GB_SUFFIX): e for e in entries(path)
              if e["name"].startswith(("transpose/", "reduce/"))}
    assert len(ladder) == 2 * 11 + 2 * 11  # two transposes of 11 rungs, two reductions of 10 + cub
    for name, e in ladder.items():
        if "rung" in e:
            assert medians.loc[name, "rung"] == e["rung"]
        else:
            assert name.endswith("/cub") and math.isnan(medians.loc[name, "rung"])
        for counter in ("model_ld_sectors_per_req", "model_st_sectors_per_req"):
            got = medians.loc[name, counter]
            assert got == e[counter] if counter in e else math.isnan(got)
    assert tuple(medians.loc["transpose/f64/naive_rows/n:11584", ["type", "op", "n"]]) == (
        "f64", "naive_rows", 11584)
    assert medians.loc["transpose/f64/naive_rows/n:11584", "model_st_sectors_per_req"] == 32


def test_headline_marks_summarys_best_read_write_and_copy():
    loaded = results.load(H200_DEFAULT)
    medians = frame.medians_frame([loaded])
    picked = medians.dropna(subset=["headline"]).set_index("name")["headline"].to_dict()
    assert picked == headlines.headline_picks(results.median_by_name(loaded.records))
    assert sorted(picked.values()) == ["best copy", "best read", "best write"]
    reads = medians.loc[medians["family"] == "read"]
    assert picked[reads.loc[reads["gbs"].idxmax(), "name"]] == "best read"


def test_errored_entries_have_no_numbers_never_zero():
    rows = frame.load_frame([SYNTHETIC_DEFAULT])
    errored = rows.loc[rows["error"].notna()]
    assert set(errored["name"]) == {"copy/f32x4/ilp:8", "copy/f64/ilp:2", "stride/f32/read/s:8"}
    assert errored[["bytes_per_second", "gbs", "pct_peak"]].isna().all().all()
    rates = rows.loc[rows["aggregate"].isna() | (rows["aggregate"] == "median"), "gbs"]
    assert (rates.dropna() > 0).all()


def test_param_named_like_a_column_gets_a_prefix(tmp_path):
    path = write_gb(tmp_path / "x.json", [aggregate("odd/f32/name:3/file:a", "median", 1 * T)])
    rows = frame.load_frame([path])
    assert rows.loc[0, "name"] == "odd/f32/name:3/file:a"
    assert rows.loc[0, "param_name"] == 3 and rows.loc[0, "param_file"] == "a"
    assert rows.loc[0, "flavor"] != rows.loc[0, "flavor"]  # no gmb_flavor, no flavor: NaN


def test_empty_benchmark_list_gives_the_columns(tmp_path):
    rows = frame.load_frame([write_gb(tmp_path / "x.json", [])])
    assert rows.empty and list(rows.columns) == list(frame.ROW_COLUMNS)


@pytest.mark.parametrize(("content", "fragment"), [
    (None, "no such file"), ("", "file is empty"), ('{"context": {}, "bench', "truncated"),
    ('{"name": "not a benchmark"}', "not Google Benchmark JSON output")])
def test_unreadable_files_are_one_line_errors(tmp_path, content, fragment):
    path = tmp_path / "x.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(GmbError, match=fragment):
        frame.load_frame([SYNTHETIC_DEFAULT, path])


# --- one row per benchmark -------------------------------------------------------------------

def test_medians_are_the_median_aggregates_with_min_max_spread():
    medians = frame.medians_frame([results.load(H200_DEFAULT)]).set_index("name")
    assert len(medians) == 22  # the benchmarks kept in fixtures/runs/h200-baselines
    runs: dict[str, list[float]] = {}
    for e in entries(H200_DEFAULT):
        name = e["run_name"].removesuffix(GB_SUFFIX)
        if e["run_type"] == "iteration":
            runs.setdefault(name, []).append(e["bytes_per_second"] / 1e9)
        elif e["aggregate_name"] == "median":
            assert medians.loc[name, "gbs"] == e["bytes_per_second"] / 1e9
            assert medians.loc[name, "pct_peak"] == e["pct_peak"]
        elif e["aggregate_name"] == "cv":
            assert medians.loc[name, "cv"] == e["bytes_per_second"]
    for name, rates in runs.items():
        assert (medians.loc[name, "gbs_lo"], medians.loc[name, "gbs_hi"]) == (
            min(rates), max(rates))
        assert medians.loc[name, "spread"] == "min-max"
        assert medians.loc[name, "repetitions"] == 5


def test_medians_of_errored_benchmarks_are_errors():
    medians = frame.medians_frame([results.load(SYNTHETIC_DEFAULT)]).set_index("name")
    partial = medians.loc["copy/f64/ilp:2"]  # 1 of 3 repetitions failed
    assert partial["error"].endswith("(in 1 of 3 repetitions)")
    assert medians.loc["copy/f64/ilp:2", ["gbs", "gbs_lo", "gbs_hi", "pct_peak"]].isna().all()
    assert (medians["gbs"].dropna() > 0).all()


def test_stddev_spread_where_only_aggregates_were_written(tmp_path):
    path = write_gb(tmp_path / "x.json", [aggregate("copy/f32", "median", 2 * T),
                                          aggregate("copy/f32", "stddev", 0.1 * T)])
    row = frame.medians_frame([results.load(path)]).iloc[0]
    assert (row["gbs"], row["gbs_lo"], row["gbs_hi"]) == (2000.0, 1900.0, 2100.0)
    assert row["spread"] == "stddev" and row["repetitions"] == 0


def test_describe_lists_families_and_errors():
    lines = frame.describe(frame.load_frame([SYNTHETIC_DEFAULT]))
    assert lines[0].endswith("from 1 file(s)")
    assert "flavors: default" in lines and "GPU: NVIDIA H100 80GB HBM3" in lines
    assert "benchmark names: read 2, write 1, copy 4, ref 2, stride 1" in lines
    assert "errored or skipped: 3" in lines
