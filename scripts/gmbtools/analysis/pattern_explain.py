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

Where the run has the prediction model's parameters (`gmb pattern` runs their sources beside
the patterns: the calibration's chases, hot reads and strides, the block starts, the scattered
copies, `model_params.SOURCES`), the prediction is the model's instead, as for every built-in
benchmark (docs/model.md): the lowest of the model's bounds for the kernel's shape
(`pattern_model`), its bound named by the model.

The class comes from the shape counters the binary measures on the index table (lane step,
distinct elements per warp instruction, 128-B alignment of the runs) and the model's sectors
per request; docs/design.md has the model.
"""

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gmbtools.analysis import (frame, littles_law, model_params, model_predict, pattern_model,
                               pattern_twin)
from gmbtools.analysis.pattern_class import SECTOR_BYTES, classify, pattern_sectors, suggestion
from gmbtools.data import results
from gmbtools.data.naming import element_bytes, split_name
from gmbtools.errors import GmbError

FAMILY = "pattern"
MEMCPY, MEMSET = "ref/memcpy_d2d", "ref/memset"
CHASE = "latency/chase/ws:2147483648/lanes:1"
LOADED = "latency/loaded/load:"  # the chase beside streaming SMs: latency under load
L2_READS = "cache/read/ws:"  # hot reads of a working set: cache/read/ws:<bytes>
L2_SETS = (4194304, 8388608, 16777216, 33554432)  # those gmb pattern asks for
# What the prediction model's parameters come from besides those (model_params.SOURCES): the
# calibration's probes, the block starts, the grids of one load per thread, the scattered
# copies, the TLB's reach (regular expressions, gmembench's filter syntax).
MODEL_SOURCES = ("model/(chase|read|stride|translation|instructions)/", "inflight/blocks/block:256/bpsm:(1|8)$",
                 "read/f32/ilp:1/grid:(full|persistent)$", "write/f32/ilp:1/grid:full$",
                 "gather/random$", "scatter/random$", "tlb/chase/step:2097152/span:(134217728|2147483648)$")
# How the binary writes '/' and ':' of an expression inside a name (neither may appear there).
_ENCODED = {"÷": "/", "¦": ":"}

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
    params: model_params.Params | None = None  # the prediction model's, where the run has them


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
    bound: str | None = None  # "bandwidth" or "latency", or the model's bound (model_bounds)
    model_bounds: dict = field(default_factory=dict)  # the model's bounds, GB/s by name
    kind: str | None = None  # broadcast, coalesced, misaligned, reversed, strided, permuted, ...
    like: str | None = None  # the built-in benchmark it behaves like: the model's twin, else the class's
    shaped_like: str | None = None  # the class's twin (the same sectors per request)
    model_twin: pattern_twin.Twin | None = None  # the same bound's nearest cost (pattern_twin)
    like_in_run: bool = False
    like_gbs: float | None = None
    like_ratio: float | None = None  # measured / the built-in's
    suggestion: str | None = None
    compile_s: float | None = None
    cached: bool | None = None
    lines: list[str] = field(default_factory=list)  # its words: present/pattern_text.word
    counters: dict[str, float] = field(default_factory=dict)  # the median's, for the words
    shape_text: str = ""  # what the shape counters say of the index (classify)


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
    curves = {op: curve for op in ("read", "copy") if (curve := _loaded_curve(medians, op))}
    return Setting(
        gpu_name=context.get("gpu_name"), flavor=context.get("gmb_flavor"),
        date=context.get("date"),
        peak_gbs=_positive(context.get("gpu_peak_gbs")),
        sms=int(sms) if (sms := _positive(context.get("gpu_sms"))) else None,
        roof_gbs=roof_gbs, roof_name=roof_name, memcpy_gbs=refs[MEMCPY],
        latency_ns=latency if latency and latency > 0 else None, l2_gbs=l2_gbs, l2_name=l2_name,
        loaded=curves, facts=context.get("gpu_facts"), params=pattern_model.params(loaded))



def _loaded_curve(medians: dict[str, results.Median], op: str):
    """latency_ns against load_gbs from the run's latency/loaded/load:<op>/* medians."""
    points = sorted((m.counters["load_gbs"], m.counters["latency_ns"])
                    for name, m in medians.items()
                    if name.startswith(f"{LOADED}{op}/") and m.error is None
                    and m.counters.get("load_gbs") is not None
                    and m.counters.get("latency_ns"))
    if len(points) < 2:
        return None
    return littles_law.curve_of([p[0] for p in points], [p[1] for p in points])


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
        predicted = _builtin_predictions(loaded) if where.params is not None else None
        return where, [explain_one(m, where, medians, predicted) for m in medians.values()
                       if m.family == FAMILY]
    except ValueError as err:  # a name this version of gmb does not know how to read
        raise GmbError(f"{loaded.path}: {err}") from None


def explain_file(path: str | Path) -> tuple[Setting, list[Explanation]]:
    return explain(results.load(path))


def _builtin_predictions(loaded: results.Results):
    """name, model_gbs and model_bound of every benchmark of the run (model_predict)."""
    medians = frame.medians_frame([loaded])
    return medians[["name"]].join(model_predict.predictions(medians)[["model_gbs", "model_bound"]])


def explain_one(median: results.Median, where: Setting, medians: dict[str, results.Median],
                predicted=None) -> Explanation:
    expr, op, word, params = parse_name(median.name)
    c = median.counters
    e = Explanation(
        name=median.name, expression=expr, op=op, word=word, word_bytes=element_bytes(word),
        k=_int(params.get("k")), block=_int(params.get("block")), n=_int(params.get("n")),
        threads=_int(params.get("nthreads")) or _count(c.get("pattern_threads")),
        elements=_count(c.get("pattern_elements")))
    if median.error is not None:
        e.error = median.error
        return e
    e.gbs = _gbs(median)
    e.pct_peak = median.pct_peak
    e.sectors_per_req = pattern_sectors(c, op)
    e.efficiency = c.get("model_efficiency")
    e.compile_s = c.get("pattern_compile_s")
    e.cached = c["pattern_cached"] >= 0.5 if "pattern_cached" in c else None
    _predict(e, c, where)
    found = pattern_model.bounds(where.params, e.op, e.word_bytes, e.k, e.block, c)
    if found:  # the model's, as for every built-in benchmark
        e.model_bounds = found
        e.bound = min(found, key=found.get)
        e.predicted_gbs = found[e.bound]
    e.kind, e.shaped_like, shape = classify(c, op, word, e.word_bytes, e.sectors_per_req, e.k)
    e.like = e.shaped_like
    if found and predicted is not None:  # the twin by the model's bound and cost
        e.model_twin = pattern_twin.model_twin(e.bound, e.predicted_gbs,
                                               pattern_twin.candidates(predicted, op),
                                               e.shaped_like)
        if e.model_twin is not None and e.model_twin.same_cost:
            e.like = e.model_twin.name
    if e.like is not None and (twin := medians.get(e.like)) is not None:
        e.like_in_run = True
        e.like_gbs = _gbs(twin)
        e.like_ratio = e.gbs / e.like_gbs if e.gbs and e.like_gbs else None
    e.suggestion = suggestion(e.kind, c.get("pattern_lane_step"), word, e.word_bytes, e.k)
    e.counters, e.shape_text = c, shape  # for the words (present/pattern_text.py)
    return e


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
