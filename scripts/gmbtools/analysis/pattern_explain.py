"""What `gmb pattern` says about a user's index expression: from one run's Google Benchmark JSON,
per `pattern/` benchmark, what it measured, what the model predicts, which built-in benchmark it
behaves like and what might make it faster. Pure functions on loaded results, no subprocess, so
tests explain hand-made files.

The prediction is the lower of two bounds:

- bandwidth: the roof (the better of the driver's copy and fill in the same run, `ref/memcpy_d2d`
  and `ref/memset`: what DRAM delivers in practice) times the model's DRAM efficiency (useful
  bytes / DRAM bytes, at most 1: a broadcast counts more bytes than it fetches);
- latency (Little's law): every SM keeps `bytes_in_flight_per_sm` of loads in flight, each a
  DRAM round trip, so the GPU moves gpu_sms * bytes_in_flight_per_sm / latency bytes per ns
  (= GB/s); twice that when each byte read is also written (copy, gather, scatter), as the
  measured GB/s counts both. The latency is the one under the load the pattern itself makes,
  from the loaded chase of the run (`latency/loaded/load:read|copy/*`, littles_law.solve), or
  the idle chase `latency/chase/ws:2147483648/lanes:1` when the run has no loaded curve.
  Without the chase in the file, or for a write (nothing to wait for), no such bound;
- L2 to SM: every request brings `sectors` 32-B sectors from the L2 for the distinct bytes its
  lanes asked for (`pattern_distinct_per_req` × word), so a pattern of 32 sectors for 128 B moves
  8 sector bytes per useful byte through the L2; the L2's rate is the hot read of the largest
  working set in the run that fits half the L2 (`cache/read/ws:S`, the `gpu_l2_bytes` of the
  context), times 2 for copy, gather and scatter (their GB/s count each byte twice).

The class comes from the shape counters the binary measures on the index table (lane step,
distinct elements per warp instruction, 128-B alignment of the runs) and the model's sectors
per request; docs/design.md has the model.
"""

import math
import re

import numpy as np
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gmbtools.analysis import arch, littles_law
from gmbtools.data import results
from gmbtools.errors import GmbError
from gmbtools.data.naming import element_bytes, split_name

FAMILY = "pattern"
MEMCPY, MEMSET = "ref/memcpy_d2d", "ref/memset"
CHASE = "latency/chase/ws:2147483648/lanes:1"
LOADED = "latency/loaded/load:"  # the chase beside streaming SMs: latency under load
L2_READS = "cache/read/ws:"  # hot reads of a working set: cache/read/ws:<bytes>
L2_SETS = (4194304, 8388608, 16777216, 33554432)  # those gmb pattern asks for
LINE_BYTES, SECTOR_BYTES, WARP = 128, 32, 32
# Words the built-in read/write/copy families measure (the others have no coalesced twin).
BUILTIN_WORDS = ("f32", "f64", "f32x2", "f32x4")
STRIDES = (1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 512, 1024)  # stride/f32/read/s:S
# How the binary writes '/' and ':' of an expression inside a name (neither may appear there).
_ENCODED = {"÷": "/", "¦": ":"}
_TOLERANCE = 1e-6

SUGGESTIONS = {
    "aos": "an array of structures? load whole structures through shared memory (aos_staged/) "
           "or store a structure of arrays (soa/)",
    "transpose": "a transpose through shared memory (the transpose/ ladder's tiled rung)",
    # The expression gives each slot k its element: one without k reads the same one K times.
    "wider": "wider words (--word f32x4) or more elements per thread (--k 4, with an index that "
             "uses k, e.g. (i/32)*128+k*32+lane) keep more bytes in flight",
    "sort": "sort or bucket the indices so a warp's lanes fall in few 128-B segments",
    "align": "align the start (pad the array or shift the index) to 128 B",
}


