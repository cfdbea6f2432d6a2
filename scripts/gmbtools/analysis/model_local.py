"""Per-thread arrays and spills in local memory (`local/`, benchmarks/local.cu): what bounds a
kernel whose time is its own instructions and its local stores, not its 8 global bytes per
thread (docs/model.md, "Local memory"):

- `warp issue`: an SM's four schedulers issue one warp instruction per cycle each; a warp
  issues `model_warp_instructions` (its SASS's straight path plus its loop's further trips);
- `SM to L2`: every local store of a warp (STL: the lanes' words interleaved, one 128-B line
  per 4-B word of a lane) goes on to the L2, at the rate the calibration's spilling kernel
  (`model/local/spill/live:64/regs:32/rounds:8`, half the family's rounds) moves such lines:
  its `model_local_store_lines` per warp times its warps per ns;
- `latency` (the arrays: one pass of a chain of folds): the f32 copy on a block per tile whose
  warps issue the kernel's instructions, its blocks as many per SM as its registers allow
  (`model_bounds`, the instruction term). The spills' rounds update 64 independent values,
  not one chain: the instruction probes do not say their slot.

The benchmark counts the global words and, for the arrays, the local words written and read
(4 B each): every bound is a rate of warps times those bytes.
"""

import math

from collections.abc import Callable

import pandas as pd

from gmbtools.analysis.kernel_shape import Shape

PROBE = "model/local/spill/live:64/regs:32/rounds:8"
ISSUE = "warp issue"
# model_bounds' names of the same bounds (model_bounds reads model_params, which reads this)
STORES, LATENCY = "SM to L2", "latency"
SCHEDULERS_PER_SM = 4  # warp schedulers of an SM, each issuing one instruction per cycle (sm_70 on)
LOCAL_READS = 64  # an array kernel's indexed reads per thread (kernels/local.cuh: kLocalReads)
GLOBAL_BYTES = 8.0  # a thread's global word read and word written
BLOCK = 256  # the family's threads per block (kLocalBlock)


def store_rate_from(rows: pd.DataFrame) -> float | None:
    """Local store lines the L2 takes per ns: the probe's lines per warp over its time per
    warp (GB/s over its counted bytes per warp); None without the probe or its counter."""
    found = rows.loc[rows["name"] == PROBE]
    if found.empty or "model_local_store_lines" not in found.columns:
        return None
    gbs, lines = (pd.to_numeric(found.iloc[0].get(k), errors="coerce")
                  for k in ("gbs", "model_local_store_lines"))
    if not (math.isfinite(gbs) and math.isfinite(lines) and gbs > 0 and lines > 0):
        return None
    return float(gbs) / (32 * GLOBAL_BYTES) * float(lines)


def bytes_per_thread(row) -> float:
    """What the benchmark counts per thread: the global words, and an array's words."""
    if row["variant"] != "array":
        return GLOBAL_BYTES
    size = pd.to_numeric(row.get("size"), errors="coerce")
    return GLOBAL_BYTES + 4.0 * (float(size) + LOCAL_READS)


def local_bounds(p, row, copy_bounds: Callable[[object, Shape], dict]) -> dict[str, float]:
    """Every bound that applies to one `local/` row, in GB/s of the bytes it counts;
    `copy_bounds(p, shape)` gives a shape's bounds (`model_bounds.bounds`)."""
    counted = 32 * bytes_per_thread(row)  # per warp
    if not math.isfinite(counted):
        return {}
    found: dict[str, float] = {}
    instructions = pd.to_numeric(row.get("model_warp_instructions"), errors="coerce")
    lines = pd.to_numeric(row.get("model_local_store_lines"), errors="coerce")
    if p.sms and p.sm_clock_ghz and math.isfinite(instructions) and instructions > 0:
        warps_per_ns = p.sms * SCHEDULERS_PER_SM * p.sm_clock_ghz / float(instructions)
        found[ISSUE] = warps_per_ns * counted
    if p.local_lines_per_ns and math.isfinite(lines) and lines > 0:
        found[STORES] = p.local_lines_per_ns / float(lines) * counted
    if row["variant"] == "array" and math.isfinite(instructions) and instructions > 0:
        blocks = pd.to_numeric(row.get("resident_blocks_per_sm"), errors="coerce")
        # the bounds are rates: one thread's global bytes stand for the total
        shape = Shape(op="copy", load_bytes_per_thread=4.0, grid="full",
                      dram_bytes=GLOBAL_BYTES, efficiency=1.0, ld_sectors_per_req=4.0,
                      word_bytes=4.0, store_bytes_per_thread=4.0,
                      instructions=float(instructions), spread_loads=True,
                      resident_threads=int(blocks) * BLOCK if math.isfinite(blocks) else None)
        latency = copy_bounds(p, shape).get(LATENCY)
        if latency:
            found[LATENCY] = latency * bytes_per_thread(row) / GLOBAL_BYTES
    return found


def local_gbs(p, row, copy_bounds) -> tuple[float, str] | None:
    """(GB/s, bound) of one `local/` row: the lowest bound; None where none applies."""
    found = local_bounds(p, row, copy_bounds)
    if not found:
        return None
    name = min(found, key=found.get)
    return found[name], name
