"""Load one Google Benchmark JSON file (1.7.x and 1.8.x) into plain records.

Only this module knows Google Benchmark's JSON layout; everything else works on `Record`s.
A file a user points us at may be missing, empty, cut short by a crashed run, or some other
JSON entirely: each case is a `GmbError` naming the file, never a traceback.
"""

import gzip
import json
import math
import statistics
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gmbtools.data.context_keys import current, current_name
from gmbtools.data.flavors import FLAVORS, json_name
from gmbtools.data.naming import split_name
from gmbtools.errors import GmbError

# Numeric keys Google Benchmark writes itself; every other numeric key of an entry is a counter
# (user counters such as `pct_peak`, and `bytes_per_second` from SetBytesProcessed).
_GB_NUMERIC_KEYS = frozenset({
    "family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
    "iterations", "real_time", "cpu_time", "cpu_coefficient", "real_coefficient", "rms",
    "allocs_per_iter", "max_bytes_used", "total_allocated_bytes", "net_heap_growth",
})


@dataclass(frozen=True)
class Record:
    """One entry of the `benchmarks` list, name stripped per the naming contract."""

    name: str
    family: str
    variant: str
    params: dict[str, str]
    run_type: str  # "iteration" or "aggregate"
    aggregate: str | None  # "mean", "median", "stddev", "cv", ...; None for iteration rows
    bytes_per_second: float | None
    pct_peak: float | None
    counters: dict[str, float]
    error: str | None  # why the run produced no valid number (error or skip); None if it did
    repetition_index: int | None
    real_time: float | None
    time_unit: str | None


@dataclass(frozen=True)
class Results:
    """A loaded file: its context (Google Benchmark's plus gmembench's keys) and its records."""

    path: Path
    context: dict[str, Any]
    records: list[Record]


@dataclass(frozen=True)
class Median:
    """What one benchmark measured: medians over repetitions, and their spread."""

    name: str
    family: str
    variant: str
    params: dict[str, str]
    bytes_per_second: float | None
    pct_peak: float | None
    counters: dict[str, float]
    cv: float | None  # coefficient of variation of bytes_per_second, as a fraction
    error: str | None  # set when any run of it errored; the numbers are then all None

    @property
    def gbs(self) -> float | None:
        """GB/s (10^9 B/s) of a valid run with a rate; None for an error or no rate."""
        if self.error is not None or not self.bytes_per_second:
            return None
        return self.bytes_per_second / 1e9