@dataclass
class Setting:
    """What the run measured besides the patterns: the references every prediction uses."""

    gpu_name: str | None
    flavor: str | None
    date: str | None
    peak_gbs: float | None  # theoretical (context gpu_peak_gbs)
    sms: int | None
    roof_gbs: float | None  # the better of ref/memcpy_d2d and ref/memset
    roof_name: str | None
    memcpy_gbs: float | None
    latency_ns: float | None  # the DRAM chase's, None when the run has no chase
    l2_gbs: float | None = None  # hot reads of a working set within half the L2
    loaded: dict = field(default_factory=dict)  # "read"/"copy" -> littles_law.LoadedCurve
    l2_name: str | None = None
    facts: str | None = None  # context gpu_facts: "measured", or what is a guide's


@dataclass
class Explanation:
    """One pattern benchmark, explained. GB/s are 10⁹ B/s of bytes read + written."""

    name: str
    expression: str
    op: str
    word: str
    word_bytes: int | None
    k: int | None
    block: int | None
    n: int | None  # where the name gives it (--n, --bytes)
    threads: int | None
    elements: int | None = None  # the array's, given or not
    error: str | None = None
    gbs: float | None = None
    pct_peak: float | None = None
    sectors_per_req: float | None = None  # the pattern side's (loads, or stores for write/scatter)
    efficiency: float | None = None
    roof_gbs: float | None = None
    bandwidth_gbs: float | None = None  # roof * min(1, efficiency)
    littles_gbs: float | None = None  # the latency bound; None where it does not apply
    latency_ns: float | None = None  # the DRAM latency it used (under that load, when known)
    l2_bound_gbs: float | None = None  # the L2-to-SM bound; None without an L2 read in the run
    predicted_gbs: float | None = None
    bound: str | None = None  # "bandwidth" or "latency"
    kind: str | None = None  # broadcast, coalesced, misaligned, reversed, strided, permuted, ...
    like: str | None = None  # the built-in benchmark it behaves like
    like_in_run: bool = False
    like_gbs: float | None = None
    like_ratio: float | None = None  # measured / the built-in's
    suggestion: str | None = None
    compile_s: float | None = None
    cached: bool | None = None
    lines: list[str] = field(default_factory=list)


def decode_expression(part: str) -> str:
    """The expression from its name part: `(i%32)*32+i÷32` -> `(i%32)*32+i/32`."""
    for encoded, plain in _ENCODED.items():
        part = part.replace(encoded, plain)
    return part


def parse_name(name: str) -> tuple[str, str, str, dict[str, str]]:
    """`pattern/<expr>/<op>/<word>/k:K/block:B[/n:N][/nthreads:T]` -> (expression, op, word,
    params). The expression holds no '/' or ':' (the binary writes them ÷ and ¦)."""
    split = split_name(name)
    parts = split.variant.split("/")
    if split.family != FAMILY or len(parts) != 3:
        raise ValueError(f"{name!r} is not a pattern/<expr>/<op>/<word>/... name")
    expr, op, word = parts
    return decode_expression(expr), op, word, split.params


def setting(loaded: results.Results,
            medians: dict[str, results.Median] | None = None) -> Setting:
    """The GPU from the context, the roof and the DRAM latency from the run's benchmarks."""
    medians = medians if medians is not None else results.median_by_name(loaded.records)
    refs = {name: _gbs(medians.get(name)) for name in (MEMCPY, MEMSET)}
    present = [(gbs, name) for name, gbs in refs.items() if gbs]
    roof_gbs, roof_name = max(present) if present else (None, None)
    chase = medians.get(CHASE)
    latency = chase.counters.get("latency_ns") if chase and chase.error is None else None
    context = loaded.context
    l2_gbs, l2_name = _l2_rate(medians, _positive(context.get("gpu_l2_bytes")))
    loaded = {op: curve for op in ("read", "copy") if (curve := _loaded_curve(medians, op))}
    return Setting(
        gpu_name=context.get("gpu_name"), flavor=context.get("gmb_flavor"),
        date=context.get("date"),
        peak_gbs=_positive(context.get("gpu_peak_gbs")),
        sms=int(sms) if (sms := _positive(context.get("gpu_sms"))) else None,
        roof_gbs=roof_gbs, roof_name=roof_name, memcpy_gbs=refs[MEMCPY],
        latency_ns=latency if latency and latency > 0 else None, l2_gbs=l2_gbs, l2_name=l2_name,
        loaded=loaded, facts=context.get("gpu_facts"))


