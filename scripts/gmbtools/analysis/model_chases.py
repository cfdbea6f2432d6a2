"""The chases' prediction (`latency/chase/*`, `tlb/chase/*`, `latency/loaded/*`): each step
waits one round trip to the level that holds the working set, timed as the chase kernel runs
(kernels/latency.cuh): a launch walks `STEPS` timed steps after walking a set of at most
`STEPS` lines once untimed (each line comes from the L2 for the first lane that reaches it,
from the L1 for the others), plus the launch's own time. Under a load of K streaming SMs
(`latency/loaded/load:L/sms:K`), a launch's time is linear in K between the calibration's
loaded chases at the loads around K, and past the last two, on their line: once DRAM is
saturated, every further SM's bytes in flight wait in its queues (Little's law); with no
stream, the least loaded probe's time (a few streams of reads leave the queues empty). Every number
comes from the calibration chases of the `model/` family, one working set per level and the
loaded chase at other loads (`probes_from`), none from the families predicted.
"""

import math
from dataclasses import dataclass, field

import pandas as pd

CHASE_FAMILIES = ("latency", "tlb")  # the families predicted here
CALIBRATION = "model"  # the family of the calibration chases: model/chase/ws:W/lanes:L
LINE = 128  # bytes per chase step's line (include/gmb/chase.hpp: kChaseLineBytes)
STEPS = 2048  # timed steps per launch (benchmarks/builders/chase_chain.cuh: kStepsPerLaunch)
ADDRESS_BYTES = 8  # what one step loads (bytes_read counts it)


@dataclass
class ChaseProbes:
    """Latency per step by (level, lanes) and each launch's own time by lanes, in ns."""

    ns: dict = field(default_factory=dict)
    launch_ns: dict = field(default_factory=dict)
    names: dict = field(default_factory=dict)  # (level, lanes) -> the probe's name
    loaded: dict = field(default_factory=dict)  # load -> [(streaming SMs, ns per launch)]


def level_of(ws: float, l1_bytes: float | None, l2_bytes: float | None) -> str | None:
    """The level that holds a hot working set: the L1 up to its size (`l1_bytes`: the SM's
    unified L1 and shared memory, or what a carve-out leaves), the L2 up to its size, DRAM
    past it."""
    if l1_bytes is None or l2_bytes is None:
        return None
    if ws <= l1_bytes:
        return "l1"
    return "l2" if ws <= l2_bytes else "dram"


def probes_from(rows: pd.DataFrame, l1_bytes, l2_bytes) -> ChaseProbes | None:
    """The calibration chases of one file's medians (None without them). The launch's own time
    is the DRAM probe's time per launch less its steps."""
    chases = rows.loc[(rows["family"] == CALIBRATION) & (rows["variant"] == "chase")]
    if chases.empty or not {"ws", "lanes", "latency_ns"} <= set(rows.columns):
        return None
    probes = ChaseProbes()
    for _, row in chases.iterrows():
        ws, lanes = (pd.to_numeric(row[key], errors="coerce") for key in ("ws", "lanes"))
        ns, gbs = row["latency_ns"], row["gbs"]
        level = None if pd.isna(ws) else level_of(float(ws), l1_bytes, l2_bytes)
        if level is None or pd.isna(lanes) or not (ns > 0 and gbs > 0):
            continue
        probes.ns[(level, int(lanes))] = float(ns)
        probes.names[(level, int(lanes))] = str(row["name"])
        if level == "dram":
            per_launch = int(lanes) * STEPS * ADDRESS_BYTES / float(gbs)
            probes.launch_ns[int(lanes)] = max(0.0, per_launch - STEPS * float(ns))
    loaded = rows.loc[(rows["family"] == CALIBRATION) & (rows["variant"] == "loaded")]
    for _, row in loaded.dropna(subset=["gbs"]).iterrows():
        sms = pd.to_numeric(row.get("sms"), errors="coerce")
        if pd.notna(sms) and row["gbs"] > 0:
            probes.loaded.setdefault(str(row.get("load")), []).append(
                (float(sms), STEPS * ADDRESS_BYTES / float(row["gbs"])))
    for points in probes.loaded.values():
        points.sort()
    return probes if probes.ns or probes.loaded else None


