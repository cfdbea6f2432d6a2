"""The address-translation term of the prediction model (docs/model.md, address translation):
loads scattered over more pages than the SM's TLB reaches each need a translation of their own,
and the GPU makes only so many per ns, whether the line is then found in the L2 or in DRAM.

- The rate: the calibration's probe `model/translation/lines:131072/span:2147483648`, a gather
  whose loads after its first pass all hit 2^17 lines of the L2, 16 KiB apart over 2 GiB (1,024
  pages of 2 MiB): its loads per ns (a 4-B load and a 4-B store each, 8 B of its GB/s).
- The reach: the TLB family's chase one line per 2-MiB page (`tlb/chase/step:2097152/span:S`):
  the largest span whose latency is within `SAME_NS` of the smallest span's (on an H200 the
  chase takes 141.8 ns over 128 MiB and 146.4 over 2 GiB).
- A kernel's loads need a translation each where they are scattered (no lane step, a granule
  each) over a set whose pages span more than the reach (`translated`).
"""

import pandas as pd

PROBE = "model/translation/lines:131072/span:2147483648"
PROBE_BYTES_PER_LOAD = 8.0  # the probe's GB/s counts a 4-B load and a 4-B store per load
TLB_CHASES = "tlb/chase/step:2097152/span:"
SAME_NS = 2.0  # a chase this much slower than over the smallest span has left the TLB's reach


def loads_per_ns(value) -> float | None:
    """The probe's loads per ns (`value(name)`: its GB/s or None)."""
    gbs = value(PROBE)
    return gbs / PROBE_BYTES_PER_LOAD if gbs else None


def reach_bytes(rows: pd.DataFrame) -> float | None:
    """The largest span of the 2-MiB-page chases within `SAME_NS` of the smallest's latency, or
    None where the run has fewer than two such chases."""
    if "name" not in rows.columns or "latency_ns" not in rows.columns:
        return None
    chases = rows.loc[rows["name"].astype(str).str.startswith(TLB_CHASES)]
    points = sorted(
        (float(name.rsplit(":", 1)[1]), float(ns))
        for name, ns in zip(chases["name"], pd.to_numeric(chases["latency_ns"], errors="coerce"))
        if pd.notna(ns) and ns > 0)
    if len(points) < 2:
        return None
    first, reach = points[0][1], points[0][0]
    for span, ns in points[1:]:  # up to the first span past it (noise beyond is not reach)
        if ns > first + SAME_NS:
            break
        reach = span
    return reach


def translated(page_bytes: float | None, reach: float | None, scattered: bool) -> bool:
    """Whether each load needs a translation of its own: scattered loads over pages that span
    more than the TLB's reach."""
    return bool(scattered and page_bytes and reach and page_bytes > reach)