def _loaded_curve(medians: dict[str, results.Median], op: str):
    """latency_ns against load_gbs from the run's latency/loaded/load:<op>/* medians."""
    points = sorted((m.counters["load_gbs"], m.counters["latency_ns"])
                    for name, m in medians.items()
                    if name.startswith(f"{LOADED}{op}/") and m.error is None
                    and m.counters.get("load_gbs") is not None
                    and m.counters.get("latency_ns"))
    if len(points) < 2:
        return None
    return littles_law.LoadedCurve(np.array([p[0] for p in points]),
                                   np.array([p[1] for p in points]))


def _l2_rate(medians: dict[str, results.Median],
             l2_bytes: float | None) -> tuple[float | None, str | None]:
    """The hot read of the largest working set in the run within half the L2 (None without)."""
    best = None
    for name, median in medians.items():
        if not name.startswith(L2_READS) or median.error is not None:
            continue
        ws = _int(name[len(L2_READS):].split("/")[0])
        if ws is None or "/" in name[len(L2_READS):] or (l2_bytes and ws > l2_bytes / 2):
            continue  # l1:small variants and sets that spill out of the L2
        if best is None or ws > best[0]:
            best = (ws, name, _gbs(median))
    return (best[2], best[1]) if best and best[2] else (None, None)


def explain(loaded: results.Results) -> tuple[Setting, list[Explanation]]:
    """The run's references and every pattern benchmark of it, in file order."""
    medians = results.median_by_name(loaded.records)
    where = setting(loaded, medians)
    try:
        return where, [explain_one(m, where, medians) for m in medians.values()
                       if m.family == FAMILY]
    except ValueError as err:  # a name this version of gmb does not know how to read
        raise GmbError(f"{loaded.path}: {err}") from None


def explain_file(path: str | Path) -> tuple[Setting, list[Explanation]]:
    return explain(results.load(path))


def explain_one(median: results.Median, where: Setting,
                medians: dict[str, results.Median]) -> Explanation:
    expr, op, word, params = parse_name(median.name)
    c = median.counters
    e = Explanation(
        name=median.name, expression=expr, op=op, word=word, word_bytes=element_bytes(word),
        k=_int(params.get("k")), block=_int(params.get("block")), n=_int(params.get("n")),
        threads=_int(params.get("nthreads")) or _count(c.get("pattern_threads")),
        elements=_count(c.get("pattern_elements")))
    if median.error is not None:
        e.error = median.error
        e.lines = [f"errored: {median.error}"]
        return e
    e.gbs = _gbs(median)
    e.pct_peak = median.pct_peak
    e.sectors_per_req = pattern_sectors(c, op)
    e.efficiency = c.get("model_efficiency")
    e.compile_s = c.get("pattern_compile_s")
    e.cached = c["pattern_cached"] >= 0.5 if "pattern_cached" in c else None
    _predict(e, c, where)
    e.kind, e.like, shape = classify(c, op, word, e.word_bytes, e.sectors_per_req)
    if e.like is not None and (twin := medians.get(e.like)) is not None:
        e.like_in_run = True
        e.like_gbs = _gbs(twin)
        e.like_ratio = e.gbs / e.like_gbs if e.gbs and e.like_gbs else None
    e.suggestion = suggestion(e.kind, c.get("pattern_lane_step"), word, e.word_bytes, e.k)
    e.lines = _lines(e, c, where, shape)
    return e


def pattern_sectors(counters: dict[str, float], op: str) -> float | None:
    """Sectors per request of the side that follows the expression: the loads of read, copy and
    gather, the stores of write and scatter (whose other side is coalesced)."""
    key = "model_st_sectors_per_req" if op in ("write", "scatter") else "model_ld_sectors_per_req"
    return counters.get(key, counters.get("model_sectors_per_req"))


