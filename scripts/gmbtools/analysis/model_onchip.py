"""Hot working sets (`cache/read/*`) and the constant cache (`constant/read/*/path:constant` of
its first level) predicted from the calibration probes of the `model/` family (`probes_from`):

- a hot read runs at the rate of the level that holds its set (`model_chases.level_of`): the
  L1's from a hot read of 40 KiB, the L2's from hot reads of 1.25, 10 and 20 MiB
  (`model/read/ws:*`): the L2's rate to the SMs falls as the set grows (its two partitions),
  so a set between two probes reads at a rate linear in log2(set) between theirs, and at the
  nearest probe's outside them; past the L2 the rate DRAM gives a persistent grid's stream
  (its blocks are all resident at once) for the reads the L2 misses. The L2 still keeps part
  of a set past it, as a cache that evicts a random line would: a line survives the misses
  between two reads of it with a chance of exp(-misses / capacity), so a set of W bytes hits
  a share h = exp(-(1 - h) W / C) (`past_l2_hits`). The capacity C is the calibration's set of
  1.5 L2s (`model/read/ws:*` past the L2): its hits from its rate, between the L2's and
  DRAM's. A set the L2 holds is still partly in the L1: a
  share L1 size / set size of its reads hit there (the probes' own share taken out of their
  rates first); with the smallest L1 carve-out (`l1:small`) the L1 holds what the unified
  memory leaves after the most shared memory the architecture allows, and the L2 answers
  sets of any size at the L2 bound's rate, the 20-MiB probe's (measured: at 512 KiB the small
  carve-out reads at about the rate of the L2's large sets, the default carve-out half again
  faster: docs/model.md);
- a warp's load from the constant cache is serialized by the distinct words it touches: its
  time is a fixed part plus one per distinct word, both from the probes of 1 and 32 words
  (`model/constant/distinct:1|32/ws:512/path:constant`), so 1/GB/s is linear in the count;
  the same loop's hot loads through the L1 (`path:global`, `path:ldg`) take one pass per warp
  load of a line: the calibration's loop through the L1 (`model/constant/distinct:1/ws:512/
  path:global`), else the fixed part;
- a table past the SM's constant cache (a few KiB) sends a share of its warp loads on to the
  GPC's constant cache, whose request rate then bounds them: the share grows with the table,
  as a cache that keeps a fixed part of it would, 1 - C / ws, so a load's time is linear in
  1 / ws; the calibration's tables of 16 and 32 KiB (`model/constant/distinct:1/ws:16384|32768/
  path:constant`) give the line, the whole 64-KiB bank is read off it (one word per load).
"""

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gmbtools.analysis.model_chases import CALIBRATION, level_of

# Most shared memory per SM by compute capability (the CUDA guide's table): the L1 of the
# smallest carve-out is the rest of the unified memory.
MAX_SHARED_PER_SM = {7.5: 64, 8.0: 164, 8.6: 100, 8.7: 164, 8.9: 100, 9.0: 228, 10.0: 228,
                     10.3: 228, 12.0: 100}  # KiB
# What the driver configures as shared memory for a kernel of 256-thread blocks that uses none
# (the family's working-set reads): Nsight Compute's "Shared Memory Configuration Size" for
# such kernels on an H200, 32 KiB (a KiB per block it keeps for itself, for the 32 blocks an SM
# may hold); the L1 of the default carve-out is the rest of the unified memory. Elsewhere none
# is known, and the model takes the whole unified memory.
DEFAULT_SHARED_PER_SM = {9.0: 32}  # KiB, by compute capability
# The L2 bound's hot read (model_bounds): a streaming kernel's lines are spread over the whole
# L2, as the largest set's within it are (on the H100 its 10- and 20-MiB probes read alike).
L2_RATE_SET = 20 * 2**20
CONSTANT_WS = 1024  # the constant family's curve: tables of 1 KiB (benchmarks/constant.cu)


@dataclass
class OnChipProbes:
    """Hot read rates by level (GB/s) and the constant cache's GB/s at 1 and 32 words."""

    read_gbs: dict = field(default_factory=dict)  # "l1", "l2" (the set nearest 20 MiB) -> GB/s
    l1_set: float | None = None  # the bytes of the probe within the L1 (its "l1" rate)
    l2_sets: dict = field(default_factory=dict)  # set bytes -> GB/s of each L2 probe
    past_l2: tuple | None = None  # (set bytes, GB/s) of the probe past the L2
    constant_gbs: dict = field(default_factory=dict)  # distinct words (or "global") -> GB/s
    constant_sets: dict = field(default_factory=dict)  # tables past the first level -> GB/s
    names: dict = field(default_factory=dict)