def predict(probes: ChaseProbes | None, row, l1_bytes, l2_bytes) -> float | None:
    """GB/s of one chase row, or None where the run has no probe for it."""
    if probes is None:
        return None
    if row["variant"] == "loaded":  # idle: the DRAM chase alone; loaded: the loaded probes
        sms = pd.to_numeric(row.get("sms"), errors="coerce")
        loaded = None if pd.isna(sms) else _loaded_rate(probes, str(row.get("load")), float(sms))
        return _rate(probes, 1, "dram", warm_lines=0) if loaded is None and sms == 0 else loaded
    if row["variant"] != "chase":
        return None
    if row["family"] == "tlb":  # one lane, loads past the L1 to lines the L2 holds
        return _rate(probes, 1, "l2", warm_lines=0)
    ws = pd.to_numeric(row.get("ws"), errors="coerce")
    lanes = pd.to_numeric(row.get("lanes"), errors="coerce")
    if pd.isna(ws) or pd.isna(lanes):
        return None
    lines = float(ws) / LINE
    return _rate(probes, int(lanes), level_of(float(ws), l1_bytes, l2_bytes),
                 warm_lines=lines if lines <= STEPS else 0)


def _rate(probes: ChaseProbes, lanes: int, level: str | None, warm_lines: float) -> float | None:
    step = probes.ns.get((level, lanes))
    over = probes.launch_ns.get(lanes)
    if step is None or over is None:
        return None
    warm = 0.0
    if warm_lines:
        l1, l2 = probes.ns.get(("l1", lanes)), probes.ns.get(("l2", lanes))
        if l1 is None or l2 is None:
            return None
        first = warm_lines / lanes  # a miss for the first lane that reaches the line
        warm = first * l2 + (warm_lines - first) * l1
    ns = over + warm + STEPS * step
    return lanes * STEPS * ADDRESS_BYTES / ns if ns > 0 and math.isfinite(ns) else None


def _loaded_rate(probes: ChaseProbes, load: str, sms: float) -> float | None:
    """GB/s of the loaded chase under `sms` streaming SMs: its launch's time linear in the
    streaming SMs between the two probes around `sms` and on the last two's line past them;
    with no stream, the least loaded probe's of any load (a few streams of reads leave DRAM's
    queues empty: the idle latency)."""
    points = probes.loaded.get(load, [])
    if len(points) < 2:
        return None
    idle = min(found[0][1] for found in probes.loaded.values())
    points = [(0.0, idle), *points]
    right = next((i for i, (k, _) in enumerate(points) if k >= sms), len(points) - 1)
    (k0, ns0), (k1, ns1) = points[max(right, 1) - 1], points[max(right, 1)]
    ns = ns0 + (ns1 - ns0) * (sms - k0) / (k1 - k0)
    return STEPS * ADDRESS_BYTES / ns if ns > 0 else None


PARTITION = "model/l2_partition/"  # the L2 partition probe (benchmarks/l2_partition.cu)


@dataclass
class L2Partition:
    """The L2 from each SM (`model/l2_partition/*`), ns per dependent load: every SM's walk over
    lines it read itself (near: the median, the least and the most over the SMs), and its first
    walk over lines the home SM read, the median over the SMs that find them as near as it does
    and over those that find them farther (`far_sms` of `sms`; None where none does: one L2)."""

    near_ns: float
    near_min_ns: float
    near_max_ns: float
    first_ns: float
    far_sms: int
    far_first_ns: float | None = None
    far_first_min_ns: float | None = None
    far_first_max_ns: float | None = None


def partition_from(rows: pd.DataFrame) -> L2Partition | None:
    """The L2 partition probe of one file's medians, or None without it."""
    probe = rows.loc[rows["name"].astype(str).str.startswith(PARTITION)]
    if probe.empty or "l2_first_ns" not in probe.columns:
        return None
    row = probe.iloc[0]

    def number(column: str) -> float | None:
        v = pd.to_numeric(row.get(column), errors="coerce")
        return float(v) if pd.notna(v) else None

    near, first, far_sms = number("latency_ns"), number("l2_first_ns"), number("l2_far_side_sms")
    if not (near and first) or far_sms is None:
        return None
    far = number("l2_first_far_side_ns") if far_sms > 0 else None
    return L2Partition(near, number("l2_near_ns_min") or near, number("l2_near_ns_max") or near,
                       first, int(far_sms), far,
                       far and number("l2_first_far_side_ns_min"),
                       far and number("l2_first_far_side_ns_max"))


def sm_clock_ghz(rows: pd.DataFrame, sources: tuple[str, ...]) -> tuple[str, float] | None:
    """(source, GHz): the median SM clock (`sm_clock_mhz`) the chases of the first of `sources`
    (name prefixes) measured, or None."""
    if "sm_clock_mhz" not in rows.columns:
        return None
    for source in sources:
        mhz = rows.loc[rows["name"].str.startswith(source), "sm_clock_mhz"].dropna()
        if not mhz.empty:
            return source + "*", float(mhz.median()) / 1e3
    return None