def coalesced_sectors(word_bytes: int) -> int:
    """The fewest sectors a warp instruction can need: 32 lanes' words in whole sectors."""
    return math.ceil(WARP * word_bytes / SECTOR_BYTES)


def twin_for_op(gather_twin: str | None, op: str) -> str | None:
    """The built-in that does to its memory what `op` does, from the one a gather matches.
    offset/, stride/, warp/ and gather/ read through their map and write coalesced (a gather);
    their write and copy variants match scatter and copy; a pure read or write has none."""
    if gather_twin is None or gather_twin.split("/")[0] in ("read", "write", "copy"):
        return gather_twin  # a coalesced twin, chosen for the op already
    if op == "gather":
        return gather_twin
    siblings = {"scatter": (("offset/f32/read/", "offset/f32/write/"),
                            ("stride/f32/read/", "stride/f32/write/"),
                            ("gather/random", "scatter/random")),
                "copy": (("offset/f32/read/", "offset/f32/copy/"),
                         ("stride/f32/read/", "stride/f32/both/"))}
    for prefix, sibling in siblings.get(op, ()):
        if gather_twin.startswith(prefix):
            return sibling + gather_twin[len(prefix):]
    return None


def classify(counters: dict[str, float], op: str, word: str, word_bytes: int | None,
             sectors: float | None) -> tuple[str, str | None, str]:
    """(class, the built-in benchmark it behaves like or None, one sentence on the shape)."""
    kind, twin, sentence = _classify(counters, op, word, word_bytes, sectors)
    return kind, twin_for_op(twin, op), sentence


def _classify(counters: dict[str, float], op: str, word: str, word_bytes: int | None,
              sectors: float | None) -> tuple[str, str | None, str]:
    distinct = counters.get("pattern_distinct_per_req")
    step = counters.get("pattern_lane_step")
    aligned = counters.get("pattern_aligned_fraction")
    w = word_bytes or 0
    if (distinct is not None and distinct <= 1 + 0.05) or (step is not None and step == 0):
        return ("broadcast", "warp/broadcast",
                "broadcast: the whole warp takes one element, 1 sector per request")
    if step is not None and abs(abs(step) - 1) < _TOLERANCE:
        twin = coalesced_twin(op, word)
        if step < 0:
            return ("reversed", twin, "reversed: consecutive lanes take consecutive elements "
                    "downwards, the same sectors as a coalesced access in the other order")
        if aligned is not None and aligned < 1 - _TOLERANCE:
            fewest = coalesced_sectors(w)
            return ("misaligned", "offset/f32/read/off:1" if word == "f32" else None,
                    f"misaligned runs: consecutive lanes take consecutive elements, but "
                    f"{aligned:.0%} of the runs start on a 128-B boundary; a run that "
                    f"straddles one costs a sector more ({fewest + 1} instead of {fewest})")
        return ("coalesced", twin, "coalesced: consecutive lanes take consecutive elements in "
                "128-B aligned runs, the fewest sectors a warp can need")
    if step is not None and abs(step) > 1:
        s = round(abs(step))
        apart = s * w
        twin = f"stride/f32/read/s:{s}" if w == 4 and s in STRIDES else None
        if not apart:
            return ("strided", twin, f"strided: lanes {s} elements apart")
        efficiency = counters.get("model_efficiency")
        if apart >= SECTOR_BYTES and efficiency is not None and efficiency >= 0.9 and w == 4:
            # Nearby warps take the rest of each sector: DRAM moves every line once; what is
            # left is the sectors each request moves between the L2 and the SM (a transpose).
            return ("transposed", "warp/permute_across",
                    f"transposed: lanes {s} elements ({apart} B) apart, every lane its own "
                    f"32-B sector, but nearby warps use the rest of each sector (DRAM "
                    f"efficiency {efficiency:.2g}): the cost is {sectors or 32:.3g} sectors per "
                    f"request between the L2 and the SM")
        how = ("every lane needs its own 32-B sector" if apart >= SECTOR_BYTES
               else f"a 32-B sector serves {SECTOR_BYTES // apart} lanes")
        return ("strided", twin, f"strided: lanes {s} elements ({apart} B) apart: {how}")
    # The lane step varies: a permutation when it costs no more sectors than a coalesced access.
    if sectors is not None and w and sectors <= coalesced_sectors(w) + _TOLERANCE:
        return ("permuted", "warp/permute_segment", "permuted within segments: the lanes "
                "shuffle the elements of aligned runs, the same sectors as coalesced")
    if sectors is None or not w:
        return ("unknown", None, "no shape counters to classify it by")
    return ("scattered", "gather/random", f"scattered: {sectors:.3g} sectors per request "
            f"where a coalesced access needs {coalesced_sectors(w)}")


