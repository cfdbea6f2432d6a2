"""The throughput model of the inflight family: Little's law with the latency under load.

An SM that keeps `bif` bytes of loads in flight, each round trip taking `R` ns, reads
`bif / R` bytes per ns; `sms` SMs read `sms * bif / R` GB/s. The round trip is the DRAM latency
*under the load the kernel itself makes*: the loaded-latency curve (`latency/loaded/*`: the
chase's latency against the bandwidth other SMs stream) gives L(B), so the prediction is the
bandwidth B that solves (with the curve of the same operation: `load:read` for reads,
`load:copy` for copies, whose DRAM turns between reads and writes)

    B = min(roof, factor * sms * bif / (L(B) + extra))

(roof: the theoretical peak, or less where the curve's streams never moved more: a copy's
DRAM turns between reads and writes and tops out lower; factor 2 for a copy: every byte read
brings one written). `extra` is what a round costs beyond the chase's latency, measured in the
same run:

- the kernel's own round: one warp per SM on a persistent grid (`block:32/bpsm:1`) of the same
  operation, word and loads per thread takes R1 per round at almost no load, so
  extra = R1 - L(its bandwidth). Without that case, extra = 0: the plain Little's law.
- the SM's drain: a warp's round also waits for the bytes the SM's other warps hold in flight,
  which the SM takes in at a rate D (read bytes per ns): extra += (bytes in flight per SM - one
  warp's bytes) / D. D is fitted per operation to the run's persistent cases of 2 to 4 warps
  per SM below 60% of what the loaded streams moved (least squares through the origin of the
  round left over after L(B) and R1, against the other warps' bytes), and predicts all the
  others; with fewer than `DRAIN_MIN_CASES` such cases (the quick sweep) there is no drain term.
- one block per tile (`grid:full`): each block also holds its slot for the turnaround of an
  empty block (`inflight/blocks/block:B/bpsm:1`, `block_slot_ns`), and the GPU starts at most
  `blocks_per_us` blocks (`inflight/blocks/block:B/bpsm:K`): a cap of blocks_per_us * bytes
  per block.

All of it from one results file (one flavor of one run): `model_gbs(medians)` fills the
column `model_gbs` for the inflight read and copy rows whose inputs the file holds.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

LOADED = ("latency", "loaded")
CALIBRATION = "model"  # the model's loaded chases at other loads: model/loaded/load:read/sms:K
DRAIN_MIN_CASES = 8  # persistent cases of 2 to 4 warps per SM needed to fit the drain rate
DRAIN_WARPS = (2, 4)  # warps per SM of the cases that fit it: past one warp, far below the roof
DRAIN_BELOW_ROOF = 0.6


@dataclass(frozen=True)
class LoadedCurve:
    """Latency (ns) against the bandwidth streamed beside it (GB/s), sorted by bandwidth."""

    gbs: np.ndarray
    ns: np.ndarray

    def latency(self, gbs: float) -> float:
        """L(gbs), linear between the measured points, flat beyond them."""
        return float(np.interp(gbs, self.gbs, self.ns))

    @property
    def idle_ns(self) -> float:
        return float(self.ns[0])

    @property
    def most_gbs(self) -> float:
        """The most the streams moved: what the memory delivers to this kind of traffic."""
        return float(self.gbs[-1])


def loaded_curve(rows: pd.DataFrame, load: str = "read") -> LoadedCurve | None:
    """The curve from one file's `latency/loaded/load:<load>/*` rows and the model's
    calibration at other loads, `model/loaded/load:<load>/*` (None when it has none)."""
    if not {"latency_ns", "load_gbs", "load"} <= set(rows.columns):
        return None
    points = rows.loc[rows["family"].isin([LOADED[0], CALIBRATION])
                      & (rows["variant"] == LOADED[1]) & (rows["load"] == load)]
    points = points.dropna(subset=["latency_ns", "load_gbs"])
    if points.empty:
        return None
    return curve_of(points["load_gbs"], points["latency_ns"])


def curve_of(gbs, ns) -> LoadedCurve:
    """A curve from (bandwidth, latency) points in any order. Near saturation more streams
    move no more bytes, only wait longer, so two loads' points can swap: the latency is kept
    from falling as the bandwidth rises (solve needs that)."""
    gbs, ns = np.asarray(gbs, float), np.asarray(ns, float)
    order = np.argsort(gbs, kind="stable")
    return LoadedCurve(gbs[order], np.maximum.accumulate(ns[order]))


def solve(bif: float, sms: float, peak: float, curve: LoadedCurve, *,
          extra_ns: float | Callable[[float], float] = 0.0, cap_gbs: float = math.inf,
          factor: float = 1.0) -> float:
    """The bandwidth B (GB/s) with B = min(peak, cap, factor * sms * bif / (L(B) + extra)).
    The right side falls as B grows (latency rises with load, and an `extra_ns(B)` given as a
    function must not fall), so one B solves it: bisection."""
    extra = extra_ns if callable(extra_ns) else (lambda _: extra_ns)

    def supply(b: float) -> float:
        return min(peak, cap_gbs, factor * sms * bif / (curve.latency(b) + extra(b)))

    if supply(peak) >= peak:
        return peak
    lo, hi = 0.0, peak
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if supply(mid) > mid else (lo, mid)
    return lo


def model_gbs(medians: pd.DataFrame) -> pd.Series:
    """`model_gbs` for every inflight read and copy row (NaN elsewhere and where the file
    lacks the loaded curve, the SM count or the peak)."""
    out = pd.Series(np.nan, index=medians.index, dtype=float)
    needed = {"family", "variant", "bytes_in_flight_per_sm", "file"}
    if medians.empty or not needed <= set(medians.columns):
        return out
    for _, rows in medians.groupby("file", sort=False):
        _fill_file(rows, out)
    return out


def _fill_file(rows: pd.DataFrame, out: pd.Series) -> None:
    curves = {op: loaded_curve(rows, op) for op in ("read", "copy")}
    sms = _first(rows, "gpu_sms")
    peak = _first(rows, "gpu_peak_gbs")
    if sms is None or peak is None:
        return
    if not {"w", "ilp", "block", "bpsm", "grid"} <= set(rows.columns):
        return
    # Other families share these keys with values of their own (texture's block:32x8): the
    # column is text then, and inflight's values are read back as numbers.
    inflight = rows.loc[rows["family"] == "inflight"].copy()
    for key in ("w", "ilp", "block", "bpsm"):
        inflight[key] = pd.to_numeric(inflight[key], errors="coerce")
    cases = inflight.loc[inflight["variant"].isin(["read", "copy"])]
    cases = cases.dropna(subset=["bytes_in_flight_per_sm", "gbs"])
    if cases.empty:
        return
    blocks = inflight.loc[inflight["variant"] == "blocks"]
    extra = _round_excess(cases, sms, curves)
    drain = {op: drain_rate(cases, sms, curves, extra, op) for op in curves}
    for index, case in cases.iterrows():
        curve = curves[case["variant"]]
        if curve is None:
            continue
        factor = 2.0 if case["variant"] == "copy" else 1.0
        extra_ns = extra.get((case["variant"], case["w"], case["ilp"]), 0.0)
        if drain[case["variant"]]:
            others = case["bytes_in_flight_per_sm"] - _warp_bytes(case)
            extra_ns += max(0.0, others) / drain[case["variant"]]
        cap = math.inf
        if case["grid"] == "full":
            slot = _blocks_value(blocks, case["block"], 1, "block_slot_ns")
            rate = _blocks_value(blocks, case["block"], case["bpsm"], "blocks_per_us")
            extra_ns += slot or 0.0
            if rate:  # blocks per us x bytes per block, in GB/s
                cap = rate * 1e6 * case["block"] * case["ilp"] * case["w"] * factor / 1e9
        roof = min(peak, curve.most_gbs)
        out[index] = solve(float(case["bytes_in_flight_per_sm"]), sms, roof, curve,
                           extra_ns=extra_ns, cap_gbs=cap, factor=factor)


def drain_rate(cases: pd.DataFrame, sms: float, curves: dict[str, LoadedCurve | None],
               extra: dict, op: str) -> float | None:
    """D of one operation (read bytes per ns per SM), fitted to the persistent cases of 2 to 4
    warps per SM below 60% of what the loaded streams moved: their round left over after L(B)
    and the one-warp round R1, against the bytes the SM's other warps hold in flight (None when
    too few cases)."""
    curve = curves.get(op)
    if curve is None:
        return None
    fit = cases.loc[(cases["variant"] == op) & (cases["grid"] == "persistent")
                    & (cases["gbs"] < DRAIN_BELOW_ROOF * curve.most_gbs)]
    fit = fit.dropna(subset=["w", "ilp", "block", "bpsm"])
    warps = fit["block"] * fit["bpsm"] / 32
    fit = fit.loc[warps.between(*DRAIN_WARPS)]
    if len(fit) < DRAIN_MIN_CASES:
        return None
    factor = 2.0 if op == "copy" else 1.0
    per_sm = fit["gbs"] / factor / sms
    left = (fit["bytes_in_flight_per_sm"] / per_sm
            - [curve.latency(b) for b in fit["gbs"]]
            - [extra.get((op, w, ilp), 0.0) for w, ilp in zip(fit["w"], fit["ilp"])])
    others = fit["bytes_in_flight_per_sm"] - _warp_bytes(fit)
    slope = float((others * left).sum())  # ns per byte, times the sum of squares below
    return float((others * others).sum()) / slope if slope > 0 else None


def _warp_bytes(case):
    """The bytes one warp holds in flight: 32 threads x loads per thread x word."""
    return 32 * case["ilp"] * case["w"]


def _round_excess(cases: pd.DataFrame, sms: float,
                  curves: dict[str, LoadedCurve | None]) -> dict:
    """Per (operation, word, loads per thread): one warp's round trip per SM beyond the chase
    latency at the bandwidth it made (never below zero)."""
    alone = cases.loc[(cases["block"] == 32) & (cases["bpsm"] == 1)
                      & (cases["grid"] == "persistent")]
    excess = {}
    for _, case in alone.iterrows():
        curve = curves[case["variant"]]
        if curve is None:
            continue
        factor = 2.0 if case["variant"] == "copy" else 1.0
        per_sm = case["gbs"] / factor / sms  # read bytes per ns per SM
        round_ns = case["bytes_in_flight_per_sm"] / per_sm
        excess[(case["variant"], case["w"], case["ilp"])] = max(
            0.0, round_ns - curve.latency(case["gbs"]))
    return excess


def _blocks_value(blocks: pd.DataFrame, block: int, bpsm: int, column: str) -> float | None:
    if blocks.empty or column not in blocks.columns:
        return None
    match = blocks.loc[(blocks["block"] == block) & (blocks["bpsm"] == bpsm), column].dropna()
    return float(match.iloc[0]) if not match.empty else None


def _first(rows: pd.DataFrame, column: str) -> float | None:
    values = rows[column].dropna() if column in rows.columns else pd.Series([], dtype=float)
    return float(values.iloc[0]) if not values.empty else None
