"""A flavor file that a stop, a hang or a crash cut short: what it holds, which benchmarks
finished, and a continuation merged into it (gmb run's watchdog and --resume).

gmembench writes its file after every whole benchmark (all repetitions and their aggregates)
and closes it when stopped by a signal; a binary killed outright leaves the file cut after a
whole benchmark, without the list's closing brackets, which `read` puts back. Standard library
only, like `gmb run`.
"""

import json
import re
from pathlib import Path
from typing import Any

from gmbtools.data.files import write_whole
from gmbtools.data.results import read_text
from gmbtools.errors import GmbError

TIME_SUFFIX = "/manual_time"
# Google Benchmark's layout: each benchmark an object indented by four spaces.
_OBJECT_END = "\n    }"
_LIST_START = re.compile(r'"benchmarks": \[')
_CLOSING = "\n  ]\n}\n"
INTERRUPTED = "gmb_interrupted"
STALLED = "gmb_stalled"
REGISTERED = "gmb_benchmarks"


def read(path: Path) -> tuple[dict[str, Any], bool]:
    """The document at `path` (plain or .gz) and whether it had to be closed. Raises GmbError
    naming the file where nothing whole can be read."""
    text = read_text(path)
    try:
        return _checked(json.loads(text), path), False
    except json.JSONDecodeError:
        pass
    closed = close(text)
    if closed is None:
        raise GmbError(f"{path}: cut short before its first benchmark's context was written")
    return _checked(closed, path), True


def close(text: str) -> dict[str, Any] | None:
    """A cut Google Benchmark JSON text closed after its last whole object, or None."""
    cuts = []
    end = len(text)
    while len(cuts) < 64:  # a cut inside a benchmark: back over its few objects
        end = text.rfind(_OBJECT_END, 0, end)
        if end < 0:
            break
        cuts.append(end + len(_OBJECT_END))
    start = _LIST_START.search(text)
    if start:
        cuts.append(start.end())
    for cut in cuts:
        try:
            doc = json.loads(text[:cut] + _CLOSING)
        except json.JSONDecodeError:
            continue
        return keep_whole(doc) if isinstance(doc, dict) else None
    return None


def _checked(doc: Any, path: Path) -> dict[str, Any]:
    if not (isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list)
            and isinstance(doc.get("context"), dict)):
        raise GmbError(f"{path}: not Google Benchmark JSON")
    return doc


def base_name(entry: dict[str, Any]) -> str:
    """The registered name of an entry: run_name without Google Benchmark's suffix."""
    name = str(entry.get("run_name") or entry.get("name"))
    return name.removesuffix(TIME_SUFFIX)


def _groups(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in doc["benchmarks"]:
        if isinstance(entry, dict):
            groups.setdefault(base_name(entry), []).append(entry)
    return groups


def _errored(entry: dict[str, Any]) -> bool:
    return entry.get("error_occurred") is True or entry.get("skipped") is True


def _whole(entries: list[dict[str, Any]]) -> bool:
    """Every repetition and, for a measured benchmark of several, its aggregates."""
    runs = [e for e in entries if e.get("run_type") != "aggregate"]
    repetitions = runs[0].get("repetitions", 1) if runs else 0
    if not runs or len(runs) < repetitions:
        return False
    measured = not any(_errored(e) for e in runs)
    return not (measured and repetitions > 1
                and not any(e.get("run_type") == "aggregate" for e in entries))


def keep_whole(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` without the entries of a benchmark cut off part-way."""
    whole = {name for name, entries in _groups(doc).items() if _whole(entries)}
    doc["benchmarks"] = [e for e in doc["benchmarks"] if base_name(e) in whole]
    return doc


def names(doc: dict[str, Any]) -> list[str]:
    """Every benchmark of the file, in file order."""
    return list(_groups(doc))


def finished(doc: dict[str, Any]) -> list[str]:
    """The benchmarks measured without an error (what a resume need not run again)."""
    return [name for name, entries in _groups(doc).items()
            if _whole(entries) and not any(_errored(e) for e in entries)]


def without(doc: dict[str, Any], dropped: set[str]) -> dict[str, Any]:
    doc["benchmarks"] = [e for e in doc["benchmarks"] if base_name(e) not in dropped]
    return doc


def registered(doc: dict[str, Any]) -> int | None:
    """How many benchmarks the binary set out to run (context gmb_benchmarks), if it says."""
    value = doc["context"].get(REGISTERED)
    return int(value) if isinstance(value, str) and value.isdigit() else None


def interrupted_text(signal: str, doc: dict[str, Any], note: str = "") -> str:
    """The gmb_interrupted value for `doc` as it now stands."""
    total = registered(doc)
    count = len(names(doc))
    of = f"{count} of {total}" if total is not None else f"{count}"
    return f"{signal} after {of} benchmarks{note}"


def merge(doc: dict[str, Any], part: dict[str, Any], adds_up: bool) -> dict[str, Any]:
    """`part`'s benchmarks after `doc`'s. The context stays `doc`'s (the same binary and GPU).
    `adds_up`: the part ran other benchmarks of the same flavor (the peer family of a node
    run), so its counts are added; otherwise it continued `doc`'s run (the watchdog, a resume),
    whose counts `doc` already holds. A stop of the part is restated for the whole."""
    doc["benchmarks"] += part["benchmarks"]
    context, extra = doc["context"], part["context"]
    for key in ("gmb_default_flavor_only", REGISTERED) if adds_up else ():
        counts = [c.get(key) for c in (context, extra)]
        if all(isinstance(n, str) and n.isdigit() for n in counts):
            context[key] = str(int(counts[0]) + int(counts[1]))
    context.pop(INTERRUPTED, None)
    if isinstance(extra.get(INTERRUPTED), str):
        context[INTERRUPTED] = interrupted_text(extra[INTERRUPTED].split(" after ")[0], doc)
    return doc


def write(doc: dict[str, Any], path: Path) -> None:
    """Write `doc` beside `path` and rename it over it: the file is whole at every moment."""
    write_whole(path, json.dumps(doc, indent=2) + "\n")