def suggestion(kind: str | None, step: float | None, word: str, word_bytes: int | None,
               k: int | None) -> str | None:
    """The known fix for this class, if there is one."""
    if kind == "transposed":
        return SUGGESTIONS["transpose"]
    if kind == "strided" and step is not None and word_bytes:
        if abs(step) * word_bytes >= LINE_BYTES:  # lanes a line or more apart: transpose-like
            return SUGGESTIONS["transpose"]
        return SUGGESTIONS["aos"] if word == "f32" else None
    if kind == "coalesced" and word == "f32" and k == 1:
        return SUGGESTIONS["wider"]
    return {"scattered": SUGGESTIONS["sort"], "misaligned": SUGGESTIONS["align"]}.get(kind or "")


def coalesced_twin(op: str, word: str) -> str | None:
    """The coalesced built-in of the same operation and word (read, write or copy), if the
    built-in families have the word."""
    if word not in BUILTIN_WORDS:
        return None
    family = {"read": "read", "write": "write"}.get(op, "copy")
    return f"{family}/{word}/ilp:1/grid:full"


def _predict(e: Explanation, c: dict[str, float], where: Setting) -> None:
    """bandwidth bound, latency bound where it applies, and the lower of them."""
    e.roof_gbs = where.roof_gbs or where.peak_gbs
    if e.roof_gbs and e.efficiency is not None:
        e.bandwidth_gbs = e.roof_gbs * min(1.0, e.efficiency)
    bif = c.get("bytes_in_flight_per_sm")
    both_ways = 2 if e.op in ("copy", "gather", "scatter") else 1
    curve = where.loaded.get("read" if both_ways == 1 else "copy")
    if curve is not None and where.sms and bif and e.roof_gbs:
        e.littles_gbs = littles_law.solve(bif, where.sms, min(e.roof_gbs, curve.most_gbs) * 10,
                                          curve, factor=both_ways)
        e.latency_ns = curve.latency(e.littles_gbs)
    elif where.latency_ns and where.sms and bif:
        e.littles_gbs = both_ways * where.sms * bif / where.latency_ns
        e.latency_ns = where.latency_ns
    distinct = c.get("pattern_distinct_per_req")
    if where.l2_gbs and e.sectors_per_req and distinct and e.word_bytes:
        useful = min(1.0, distinct * e.word_bytes / (e.sectors_per_req * SECTOR_BYTES))
        e.l2_bound_gbs = both_ways * where.l2_gbs * useful
    bounds = [(v, name) for v, name in ((e.bandwidth_gbs, "bandwidth"),
                                        (e.littles_gbs, "latency"),
                                        (e.l2_bound_gbs, "L2-to-SM")) if v is not None]
    if bounds:
        e.predicted_gbs, e.bound = min(bounds)