def probes_from(rows: pd.DataFrame, l1_bytes, l2_bytes) -> OnChipProbes | None:
    probes = OnChipProbes()
    model = rows.loc[(rows["family"] == CALIBRATION) & rows["gbs"].notna()]
    for _, row in model.iterrows():
        if row["variant"] == "read" and "ws" in row.index:
            ws = float(pd.to_numeric(row["ws"]))
            level = level_of(ws, l1_bytes, l2_bytes)
            if level == "l2":
                probes.l2_sets[ws] = float(row["gbs"])
            elif level == "dram":
                probes.past_l2 = (ws, float(row["gbs"]))
                probes.names["past_l2"] = str(row["name"])
            elif level == "l1":
                probes.read_gbs[level] = float(row["gbs"])
                probes.l1_set = ws
                probes.names[level] = str(row["name"])
        elif row["variant"] == "constant" and "distinct" in row.index:
            # the constant cache's by distinct words; the same loop's through the L1: "global"
            through_l1 = str(row.get("path")) == "global"
            ws = float(pd.to_numeric(row.get("ws"), errors="coerce"))
            if ws > CONSTANT_WS and not through_l1:  # a table past the first level
                probes.constant_sets[ws] = float(row["gbs"])
                probes.names[f"constant/ws:{int(ws)}"] = str(row["name"])
                continue
            key = "global" if through_l1 else int(pd.to_numeric(row["distinct"]))
            probes.constant_gbs[key] = float(row["gbs"])
            probes.names[f"constant/{key}"] = str(row["name"])
    if probes.l2_sets:  # the L2's rate for the L2 bound: the set nearest L2_RATE_SET
        ws = min(probes.l2_sets, key=lambda w: abs(math.log2(w / L2_RATE_SET)))
        probes.read_gbs["l2"] = probes.l2_sets[ws]
        probes.names["l2"] = f"model/read/ws:{int(ws)}"
    return probes if probes.read_gbs or probes.constant_gbs else None


def default_l1_bytes(l1_bytes, cc) -> float | None:
    """The L1 of the default carve-out: the unified memory less the shared memory the driver
    configures (`DEFAULT_SHARED_PER_SM`)."""
    return None if l1_bytes is None else l1_bytes - DEFAULT_SHARED_PER_SM.get(cc, 0) * 1024


def small_l1_bytes(l1_bytes, cc) -> float | None:
    shared = MAX_SHARED_PER_SM.get(cc)
    return None if l1_bytes is None or shared is None else l1_bytes - shared * 1024


def hot_read(probes: OnChipProbes | None, row, l1_bytes, l2_bytes, cc,
             dram_gbs) -> float | None:
    """GB/s of a `cache/read/ws:W[/l1:small]` row."""
    if probes is None or row["variant"] != "read":
        return None
    ws = pd.to_numeric(row.get("ws"), errors="coerce")
    if pd.isna(ws):
        return None
    small = str(row.get("l1")) == "small"
    default = default_l1_bytes(l1_bytes, cc)  # what the L1 holds of the probes' sets too
    l1 = small_l1_bytes(l1_bytes, cc) if small else default
    level = level_of(float(ws), l1, l2_bytes)
    cg = row.get("flavor") == "cg"  # no load keeps its line in the L1
    if level == "dram":
        return _past_l2(probes, float(ws), 0.0 if cg else default, dram_gbs)
    if cg and level is not None:
        return _through_l2(probes, float(ws), small)
    rate = probes.read_gbs.get(level)
    upper = probes.read_gbs.get("l1")
    if level == "l2" and rate and upper and l1:  # the L1 still holds l1 / ws of the set
        if not small:  # the smallest carve-out's reads of small sets run at a large set's rate
            rate = _l2_rate(probes, float(ws), upper, default) or rate
        held = l1 / float(ws)
        return 1 / (held / upper + (1 - held) / rate)
    return rate


def _through_l2(probes: OnChipProbes, ws: float, small: bool) -> float | None:
    """GB/s of the `cg` build's hot read of a set the L2 holds: its loads keep no line in the
    L1, so its own probes are all the L2's. A set no larger than the probe within the L1's size
    (40 KiB: a few hundred lines, on part of the L2's slices) reads at that probe's rate; a
    larger one at the L2's by set size (`_l2_rate`, no share in the L1), or with the smallest
    carve-out at the L2 bound's (20-MiB) probe's, as the default build's."""
    if probes.l1_set is not None and ws <= probes.l1_set:
        return probes.read_gbs.get("l1")
    if small:
        return probes.read_gbs.get("l2")
    return _l2_rate(probes, ws, upper=math.inf, l1_bytes=0.0) or probes.read_gbs.get("l2")


