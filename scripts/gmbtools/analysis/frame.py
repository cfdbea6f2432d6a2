"""Google Benchmark results as tidy pandas DataFrames, for the figures and for users' analysis.

- `rows_frame` / `load_frame`: one row per JSON entry (each repetition and each aggregate).
- `medians_frame`: one row per file and benchmark: the value `results.median_by_name` reports
  (the number summary.md shows), with the spread of the repetitions around it, the model's
  prediction `model_gbs` and the bound that wins, `model_bound` (`model_predict`), the
  inflight family's Little's-law fit `inflight_fit_gbs` (`littles_law`) and `headline`:
  "best read", "best write" or "best copy" on the rows summary.md's headline picks.

Both hold the name split per the contract (family, variant, type, op and one column per param,
numeric where every value is), the flavor, the context keys the figures need and the file.
GB/s is 10^9 B/s. An errored or skipped benchmark has an `error` and NaN numbers, never zero.
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from gmbtools.analysis import headlines, littles_law, model_predict
from gmbtools.data import results
from gmbtools.data.flavors import FLAVORS
from gmbtools.data.naming import to_number, type_and_op
from gmbtools.data.results import Record, Results
from gmbtools.errors import GmbError

MODEL_COUNTERS = ("model_sectors_per_req", "model_ld_sectors_per_req",
                  "model_st_sectors_per_req", "model_dram_bytes", "model_efficiency",
                  "model_warp_instructions", "model_local_store_lines")
# Counters families write beside the bandwidth: what the latency and inflight families measure
# themselves, the L2 partition probe's, and a ladder step's position (`rung`: transpose/,
# reduce/).
MEASURED_COUNTERS = ("latency_ns", "latency_cycles", "sm_clock_mhz", "load_gbs",
                     "bytes_in_flight_per_sm", "resident_blocks_per_sm", "block_slot_ns",
                     "blocks_per_us", "rung", "l2_near_ns_min", "l2_near_ns_max", "l2_first_ns",
                     "l2_far_side_sms", "l2_first_far_side_ns", "l2_first_far_side_ns_min",
                     "l2_first_far_side_ns_max")
CONTEXT_COLUMNS = ("gpu_name", "gpu_peak_gbs", "gpu_l2_bytes", "gpu_l1_shared_per_sm_bytes",
                   "gpu_sms", "gpu_cc", "gpu_facts", "gpu_peer_link_gbs", "date")
NAME_COLUMNS = ("name", "family", "variant", "type", "op")  # params follow these

ROW_COLUMNS = (
    *NAME_COLUMNS, "run_type", "aggregate", "repetition_index", "bytes_per_second", "gbs",
    "pct_peak", *MODEL_COUNTERS, *MEASURED_COUNTERS, "real_time", "time_unit", "error", "flavor",
    *CONTEXT_COLUMNS, "file",
)
MEDIAN_COLUMNS = (
    *NAME_COLUMNS, "gbs", "gbs_lo", "gbs_hi", "spread", "repetitions", "pct_peak", "cv",
    *MODEL_COUNTERS, *MEASURED_COUNTERS, "model_gbs", "model_bound", "model_link_bytes",
    "inflight_fit_gbs", "headline", "error", "flavor",
    *CONTEXT_COLUMNS, "file",
)

_NUMBERS = ("bytes_per_second", "gbs", "pct_peak", *MODEL_COUNTERS, *MEASURED_COUNTERS)
_TEXT = ("name", "family", "variant", "type", "op", "run_type", "aggregate", "time_unit",
         "spread", "model_bound", "headline", "error", "flavor", "gpu_name", "gpu_cc", "gpu_facts", "date",
         "file")
_INTEGERS = ("repetition_index", "repetitions")


def load_frame(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Load Google Benchmark JSON files (raising GmbError on the first unreadable one)."""
    return rows_frame([results.load(path) for path in paths])


def rows_frame(loaded: Iterable[Results]) -> pd.DataFrame:
    """One row per entry of each file's `benchmarks` list, in file order."""
    rows: list[dict[str, Any]] = []
    params: list[dict[str, str]] = []
    for file in loaded:
        where = _file_columns(file)
        for record in file.records:
            # The `cv` aggregate's bytes_per_second is a fraction, not a rate.
            rate = None if record.error or record.aggregate == "cv" else record.bytes_per_second
            rows.append({
                **_name_columns(record),
                "run_type": record.run_type,
                "aggregate": record.aggregate,
                "repetition_index": record.repetition_index,
                "bytes_per_second": record.bytes_per_second,
                "gbs": None if rate is None else rate / 1e9,
                "pct_peak": record.pct_peak,
                **{key: record.counters.get(key) for key in MODEL_COUNTERS},
                **{key: record.counters.get(key) for key in MEASURED_COUNTERS},
                "real_time": record.real_time,
                "time_unit": record.time_unit,
                "error": record.error,
                **where,
            })
            params.append(record.params)
    frame = _build(rows, params, ROW_COLUMNS)
    # An errored entry may still carry counters: it has no valid number, so show none.
    frame.loc[frame["error"].notna(), list(_NUMBERS)] = float("nan")
    return frame


def readable_medians(folder: Path, loaded: dict[str, Results | str | None]) -> pd.DataFrame:
    """medians_frame of the files of `folder` that hold benchmarks (`results.load_folder`'s
    answer); GmbError naming why when none does."""
    readable = list(results.readable(loaded).values())
    if not readable:
        raise GmbError("; ".join(results.problems(loaded)) or results.no_flavor_file(folder))
    return medians_frame(readable)


