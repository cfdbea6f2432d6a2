"""The DRAM page term of the prediction model: what scattered loads and stores cost beyond
streaming (docs/model.md, the page term).

- One access per DRAM page: the extra DRAM time per byte of loads (`Params.scatter_read`) and
  of stores (`scatter_write`), each from a copy whose one side is scattered and whose other
  side streams (`gather/random`, `scatter/random`): its measured time less what the streaming
  rates give its bytes, over its scattered bytes (`scatter_terms`).
- A step between streaming and a page each pays a share of that cost (`share`). The share is
  measured by the calibration's strided probes (`model/stride/f32/read|write/s:S`, steps of
  40 B to 6 KiB that the quick sweep does not run): each probe's extra time per scattered byte
  over the page's, at least 0 and at most `MOST` (`curves_from`). Between the probes the share
  is a smooth curve in log2(step) (below); it is 0 up to 32 B for loads (two or more share a
  64-B granule: DRAM streams) and only a word apart for stores (any gap leaves each sector in part: stores of
  wider words closer than a sector pay as f32 stores as far apart in words), the last probe's
  past it, and 1 from 4 KiB where no probe reaches that far. Steps past a page cost about what random accesses
  do (shares of 0.9 to 1.05): the probes past 1 KiB say how much. A copy strided on both
  sides pays less than its sides alone would: its share, of both sides' costs, comes from
  probes strided on both (`model/stride/f32/both/s:S`, `both_extra`). Between the probes the
  curve is the monotone cubic through them (Fritsch-Carlson, in log2(step)): the share rises
  as a steep S from about 100 B to 400 B apart, whose bends straight lines between the probes
  cut short (docs/model.md, the page term).
  Without probes: log-linear between a 64-B granule and a page (1 KiB for loads, 256 B for
  stores).
"""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gmbtools.analysis.kernel_shape import Shape, index_share

GRANULE = 64  # what DRAM moves per access (model_dram_granule_bytes)
# Without the probes: loads stream up to one per granule and take a page each from 1 KiB apart
# (an HBM pseudo-channel's page); a store of part of a sector is a read-modify-write, a page
# each already 256 B apart.
PAGE = {"read": 1024, "write": 256}
SOURCES = {"read": ("gather/random", "stride/f32/read/s:1024"),
           "write": ("scatter/random", "stride/f32/write/s:1024")}
PROBES = "model/stride/f32/{}/s:"  # the calibration's strided reads and writes
STREAMING, PAGE_EACH = 32, 4096  # bytes apart: the share is 0 up to the first, 1 from the second
WORD = 4  # stores stream only where they are a word apart: any gap leaves sectors in part
MOST = 2.0  # the largest share a probe may give (a strided step twice a random access's cost)


@dataclass(frozen=True)
class PageCurve:
    """The share of the page cost against the step (bytes), from the probes."""

    steps: np.ndarray
    shares: np.ndarray
    streaming: float = STREAMING  # the step up to which the share is 0

    def share(self, step: float) -> float:
        if step <= self.streaming:
            return 0.0
        steps, shares = [self.streaming, *self.steps], [0.0, *self.shares]
        if self.steps[-1] < PAGE_EACH:  # no probe past a page: one per page pays it all
            steps, shares = [*steps, PAGE_EACH], [*shares, 1.0]
        return monotone_cubic(np.log2(steps), np.array(shares), math.log2(step))


    def reaches(self, level: float) -> float | None:
        """The step (bytes) from which the share is `level` (the curve through the probes,
        bisected in log2(step) between the first probe that reaches it and the one before), or
        None where no probe does: with `level` 1, the DRAM page as the probes see it, the step
        from which a strided access pays what a random one does."""
        at = np.nonzero(self.shares >= level)[0]
        if not len(at):
            return None
        if at[0] == 0:
            return float(self.steps[0])
        lo, hi = math.log2(self.steps[at[0] - 1]), math.log2(self.steps[at[0]])
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.share(2 ** mid) < level else (lo, mid)
        return 2 ** hi