def _past_l2(probes: OnChipProbes, ws: float, l1_bytes, dram_gbs) -> float | None:
    """GB/s of a hot read of a set past the L2: its hits at the L2's rate (its largest
    probe's), the rest at DRAM's; DRAM's alone without the probe past the L2."""
    upper = probes.read_gbs.get("l1")
    hit = _l2_rate(probes, ws, upper, l1_bytes) if upper else None  # l1_bytes 0: none held
    if not (probes.past_l2 and hit and dram_gbs) or hit <= dram_gbs:
        return dram_gbs
    probe_ws, probe_gbs = probes.past_l2
    share = (1 / dram_gbs - 1 / probe_gbs) / (1 / dram_gbs - 1 / hit)  # the probe's hits
    if not 0.0 < share < 1.0:
        return dram_gbs
    capacity = -(1 - share) * probe_ws / math.log(share)
    h = past_l2_hits(ws / capacity)
    return 1 / (h / hit + (1 - h) / dram_gbs)


def past_l2_hits(sets: float) -> float:
    """The share of reads that hit in a cache that evicts a random line, for a set of `sets`
    capacities read over and over: the least h = exp(-(1 - h) sets) (all of them, 1, within
    one capacity), by iteration from 0."""
    if sets <= 1.0:
        return 1.0
    h = 0.0
    for _ in range(200):
        h = math.exp(-(1 - h) * sets)
    return h


def _l2_rate(probes: OnChipProbes, ws: float, upper: float, l1_bytes) -> float | None:
    """The L2's own rate to the SMs for a set of `ws` bytes: each probe's with the share its
    L1 held taken out (it ran with the default carve-out), linear in log2(set) between them."""
    if l1_bytes is None or not probes.l2_sets:
        return None
    sets = sorted(probes.l2_sets)
    found = []
    for w in sets:
        held = min(1.0, l1_bytes / w)
        left = 1 / probes.l2_sets[w] - held / upper  # its time less the L1's share
        if left > 0:
            found.append((w, (1 - held) / left))
    if not found:
        return None
    return float(np.interp(math.log2(ws), [math.log2(w) for w, _ in found],
                           [rate for _, rate in found]))


def constant_load(probes: OnChipProbes | None, row) -> float | None:
    """GB/s of a `constant/read/distinct:D/ws:1024/path:P` row: through the constant cache
    (`path:constant`), its fixed part and one per distinct word; through the L1 (`path:global`,
    `path:ldg`), whose warp load of one line (32 words or fewer, here always hot) is answered in
    one pass as the constant cache answers one word: the fixed part alone."""
    if probes is None:
        return None
    ws = pd.to_numeric(row.get("ws"), errors="coerce")
    distinct = pd.to_numeric(row.get("distinct"), errors="coerce")
    one, most = probes.constant_gbs.get(1), probes.constant_gbs.get(32)
    if ws > CONSTANT_WS and distinct == 1 and str(row.get("path")) == "constant":
        return past_first_level(probes.constant_sets, float(ws))
    if ws != CONSTANT_WS or pd.isna(distinct) or not (one and most):
        return None
    if str(row.get("path")) in ("global", "ldg"):  # the L1 probe's, else the fixed part
        return probes.constant_gbs.get("global", one)
    if str(row.get("path")) != "constant":
        return None
    per_word = (1 / most - 1 / one) / 31  # ns per byte, per further distinct word
    return 1 / (1 / one + (float(distinct) - 1) * per_word)


def past_first_level(sets: dict, ws: float) -> float | None:
    """GB/s of one-word constant loads from a table of `ws` bytes past the SM's constant
    cache: ns per byte linear in 1 / ws through the two probes nearest it (the largest two
    beyond them); None below the smallest probe (the first level's edge is not measured) or
    with fewer than two."""
    if len(sets) < 2 or ws < min(sets):
        return None
    nearest = sorted(sorted(sets, key=lambda w: abs(math.log2(w / ws)))[:2])
    (w0, g0), (w1, g1) = ((w, sets[w]) for w in nearest)
    slope = (1 / g1 - 1 / g0) / (1 / w1 - 1 / w0)
    ns_per_byte = 1 / g0 + slope * (1 / ws - 1 / w0)
    return 1 / ns_per_byte if ns_per_byte > 0 else None


def l2_read(rows: pd.DataFrame, l2_bytes: float | None) -> tuple[str, float] | None:
    """The hot read of the largest working set within half the L2 (default L1 carve-out)."""
    if l2_bytes is None or "ws" not in rows.columns:
        return None
    sets = rows.loc[(rows["family"] == "cache") & (rows["variant"] == "read")]
    if "l1" in sets.columns:
        sets = sets.loc[sets["l1"].isna() | sets["l1"].isin(["None", "nan", "<NA>"])]
    ws = pd.to_numeric(sets["ws"], errors="coerce")
    fits = sets.loc[(ws <= l2_bytes / 2) & sets["gbs"].notna()]
    if fits.empty:
        return None
    best = fits.loc[pd.to_numeric(fits["ws"], errors="coerce").idxmax()]
    return str(best["name"]), float(best["gbs"])