def load(path: str | Path) -> Results:
    """Read and validate one Google Benchmark JSON file."""
    path = Path(path)
    doc = _read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise GmbError(f"{path}: not Google Benchmark JSON output (no 'benchmarks' list)")
    if not isinstance(doc.get("context"), dict):
        raise GmbError(f"{path}: not Google Benchmark JSON output (no 'context' object)")
    context = current(doc["context"])
    records = []
    for index, entry in enumerate(doc["benchmarks"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise GmbError(
                f"{path}: not Google Benchmark JSON output (benchmarks[{index}] has no 'name')"
            )
        records.append(_record(entry, context))
    return Results(path=path, context=context, records=records)


FLAVOR_FILES = ", ".join(json_name(flavor) for flavor in FLAVORS[:-1]) + \
    f" or {json_name(FLAVORS[-1])}, plain or .gz"


def load_folder(folder: Path) -> dict[str, Results | str | None]:
    """Each flavor of a results folder: its loaded file, the one-line reason it could not be
    read, or None where the folder has no file for it."""
    if not folder.is_dir():
        what = "is a file, not a results folder" if folder.exists() else "no such folder"
        raise GmbError(f"{folder}: {what} (a results folder holds {FLAVOR_FILES})")
    loaded: dict[str, Results | str | None] = {}
    for flavor in FLAVORS:
        path = stored(folder / json_name(flavor))
        try:
            loaded[flavor] = load(path) if path.exists() else None
        except GmbError as err:
            loaded[flavor] = str(err)
    return loaded


def no_flavor_file(folder: Path) -> str:
    return f"{folder}: no flavor file in this folder ({FLAVOR_FILES})"


def problem(value: Results | str | None) -> str | None:
    """Why a loaded file gives nothing: load_folder's reason, or that it holds no benchmarks
    (a run stopped before its first one); None for a file with benchmarks or no file."""
    if isinstance(value, Results) and not value.records:
        return f"{value.path}: holds no benchmarks (its 'benchmarks' list is empty)"
    return value if isinstance(value, str) else None


def problems(loaded: dict[str, Results | str | None]) -> list[str]:
    """problem() of each flavor of load_folder's answer: one line per file, naming it."""
    return [line for line in map(problem, loaded.values()) if line is not None]


def readable(loaded: dict[str, Results | str | None]) -> dict[str, Results]:
    """The flavors of load_folder's answer that hold benchmarks."""
    return {flavor: value for flavor, value in loaded.items()
            if isinstance(value, Results) and problem(value) is None}


def stored(path: Path) -> Path:
    """`path`, or its gzip-compressed copy `path.gz` where only that exists (committed runs are
    kept compressed so that the repository stays small)."""
    packed = path.with_name(path.name + ".gz")
    return packed if not path.exists() and packed.exists() else path


def _read_json(path: Path) -> Any:
    text = read_text(path)
    if not text.strip():
        raise GmbError(f"{path}: file is empty (did the benchmark run start?)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        # Google Benchmark writes the file as it goes: a crashed or killed run leaves it cut short.
        raise GmbError(
            f"{path}: truncated or corrupt JSON (line {err.lineno} column {err.colno}: {err.msg});"
            " did the benchmark run finish?"
        ) from None


def read_text(path: Path) -> str:
    """The text of a results file, plain or gzip-compressed; a GmbError naming it otherwise."""
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as file:
                text = file.read()
        else:
            text = path.read_text(encoding="utf-8")
    except gzip.BadGzipFile as err:  # the magic bytes, or a checksum at the end
        what = "not a gzip file" if "Not a gzipped file" in str(err) else f"corrupt gzip ({err})"
        raise GmbError(f"{path}: {what}") from None
    except EOFError:
        raise GmbError(f"{path}: gzip file cut short (truncated)") from None
    except zlib.error as err:  # damaged compressed data inside a valid header
        raise GmbError(f"{path}: corrupt gzip data ({err})") from None
    except FileNotFoundError:
        raise GmbError(f"{path}: no such file or folder") from None
    except IsADirectoryError:
        raise GmbError(f"{path}: is a folder, not a JSON file") from None
    except UnicodeDecodeError:
        raise GmbError(f"{path}: not a text file") from None
    except OSError as err:
        raise GmbError(f"{path}: cannot read ({err.strerror})") from None
    return text


def _record(entry: dict[str, Any], context: dict[str, Any]) -> Record:
    is_aggregate = entry.get("run_type") == "aggregate"
    aggregate = entry.get("aggregate_name") if is_aggregate else None
    # `run_name` is the name without the aggregate suffix; very old files only have `name`.
    run_name = entry.get("run_name")
    raw_name = run_name if isinstance(run_name, str) else entry["name"]
    split = split_name(current_name(raw_name, context), aggregate if is_aggregate else None)
    counters = {
        key: float(value)
        for key, value in entry.items()
        if _is_number(value) and key not in _GB_NUMERIC_KEYS
    }
    return Record(
        name=split.name,
        family=split.family,
        variant=split.variant,
        params=split.params,
        run_type="aggregate" if is_aggregate else "iteration",
        aggregate=aggregate,
        bytes_per_second=counters.get("bytes_per_second"),
        pct_peak=counters.get("pct_peak"),
        counters=counters,
        error=_error_message(entry),
        repetition_index=entry.get("repetition_index") if not is_aggregate else None,
        real_time=float(entry["real_time"]) if _is_number(entry.get("real_time")) else None,
        time_unit=entry.get("time_unit"),
    )


def _is_number(value: Any) -> bool:
    # bool is an int subclass, and `error_occurred: true` is not a measurement.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _error_message(entry: dict[str, Any]) -> str | None:
    """SkipWithError gives `error_occurred` + `error_message`; 1.8's SkipWithMessage gives
    `skipped` + `skip_message`. Either way the entry holds no valid measurement."""
    if entry.get("error_occurred") is True:
        return str(entry.get("error_message") or "error (no message)")
    if entry.get("skipped") is True:
        message = entry.get("skip_message") or entry.get("error_message") or "no message"
        return f"skipped: {message}"
    return None


def median_by_name(records: list[Record]) -> dict[str, Median]:
    """Per benchmark name (in file order): the `median` aggregate if the file has one, else the
    median of the iteration rows (files run without repetitions have no aggregates).

    cv comes from the `cv` aggregate, else is computed as stddev/mean of the iteration rows'
    bytes_per_second (sample stddev, as Google Benchmark does), else is None (a single run).
    A benchmark with any errored run is reported as an error with no numbers: a wrong result
    in one repetition makes the others suspect too.
    """
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.name, []).append(record)
    return {name: _median_of(rows) for name, rows in groups.items()}


def _median_of(rows: list[Record]) -> Median:
    first = rows[0]
    iterations = [r for r in rows if r.run_type == "iteration"]
    aggregates = {r.aggregate: r for r in rows if r.run_type == "aggregate"}
    errored = [r for r in rows if r.error]
    if errored:
        message = errored[0].error or ""
        bad = sum(1 for r in iterations if r.error)
        if 0 < bad < len(iterations):
            message += f" (in {bad} of {len(iterations)} repetitions)"
        return Median(name=first.name, family=first.family, variant=first.variant,
                      params=first.params, bytes_per_second=None, pct_peak=None, counters={},
                      cv=None, error=message)

    if "median" in aggregates:
        counters = dict(aggregates["median"].counters)
    else:
        counters = _median_counters(iterations)
    cv = aggregates["cv"].bytes_per_second if "cv" in aggregates else _cv(iterations)
    return Median(name=first.name, family=first.family, variant=first.variant,
                  params=first.params, bytes_per_second=counters.get("bytes_per_second"),
                  pct_peak=counters.get("pct_peak"), counters=counters,
                  cv=cv if cv is not None and math.isfinite(cv) else None, error=None)


def _cv(iterations: list[Record]) -> float | None:
    rates = [r.bytes_per_second for r in iterations if r.bytes_per_second is not None]
    if len(rates) < 2 or statistics.fmean(rates) == 0:
        return None
    return statistics.stdev(rates) / statistics.fmean(rates)


def _median_counters(iterations: list[Record]) -> dict[str, float]:
    keys: dict[str, None] = {}
    for record in iterations:
        keys.update(dict.fromkeys(record.counters))
    return {
        key: statistics.median(r.counters[key] for r in iterations if key in r.counters)
        for key in keys
    }
