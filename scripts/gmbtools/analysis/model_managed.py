"""Managed pages that migrate (`managed/read/prefetch:gpu`, `…/advice:read_mostly`,
`…/pages:host`, benchmarks/managed.cu): each iteration moves the array's pages from the host
to the GPU, by the driver's prefetch or by the read's own page faults, then reads them there,
so its time is the migration's. That time is a fixed part (the driver's work for the call, or
for the first fault batch) and a part per byte; the calibration runs each migration at half and
twice the family's size (`model/managed/read/<placement>/bytes:B`), and the prediction is the
benchmark's bytes over the time the line through those two gives at its own size
(docs/model.md).
"""

import math

import pandas as pd

PROBES = "model/managed/read/"
MIGRATION = "migration"  # the driver's prefetch moves the pages
FAULTS = "page faults"  # the read's faults move (or duplicate) them


def lines_from(rows: pd.DataFrame) -> dict | None:
    """placement (`prefetch:gpu`, ...) -> ((bytes, ns), (bytes, ns)): each migration's two
    probes, smaller first; None without a pair."""
    probes = rows.loc[rows["name"].astype(str).str.startswith(PROBES)]
    points: dict = {}
    rates = pd.to_numeric(probes["gbs"], errors="coerce")
    for name, gbs in zip(probes["name"], rates):
        placement, _, size = str(name)[len(PROBES):].partition("/bytes:")
        size = pd.to_numeric(size, errors="coerce")
        if math.isfinite(gbs) and gbs > 0 and math.isfinite(size) and size > 0:
            size, gbs = float(size), float(gbs)
            points.setdefault(placement, []).append((size, size / gbs))  # GB/s is bytes per ns
    lines = {k: (min(v), max(v)) for k, v in points.items() if len({b for b, _ in v}) >= 2}
    return lines or None


def migrates(row) -> bool:
    """Whether a row is one of the family's migrating reads (not the pages left on the GPU)."""
    return row["family"] == "managed" and row["variant"] == "read" and placement(row) != "touch:gpu"


def placement(row) -> str:
    """The name's placement part: managed/read/<placement>."""
    parts = str(row["name"]).split("/")
    return parts[2] if len(parts) > 2 else ""


def managed_gbs(lines: dict | None, row) -> tuple[float, str] | None:
    """(GB/s, bound) of one migrating row: its bytes (the read's, `model_dram_bytes`) over the
    probes' line at that size, which lies between the two (half and twice it); None without
    the probes or the count, or where the line gives no time."""
    where = placement(row)
    size = pd.to_numeric(row.get("model_dram_bytes"), errors="coerce")
    if not lines or where not in lines or pd.isna(size) or size <= 0:
        return None
    (b1, t1), (b2, t2) = lines[where]
    ns = t1 + (t2 - t1) / (b2 - b1) * (float(size) - b1)
    if ns <= 0:
        return None
    return float(size) / ns, MIGRATION if where.startswith("prefetch") else FAULTS
