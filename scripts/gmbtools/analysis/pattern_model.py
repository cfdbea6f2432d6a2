"""A typed pattern (`gmb pattern`) on the prediction model (docs/model.md): its kernel's shape
(`pattern_shape`), the model's parameters from the pattern run (`params`) and the bounds
(`bounds`), as every built-in benchmark has them."""

import math

from gmbtools.analysis import (frame, model_bounds, model_params, model_translation,
                               pattern_class)
from gmbtools.analysis.model_bounds import Shape
from gmbtools.analysis.pattern_class import BLOCKED
from gmbtools.data import results

# gmb pattern's operations: (the model's op, whether the loads follow the expression, the stores)
PATTERN_OPS = {"read": ("read", True, False), "write": ("write", False, True),
               "copy": ("copy", True, True), "gather": ("copy", True, False),
               "scatter": ("copy", False, True)}
SCATTERED = BLOCKED  # below this DRAM efficiency, without one lane step: a page each


def pattern_shape(op: str, word_bytes: float | None, k: int | None, block: int | None,
                  counters: dict, reach: float | None = None) -> Shape | None:
    """A `gmb pattern` kernel (kernels/pattern_rtc.cuh): a block of `block` threads per tile,
    each with its K loads of the word in flight, then its K stores. The side that follows the
    expression is `pattern_lane_step` words apart lane to lane where the binary measured one
    step; without one (a permutation, a hash), scattered, a page each, where most of each
    DRAM granule it brings goes unused, else streaming whole granules (a permutation within
    blocks), its loads touching a line per sector (the lines the binary counted, where it
    reports them); the other side coalesced. The efficiency is
    the bytes the GB/s counts over the DRAM bytes, above 1 only where lanes share words (DRAM
    moves each once). Its scattered loads each need an address translation where the pages of
    their set (`pattern_set_page_bytes`) span more than the TLB's `reach`; its block holds its
    slot by its warps' instructions (`model_warp_instructions`, the run kernel's SASS). None
    without the traffic model's counters."""
    dram, efficiency = counters.get("model_dram_bytes"), counters.get("model_efficiency")
    if op not in PATTERN_OPS or not (word_bytes and k and block and dram and efficiency):
        return None
    kind, loads_follow, stores_follow = PATTERN_OPS[op]
    threads = counters.get("pattern_threads")
    whole = efficiency  # over the whole launch, before the cap below
    if threads:  # bytes read and/or written, as the benchmark counts them, over DRAM's
        efficiency = whole = threads * k * word_bytes * (2 if kind == "copy" else 1) / dram
        if (counters.get("pattern_distinct_per_req") or 32) >= 32:
            efficiency = min(1.0, efficiency)  # no lanes share a word: DRAM moves it all
    lane = counters.get("pattern_lane_step")
    if lane is not None and math.isfinite(lane):
        step = abs(lane) * word_bytes if abs(lane) > 1 else None  # 0, 1: one word, coalesced
    else:
        local = pattern_class.local_efficiency(counters, whole)  # nearby warps' use
        step = math.inf if local < SCATTERED else None
    in_flight = counters.get("bytes_in_flight_per_sm")
    resident = int(in_flight / (k * word_bytes)) if in_flight and in_flight > 0 else None
    sectors = counters.get("model_ld_sectors_per_req")
    lines = None
    measured = counters.get("pattern_lines_per_req")  # the binary's count over its windows
    if loads_follow and sectors and measured and math.isfinite(measured) and measured > 0:
        lines = min(32.0, measured)
    elif loads_follow and sectors:  # else a load's 128-B lines: its lanes' step, its sectors'
        stepped = lane is not None and math.isfinite(lane)
        if stepped:  # a broadcast (step 0) is one word: one line
            lines = 1.0 if lane == 0 else min(32.0, max(1.0, 32 * (step or word_bytes) / 128))
        else:
            lines = min(32.0, sectors)
    return Shape(op=kind, load_bytes_per_thread=k * word_bytes, grid="full",
                 dram_bytes=dram, efficiency=efficiency, threads_per_block=int(block),
                 ld_sectors_per_req=sectors if kind != "write" else None, word_bytes=word_bytes,
                 resident_threads=resident or None,
                 read_step=step if loads_follow else None,
                 write_step=step if stores_follow else None,
                 lone_loads=loads_follow and step == math.inf, lines_per_request=lines,
                 instructions=counters.get("model_warp_instructions"),
                 translated=model_translation.translated(
                     counters.get("pattern_set_page_bytes"), reach,
                     loads_follow and step == math.inf))


def params(loaded: results.Results) -> model_params.Params | None:
    """The prediction model's parameters from the run, or None where it lacks the DRAM rates,
    the loaded curve or the calibration's chases (a run of the patterns alone)."""
    try:
        p = model_params.params_from(frame.medians_frame([loaded]))
    except (KeyError, ValueError):
        return None
    ready = p.read_gbs and p.write_gbs and p.copy_gbs and p.read_curve and p.chases and p.sms
    return p if ready else None


def bounds(p: model_params.Params | None, op: str, word_bytes: float | None, k: int | None,
           block: int | None, counters: dict) -> dict[str, float]:
    """The model's bounds (GB/s by name) for a pattern's kernel; empty without the parameters
    or the traffic model's counters."""
    shape = pattern_shape(op, word_bytes, k, block, counters, p and p.tlb_reach_bytes)
    if p is None or shape is None:
        return {}
    return model_bounds.bounds(p, shape)