def monotone_cubic(x: np.ndarray, y: np.ndarray, at: float) -> float:
    """The piecewise cubic through (x, y) that keeps the points' rises and falls (no overshoot
    between two points; Fritsch and Carlson's slopes, the ends by the three-point rule), at
    `at`; the end values outside x."""
    if at <= x[0]:
        return float(y[0])
    if at >= x[-1]:
        return float(y[-1])
    h, delta = np.diff(x), np.diff(y) / np.diff(x)
    slopes = np.zeros(len(x))
    for k in range(1, len(x) - 1):  # the weighted harmonic mean where both sides agree
        if delta[k - 1] * delta[k] > 0:
            w1, w2 = 2 * h[k] + h[k - 1], h[k] + 2 * h[k - 1]
            slopes[k] = (w1 + w2) / (w1 / delta[k - 1] + w2 / delta[k])
    if len(x) == 2:  # one piece: the straight line
        slopes[:] = delta[0]
    else:
        for end, (h0, h1, d0, d1) in ((0, (h[0], h[1], delta[0], delta[1])),
                                      (-1, (h[-1], h[-2], delta[-1], delta[-2]))):
            slope = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1)
            if np.sign(slope) != np.sign(d0):
                slope = 0.0
            elif np.sign(d0) != np.sign(d1) and abs(slope) > 3 * abs(d0):
                slope = 3 * d0
            slopes[end] = slope
    k = int(np.searchsorted(x, at) - 1)
    t = (at - x[k]) / h[k]
    return float((2 * t**3 - 3 * t**2 + 1) * y[k] + (t**3 - 2 * t**2 + t) * h[k] * slopes[k] +
                 (-2 * t**3 + 3 * t**2) * y[k + 1] + (t**3 - t**2) * h[k] * slopes[k + 1])


def share(curves: dict | None, side: str, step: float | None, word: float = WORD) -> float:
    """0 for streaming accesses (`step` None), 1 for one per page, the measured curve (or
    the log-linear guess) between. Stores of `word` bytes closer than a sector pay by the
    part of each sector they leave unwritten: as the probes' f32 stores as far apart in
    words."""
    if step is None or step <= 0:
        return 0.0
    if not math.isfinite(step):
        return 1.0
    curve = (curves or {}).get(side)
    if curve is not None:
        if side == "write" and step <= STREAMING and word > 0:
            step = step * WORD / word
        return curve.share(step)
    if step <= GRANULE:
        return 0.0
    return min(1.0, math.log2(step / GRANULE) / math.log2(PAGE[side] / GRANULE))


def extra_per_scattered_byte(p, row, side: str) -> float | None:
    """A copy's DRAM time beyond what the streaming rates give its bytes (its indices free:
    `Shape.paced_split`), per byte of its scattered side (`side`: its loads, "read", or its
    stores, "write"), in ns; None without the traffic model's counters or the rates."""
    dram, eff, gbs = row.get("model_dram_bytes"), row.get("model_efficiency"), row.get("gbs")
    if not (_positive(dram, eff, gbs) and p.read_gbs and p.write_gbs):
        return None
    shape = Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram,
                  efficiency=eff, read_step=math.inf if side == "read" else None,
                  write_step=math.inf if side == "write" else None,
                  index_share=index_share(str(row.get("family"))))
    reads, writes = shape.paced_split
    scattered = reads if side == "read" else writes
    if scattered <= 0:
        return None
    base = p.dram_ns_per_byte(reads, writes) * (reads + writes)
    return (dram * eff / gbs - base) / scattered


def scatter_terms(p, rows: pd.DataFrame, take) -> None:
    """`scatter_read` and `scatter_write`: the first source of each the run has."""
    for side in ("read", "write"):
        for name in SOURCES[side]:
            row = rows.loc[rows["name"] == name]
            extra = None if row.empty else extra_per_scattered_byte(p, row.iloc[0], side)
            if extra is not None:
                take(f"scatter_{side}", max(0.0, extra), name)
                break


def both_extra(p, row) -> float | None:
    """A copy strided on both sides: its DRAM time beyond the streaming rates' over what both
    sides would add one per page (half its DRAM bytes each): the share both sides pay."""
    dram, eff, gbs = row.get("model_dram_bytes"), row.get("model_efficiency"), row.get("gbs")
    if not (_positive(dram, eff, gbs) and p.read_gbs and p.write_gbs and p.scatter_read
            and p.scatter_write):
        return None
    base = p.dram_ns_per_byte(dram / 2, dram / 2) * dram
    return (dram * eff / gbs - base) / (dram / 2 * (p.scatter_read + p.scatter_write))


def curves_from(p, rows: pd.DataFrame) -> dict | None:
    """The measured share curves, by side, and of copies strided on both ("both"); None
    without probes or the page costs."""
    curves = {}
    for side, cost in (("read", p.scatter_read), ("write", p.scatter_write), ("both", 1.0)):
        probes = rows.loc[rows["name"].str.startswith(PROBES.format(side))]
        points = []
        for _, row in probes.iterrows():
            step = 4.0 * float(row["name"].rsplit(":", 1)[1])
            extra = both_extra(p, row) if side == "both" else \
                extra_per_scattered_byte(p, row, side)
            if extra is not None and cost and STREAMING < step:
                points.append((step, min(MOST, max(0.0, extra / cost))))
        if points:
            points.sort()
            curves[side] = PageCurve(np.array([s for s, _ in points]),
                                     np.array([f for _, f in points]),
                                     WORD if side == "write" else STREAMING)
    return curves or None


def _positive(*values) -> bool:
    return all(v is not None and pd.notna(v) and np.isfinite(v) and v > 0 for v in values)