def _lines(e: Explanation, c: dict[str, float], where: Setting, shape: str) -> list[str]:
    lines = [_summary_line(e), _bound_line(e, c, where), shape]
    if e.pct_peak is not None and e.pct_peak > 100:  # DRAM cannot do that: caches served it
        repeat = (f"; with --k {e.k}, does the index use k? without it every slot reads the "
                  "same element" if e.k and e.k > 1 else "")
        lines.insert(1, f"above the theoretical peak: L1/L2 served part of it (elements read "
                        f"more than once?){repeat}")
    if e.like is None:
        lines.append(f"no built-in benchmark measures this case for word {e.word} and op {e.op}")
    elif not e.like_in_run:
        lines.append(f"behaves like {e.like} (not in this run: --compare measures it)")
    elif e.like_gbs is None:
        lines.append(f"behaves like {e.like}, which errored in this run")
    else:
        ratio = f"; this pattern measures {e.like_ratio:.2f}× that" if e.like_ratio else ""
        lines.append(f"behaves like {e.like}: {e.like_gbs:.0f} GB/s in this run{ratio}")
    if e.suggestion:
        lines.append(f"try: {e.suggestion}")
    if e.compile_s is not None:
        lines.append(f"kernel from the on-disk cache, loaded in {e.compile_s:.2g} s" if e.cached
                     else f"compiled by NVRTC and loaded in {e.compile_s:.2g} s")
    return lines


def _summary_line(e: Explanation) -> str:
    measured = f"measured {e.gbs:.0f} GB/s" if e.gbs is not None else "no GB/s measured"
    if e.pct_peak is not None:
        measured += f" = {e.pct_peak:.1f} % of the theoretical peak"
    if e.predicted_gbs is None:
        return f"{measured}; no prediction (the run lacks the model counters or a roof)"
    s = e.sectors_per_req
    sectors = f"{s:.3g} sector{'' if s == 1 else 's'}" if s is not None else "? sectors"
    efficiency = f"{e.efficiency:.3g}" if e.efficiency is not None else "?"
    return (f"{measured}; predicted {e.predicted_gbs:.0f} GB/s (model: {sectors} per request, "
            f"DRAM efficiency {efficiency})")


def _bound_line(e: Explanation, c: dict[str, float], where: Setting) -> str:
    roof = "no bandwidth bound (no model_efficiency counter or roof)"
    if e.roof_gbs and e.efficiency is not None:
        source = where.roof_name or "the theoretical peak: no ref/ benchmark in this run"
        roof = f"roof {e.roof_gbs:.0f} GB/s ({source}) × efficiency {min(1.0, e.efficiency):.3g}"
    if e.littles_gbs is None:
        if e.op == "write":
            why = "a write waits for no load to return"
        elif not where.latency_ns:
            why = f"no DRAM latency in this run ({CHASE})"
        else:
            why = "no bytes_in_flight_per_sm counter or SM count"
        l2 = _l2_text(e, where)
        if e.bound == "L2-to-SM":
            return f"L2-to-SM-bound ({why}): {l2}, below the bandwidth bound ({roof})"
        return f"bandwidth bound alone ({why}): {roof}" + (f"; {l2}" if l2 else "")
    twice = " × 2 (each byte read is also written)" if e.op in ("copy", "gather", "scatter") \
        else ""
    which = "loaded latency at that rate" if where.loaded else "idle DRAM latency"
    littles = (f"Little's law {where.sms} SMs × {c['bytes_in_flight_per_sm']:.0f} B in flight "
               f"per SM / {e.latency_ns:.0f} ns ({which}){twice} = {e.littles_gbs:.0f} GB/s")
    l2 = _l2_text(e, where)
    if e.bound == "L2-to-SM":
        return f"L2-to-SM-bound: {l2}, below {littles} and the bandwidth bound ({roof})"
    also = f"; {l2}" if l2 else ""
    if e.bound == "latency":
        return f"latency-bound: {littles}, below the bandwidth bound ({roof}){also}"
    bandwidth = f" = {e.bandwidth_gbs:.0f} GB/s" if e.bandwidth_gbs is not None else ""
    return f"bandwidth-bound: {roof}{bandwidth}, below {littles}{also}"


