"""The numbers of a peer matrix: which benchmark each measurement takes (the best kernel of
its types and ilp, the copy engine), the ratios kernel / copy engine, and the N x N table of
one measurement from matrix.json."""

import re
from dataclasses import dataclass
from typing import Any

from gmbtools.data import results


@dataclass(frozen=True)
class Measurement:
    """One N x N table: the best median GB/s of the benchmarks `pattern` matches, per pair."""

    key: str
    title: str
    pattern: str


MEASUREMENTS = (
    Measurement("copy_pull", "kernel copy, pull (partner -> this GPU)",
                r"peer/copy/[^/]+/ilp:\d+/dir:pull"),
    Measurement("copy_push", "kernel copy, push (this GPU -> partner)",
                r"peer/copy/[^/]+/ilp:\d+/dir:push"),
    Measurement("copy_both", "kernel copy, both ways at once",
                r"peer/copy/[^/]+/ilp:\d+/dir:both(_pull)?"),  # pulls: files before pushes
    Measurement("memcpy_pull", "copy engine (cudaMemcpyPeerAsync), pull",
                r"ref/memcpy_peer/dir:pull"),
    Measurement("memcpy_push", "copy engine, push", r"ref/memcpy_peer/dir:push"),
    Measurement("memcpy_both", "copy engine, both ways at once", r"ref/memcpy_peer/dir:both"),
    Measurement("read", "kernel read of the partner's memory", r"peer/read/[^/]+/ilp:\d+"),
    Measurement("write", "kernel write to the partner's memory", r"peer/write/[^/]+/ilp:\d+"),
)


# kernel / copy engine, per direction: how close the best kernel copy comes to the copy engine.
RATIOS = (("ratio_pull", "copy_pull", "memcpy_pull"), ("ratio_push", "copy_push", "memcpy_push"),
          ("ratio_both", "copy_both", "memcpy_both"))


def cells(medians: dict[str, results.Median]) -> dict[str, dict[str, Any]]:
    """Per measurement: the best valid median (GB/s) and its name, or the error of the
    benchmarks that matched and none valid; ratios kernel / copy engine."""
    found: dict[str, dict[str, Any]] = {}
    for m in MEASUREMENTS:
        matching = [v for name, v in medians.items() if re.fullmatch(m.pattern, name)]
        valid = [v for v in matching if v.error is None and v.bytes_per_second]
        if valid:
            best = max(valid, key=lambda v: v.bytes_per_second or 0)
            found[m.key] = {"gbs": (best.bytes_per_second or 0) / 1e9, "name": best.name}
        elif matching:
            found[m.key] = {"gbs": None, "name": matching[0].name, "error": matching[0].error}
    for key, kernel, engine in RATIOS:
        k, e = found.get(kernel, {}).get("gbs"), found.get(engine, {}).get("gbs")
        if k and e:
            found[key] = {"ratio": k / e}
    return found


def table(doc: dict[str, Any], key: str) -> list[list[float | str | None]]:
    """The N x N values of one measurement or ratio: a number, "error", "failed" (the pair has
    no numbers), None where the run had no such benchmark, "-" on the diagonal."""
    indices = [d["index"] for d in doc["devices"]]
    by_pair = {(p["device"], p["partner"]): p for p in doc["pairs"]}
    rows = []
    for i in indices:
        row: list[float | str | None] = []
        for j in indices:
            pair = by_pair.get((i, j))
            if i == j:
                row.append("-")
            elif pair is None or pair["error"]:
                row.append("failed")
            else:
                cell = pair["cells"].get(key, {})
                value = cell.get("gbs", cell.get("ratio"))
                row.append(value if value is not None else ("error" if cell else None))
        rows.append(row)
    return rows
