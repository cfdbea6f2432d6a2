"""The instruction term of the prediction model: a block of a grid of one block per tile holds
its SM slot while its warps issue their instructions, so the more each warp issues, the longer
the SM waits for the next block's loads (docs/model.md, the instruction term).

The calibration's probes `model/instructions/f32/extra:K` (K = 4, 16, 32, 64) are the f32 copy
on a block per tile with K more dependent multiply-adds before the load. Each probe's count
(`model_warp_instructions`, from the binary's SASS) and its GB/s (`probes_from`, a parameter)
give the block slot with which Little's law reproduces it (`slots_from`, which the bounds
call with their own latency bound). A kernel that makes one pass with N instructions per
warp holds its slot for the slot at N: linear in N between the probes, along the nearest two
beyond them, never below 0 (`InstructionSlots.slot`).
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

PROBES = "model/instructions/f32/extra:"
COUNTER = "model_warp_instructions"
# A block whose eight warps load eight rows far apart (a 32 x 8 block over a row-major matrix)
# holds its slot longer than one loading 1 KiB in a row: it waits for the slowest of eight
# independent DRAM round trips. The calibration's row walk 2,000 wide (the sweep runs 1,000 to
# 4,096) gives how much longer (`model_bounds.rows_apart_ns`).
ROW_PROBE = "model/matrix/rows/w:2000/pad:0"


@dataclass(frozen=True)
class InstructionSlots:
    """The block slot (ns) against a warp's instructions, from the probes."""

    instructions: np.ndarray
    slots: np.ndarray

    def slot(self, instructions: float) -> float:
        x, y = self.instructions, self.slots
        if len(x) == 1:
            return float(y[0])
        i = int(np.clip(np.searchsorted(x, instructions) - 1, 0, len(x) - 2))
        slope = (y[i + 1] - y[i]) / (x[i + 1] - x[i])
        return max(0.0, float(y[i] + slope * (instructions - x[i])))


def probes_from(rows: pd.DataFrame) -> tuple | None:
    """The probes' (instructions, GB/s, DRAM bytes), fewest instructions first, or None where
    the run lacks two of them."""
    if "name" not in rows.columns or COUNTER not in rows.columns:
        return None
    probes = rows.loc[rows["name"].astype(str).str.startswith(PROBES)]
    points = {}
    for _, row in probes.iterrows():
        values = [pd.to_numeric(row.get(key), errors="coerce")
                  for key in (COUNTER, "gbs", "model_dram_bytes")]
        if not any(pd.isna(v) for v in values) and values[1] > 0:
            points[float(values[0])] = (float(values[1]), float(values[2]))
    if len(points) < 2:
        return None
    return tuple((count, *points[count]) for count in sorted(points))


def row_probe_from(rows: pd.DataFrame) -> tuple | None:
    """(instructions, GB/s, DRAM bytes, efficiency, share of threads that load) of the row
    probe, or None where the run lacks it or its counters."""
    if "name" not in rows.columns or COUNTER not in rows.columns:
        return None
    found = rows.loc[rows["name"] == ROW_PROBE]
    if found.empty:
        return None
    row = found.iloc[0]
    values = [pd.to_numeric(row.get(key), errors="coerce")
              for key in (COUNTER, "gbs", "model_dram_bytes", "model_efficiency")]
    if any(pd.isna(v) or v <= 0 for v in values):
        return None
    # the name's width: whole warps along a row, the last one in part
    width = float(ROW_PROBE.split("/w:")[1].split("/")[0])
    return (*(float(v) for v in values), width / (32 * np.ceil(width / 32)))


def slots_from(probes: tuple | None,
               bound: Callable[[float, float], float]) -> InstructionSlots | None:
    """Each probe's block slot: the slot with which `bound(slot, dram_bytes)`, the latency
    bound of the f32 copy (one 4-B load per thread, a block per tile), equals its GB/s
    (bisection: the bound falls as the slot grows); None where fewer than two are found."""
    points = {}
    for count, gbs, dram in probes or ():
        lo, hi = 0.0, 20000.0
        if not bound(lo, dram) > gbs or not bound(hi, dram) < gbs:
            continue  # the latency bound cannot say it (no curve, or the DRAM bound's rate)
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if bound(mid, dram) > gbs else (lo, mid)
        points[count] = lo
    if len(points) < 2:
        return None
    counts = np.array(sorted(points))
    return InstructionSlots(counts, np.array([points[c] for c in counts]))
