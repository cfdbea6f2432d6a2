"""Hot working sets (`cache/read/*`) and the constant cache (`constant/read/*/path:constant` of
its first level) predicted from the calibration probes of the `model/` family (`probes_from`):

- a hot read runs at the rate of the level that holds its set (`model_chases.level_of`): the
  L1's and the L2's from hot reads of 40 KiB and 10 MiB (`model/read/ws:*`), past the L2 the
  rate DRAM gives a persistent grid's stream (its blocks are all resident at once); a set the
  L2 holds is still partly in the L1: a share L1 size / set size of its reads hit there; with the smallest L1 carve-out (`l1:small`) the L1 holds what the unified memory
  leaves after the most shared memory the architecture allows;
- a warp's load from the constant cache is serialized by the distinct words it touches: its
  time is a fixed part plus one per distinct word, both from the probes of 1 and 32 words
  (`model/constant/distinct:1|32/ws:512/path:constant`), so 1/GB/s is linear in the count;
  the same loop's hot loads through the L1 (`path:global`, `path:ldg`) take one pass per warp
  load of a line: the fixed part.
"""

from dataclasses import dataclass, field

import pandas as pd

from gmbtools.analysis.model_chases import CALIBRATION, level_of

# Most shared memory per SM by compute capability (the CUDA guide's table): the L1 of the
# smallest carve-out is the rest of the unified memory.
MAX_SHARED_PER_SM = {7.5: 64, 8.0: 164, 8.6: 100, 8.7: 164, 8.9: 100, 9.0: 228, 10.0: 228,
                     10.3: 228, 12.0: 100}  # KiB
CONSTANT_WS = 1024  # the constant family's curve: tables of 1 KiB (benchmarks/constant.cu)


@dataclass
class OnChipProbes:
    """Hot read rates by level (GB/s) and the constant cache's GB/s at 1 and 32 words."""

    read_gbs: dict = field(default_factory=dict)  # "l1", "l2" -> GB/s
    constant_gbs: dict = field(default_factory=dict)  # distinct words -> GB/s
    names: dict = field(default_factory=dict)


def probes_from(rows: pd.DataFrame, l1_bytes, l2_bytes) -> OnChipProbes | None:
    probes = OnChipProbes()
    model = rows.loc[(rows["family"] == CALIBRATION) & rows["gbs"].notna()]
    for _, row in model.iterrows():
        if row["variant"] == "read" and "ws" in row.index:
            level = level_of(float(pd.to_numeric(row["ws"])), l1_bytes, l2_bytes)
            if level in ("l1", "l2"):
                probes.read_gbs[level] = float(row["gbs"])
                probes.names[level] = str(row["name"])
        elif row["variant"] == "constant" and "distinct" in row.index:
            distinct = int(pd.to_numeric(row["distinct"]))
            probes.constant_gbs[distinct] = float(row["gbs"])
            probes.names[f"constant/{distinct}"] = str(row["name"])
    return probes if probes.read_gbs or probes.constant_gbs else None


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
    l1 = small_l1_bytes(l1_bytes, cc) if small else l1_bytes
    level = level_of(float(ws), l1, l2_bytes)
    if level == "dram":
        return dram_gbs
    rate = probes.read_gbs.get(level)
    upper = probes.read_gbs.get("l1")
    if level == "l2" and rate and upper and l1:  # the L1 still holds l1 / ws of the set
        held = l1 / float(ws)
        return 1 / (held / upper + (1 - held) / rate)
    return rate


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
    if ws != CONSTANT_WS or pd.isna(distinct) or not (one and most):
        return None
    if str(row.get("path")) in ("global", "ldg"):
        return one
    if str(row.get("path")) != "constant":
        return None
    per_word = (1 / most - 1 / one) / 31  # ns per byte, per further distinct word
    return 1 / (1 / one + (float(distinct) - 1) * per_word)