def _l2_text(e: Explanation, where: Setting) -> str:
    if e.l2_bound_gbs is None:
        return ""
    return (f"L2 to SM {where.l2_gbs:.0f} GB/s ({where.l2_name}) × useful share of the "
            f"{e.sectors_per_req:.3g} sectors per request = {e.l2_bound_gbs:.0f} GB/s")


def shape(e: Explanation) -> str:
    """`(op, word, k K, block B[, n N][, threads T])`: n where the name gives it, threads where
    they are not the default n / K."""
    elements = e.n or e.elements
    threads = e.threads if e.threads and elements and e.k and e.threads * e.k != elements \
        else None
    parts = [e.op, e.word] + [f"{key} {value}" for key, value in (
        ("k", e.k), ("block", e.block), ("n", e.n), ("threads", threads)) if value is not None]
    return f"({', '.join(parts)})"


def setting_line(where: Setting) -> str:
    parts = [f"{where.gpu_name or 'unknown GPU'} ({where.flavor or 'unknown'} flavor)"]
    if where.roof_gbs:
        parts.append(f"roof {where.roof_gbs:.0f} GB/s ({where.roof_name})")
    if where.peak_gbs:
        parts.append(f"theoretical peak {where.peak_gbs:.0f} GB/s")
    parts.append(f"DRAM latency {where.latency_ns:.0f} ns" if where.latency_ns
                 else "no DRAM latency measured")
    return ", ".join(parts)


def unverified_line(where: Setting) -> list[str]:
    """The line that says the GPU's architecture was not measured by the suite, if so."""
    if not arch.unverified(where.facts):
        return []
    return [f"Unverified on this GPU: {where.facts} (see docs/gpus.md)"]


def text(where: Setting, explanations: list[Explanation]) -> str:
    """What `gmb pattern` prints: the run's references, then each pattern's lines."""
    out = [*unverified_line(where), setting_line(where)]
    for e in explanations:
        out += ["", f"{e.expression}  {shape(e)}", *(f"  {line}" for line in e.lines)]
    return "\n".join(out) + "\n"


def markdown(where: Setting, explanations: list[Explanation], *commands: str) -> str:
    """explanation.md of a saved run: the commands, a table of all, then each pattern's
    lines."""
    lines = ["# gmembench pattern", "",
             *(item for line in unverified_line(where) for item in (f"> **{line}**", "")),
             setting_line(where) + ".", "",
             "Commands, run from the repository root:", "", "```sh", *commands, "```", "",
             "| expression | op | word | GB/s | % of peak | predicted | class | like | its GB/s |",
             "|---|---|---|---:|---:|---:|---|---|---:|"]
    for e in explanations:
        cells = [f"`{_cell(e.expression)}`", e.op, e.word, _number(e.gbs),
                 _number(e.pct_peak, "{:.1f}"), _number(e.predicted_gbs),
                 "error" if e.error else e.kind or "", f"`{e.like}`" if e.like else "",
                 _number(e.like_gbs)]
        lines.append("| " + " | ".join(cells) + " |")
    for e in explanations:
        lines += ["", f"## `{e.expression}` {shape(e)}", "", f"`{e.name}`", "",
                  *(f"- {line}" for line in e.lines)]
    lines += ["", "GB/s = 10⁹ B/s of bytes read + written, medians of the repetitions. The "
              "prediction is min(roof × DRAM efficiency, Little's law: SMs × bytes in flight "
              "per SM / DRAM latency).", ""]
    return "\n".join(lines)


def records(explanations: list[Explanation]) -> list[dict[str, Any]]:
    """The explanations as plain dicts (`gmb pattern --json`)."""
    return [dict(vars(e)) for e in explanations]


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def _number(value: float | None, form: str = "{:.0f}") -> str:
    return form.format(value) if value is not None else ""


def _gbs(median: results.Median | None) -> float | None:
    return median.gbs if median is not None else None


def _positive(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and re.fullmatch(r"\d+", value) else None


def _count(value: float | None) -> int | None:
    return int(value) if value is not None and math.isfinite(value) else None