def medians_frame(loaded: Iterable[Results]) -> pd.DataFrame:
    """One row per file and benchmark: median GB/s, its spread (`gbs_lo`..`gbs_hi`: min-max of
    the repetitions, else median -/+ the stddev aggregate; `spread` says which), cv, model
    counters and error, as `results.median_by_name` defines them."""
    rows: list[dict[str, Any]] = []
    params: list[dict[str, str]] = []
    for file in loaded:
        where = _file_columns(file)
        runs_of: dict[str, list[Record]] = {}
        for record in file.records:
            runs_of.setdefault(record.name, []).append(record)
        medians = results.median_by_name(file.records)
        headline = headlines.headline_picks(medians)
        for name, median in medians.items():
            gbs = None if median.bytes_per_second is None else median.bytes_per_second / 1e9
            rows.append({
                **_name_columns(median),
                "gbs": gbs,
                **_spread(gbs, runs_of[name]),
                "pct_peak": median.pct_peak,
                "cv": median.cv,
                **{key: median.counters.get(key) for key in MODEL_COUNTERS},
                **{key: median.counters.get(key) for key in MEASURED_COUNTERS},
                "model_gbs": None,
                "model_bound": None,
                "model_link_bytes": None,
                "inflight_fit_gbs": None,
                "headline": headline.get(name),
                "error": median.error,
                **where,
            })
            params.append(median.params)
    frame = _build(rows, params, MEDIAN_COLUMNS)
    frame["inflight_fit_gbs"] = littles_law.model_gbs(frame)
    predicted = model_predict.predictions(frame)
    frame["model_gbs"] = predicted["model_gbs"]
    frame["model_bound"] = predicted["model_bound"]
    frame["model_link_bytes"] = predicted["model_link_bytes"]
    return frame


def describe(frame: pd.DataFrame) -> list[str]:
    """A few lines on what a rows frame holds, for `gmb load` without --csv."""
    names = frame.drop_duplicates("name")
    errored = frame.loc[frame["error"].notna()].drop_duplicates(["file", "name"])
    iterations = int((frame["run_type"] == "iteration").sum())
    lines = [
        f"{len(frame)} rows ({iterations} repetitions, {len(frame) - iterations} aggregates)"
        f" from {frame['file'].nunique()} file(s)",
        "flavors: " + (", ".join(map(str, frame["flavor"].dropna().unique())) or "(none)"),
        "GPU: " + (", ".join(map(str, frame["gpu_name"].dropna().unique())) or "(not recorded)"),
    ]
    counts = names.groupby("family", sort=False).size()
    lines.append("benchmark names: " + (", ".join(f"{f} {n}" for f, n in counts.items()) or "none"))
    lines.append(f"errored or skipped: {len(errored)}")
    lines += [f"  {row.file}: {row.name}: {row.error}" for row in errored.itertuples()]
    return lines


def _name_columns(item: Record | results.Median) -> dict[str, Any]:
    type_, op = type_and_op(item.variant)
    return {"name": item.name, "family": item.family, "variant": item.variant,
            "type": type_ or None, "op": op}


def _file_columns(file: Results) -> dict[str, Any]:
    """Flavor, the context keys the figures need (numbers as numbers) and the file."""
    flavor = file.context.get("gmb_flavor")
    if not isinstance(flavor, str) and file.path.stem in FLAVORS:
        flavor = file.path.stem
    context = {
        key: to_number(str(file.context[key])) if key in file.context else None
        for key in CONTEXT_COLUMNS
    }
    return {"flavor": flavor, **context, "file": str(file.path)}


def _spread(gbs: float | None, runs: list[Record]) -> dict[str, Any]:
    none = {"gbs_lo": None, "gbs_hi": None, "spread": None, "repetitions": 0}
    if gbs is None:
        return none
    rates = [r.bytes_per_second / 1e9 for r in runs
             if r.run_type == "iteration" and r.bytes_per_second is not None]
    if len(rates) >= 2:
        return {"gbs_lo": min(rates), "gbs_hi": max(rates), "spread": "min-max",
                "repetitions": len(rates)}
    stddev = next((r.bytes_per_second for r in runs if r.aggregate == "stddev"), None)
    if stddev is not None:
        return {"gbs_lo": gbs - stddev / 1e9, "gbs_hi": gbs + stddev / 1e9, "spread": "stddev",
                "repetitions": len(rates)}
    return {**none, "repetitions": len(rates)}


def _build(rows: list[dict[str, Any]], params: list[dict[str, str]],
           columns: tuple[str, ...]) -> pd.DataFrame:
    """The frame with one column per param key, placed after the name columns. A key that
    collides with a fixed column becomes `param_<key>`."""
    frame = pd.DataFrame(rows, columns=list(columns))
    for column in frame.columns:  # one dtype per column, whatever is missing
        if column in _TEXT:
            frame[column] = frame[column].astype("str")
        elif column in _INTEGERS:
            frame[column] = frame[column].astype("Int64")
        else:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    keys = list(dict.fromkeys(key for row in params for key in row))
    at = len(NAME_COLUMNS)
    for key in keys:
        column = f"param_{key}" if key in columns else key
        frame.insert(at, column, _param_values([row.get(key) for row in params]))
        at += 1
    return frame


def _param_values(values: list[str | None]) -> pd.Series:
    """Integers as a nullable integer column, decimals as floats, anything else as text."""
    converted = [None if v is None else to_number(v) for v in values]
    present = [v for v in converted if v is not None]
    if present and all(isinstance(v, int) for v in present):
        return pd.Series(converted, dtype="Int64")
    if present and all(isinstance(v, (int, float)) for v in present):
        return pd.Series(converted, dtype="float64")
    return pd.Series(values, dtype="str")
