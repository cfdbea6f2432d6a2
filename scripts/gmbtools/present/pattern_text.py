"""The words of `gmb pattern`: each explanation's lines (what it measured and predicted, the
bound that wins, its class, the built-in it behaves like, a fix), the printed text, the
explanation.md of a saved run and the `--json` records. The numbers come from
analysis/pattern_explain.py; this module only says them."""

import dataclasses
from typing import Any

from gmbtools.analysis import arch
from gmbtools.analysis.pattern_explain import CHASE, Explanation, Setting, explain, explain_file
from gmbtools.data import results


def explained(loaded: results.Results) -> tuple[Setting, list[Explanation]]:
    """pattern_explain.explain, with every explanation's lines written."""
    where, explanations = explain(loaded)
    return where, word(where, explanations)


def explained_file(path: Any) -> tuple[Setting, list[Explanation]]:
    where, explanations = explain_file(path)
    return where, word(where, explanations)


def word(where: Setting, explanations: list[Explanation]) -> list[Explanation]:
    """Fill each explanation's lines; return the list."""
    for e in explanations:
        e.lines = ([f"errored: {e.error}"] if e.error is not None
                   else lines_of(e, e.counters, where, e.shape_text))
    return explanations


def lines_of(e: Explanation, c: dict[str, float], where: Setting, shape: str) -> list[str]:
    lines = [_summary_line(e), _bound_line(e, c, where), shape] + _set_lines(e, c)
    if e.pct_peak is not None and e.pct_peak > 100:  # DRAM cannot do that: caches served it
        repeat = (f"; with --k {e.k}, does the index use k? without it every slot reads the "
                  "same element" if e.k and e.k > 1 else "")
        lines.insert(1, f"above the theoretical peak: L1/L2 served part of it (elements read "
                        f"more than once?){repeat}")
    lines += _twin_lines(e)
    if e.suggestion:
        lines.append(f"try: {e.suggestion}")
    if e.compile_s is not None:
        lines.append(f"kernel from the on-disk cache, loaded in {e.compile_s:.2g} s" if e.cached
                     else f"compiled by NVRTC and loaded in {e.compile_s:.2g} s")
    return lines


def _set_lines(e: Explanation, c: dict[str, float]) -> list[str]:
    """Loads that re-read a set four times over or more: how large it is (the binary replays
    the whole launch through the L2 for their DRAM bytes, include/gmb/l2_replay.hpp)."""
    set_bytes = c.get("pattern_set_bytes")
    loaded = (e.threads or 0) * (e.k or 0) * (e.word_bytes or 0)
    if not set_bytes or loaded < 4 * set_bytes:
        return []
    return [f"its loads read a set of {set_bytes / 1e6:.3g} MB ({loaded / set_bytes:.3g}× over): "
            f"DRAM brings what the L2 does not keep between re-reads, "
            f"{c.get('model_dram_bytes', 0) / 1e6:.3g} MB in all with the stores "
            f"(model_dram_bytes: the whole launch replayed through the L2)"]


def _twin_lines(e: Explanation) -> list[str]:
    """The built-in it behaves like: the same bound and cost by the model where one of the run
    has them (pattern_twin), else the class's twin, and then the nearest cost of its bound."""
    t = e.model_twin
    by_model = t is not None and t.same_cost and t.name == e.like
    why = f" (by the model: {t.bound}-bound as this pattern, predicted {t.predicted_gbs:.0f} GB/s)" \
        if by_model else ""
    if e.like is None:
        lines = [f"no built-in benchmark measures this case for word {e.word} and op {e.op}"]
    elif not e.like_in_run:
        lines = [f"behaves like {e.like}{why} (not in this run: --compare measures it)"]
    elif e.like_gbs is None:
        lines = [f"behaves like {e.like}{why}, which errored in this run"]
    else:
        ratio = f"; this pattern measures {e.like_ratio:.2f}× that" if e.like_ratio else ""
        lines = [f"behaves like {e.like}{why}: {e.like_gbs:.0f} GB/s in this run{ratio}"]
    if t is not None and not t.same_cost and e.predicted_gbs:
        lines.append(f"by the model no built-in of this run costs the same: the nearest "
                     f"{t.bound}-bound one, {t.name}, is predicted {t.predicted_gbs:.0f} GB/s, "
                     f"{t.predicted_gbs / e.predicted_gbs:.2f}× this pattern's")
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
    ratio = f", measured / predicted {_ratio(e):.3f}" if _ratio(e) else ""
    return (f"{measured}; predicted {e.predicted_gbs:.0f} GB/s{ratio} (model: {sectors} per "
            f"request, DRAM efficiency {efficiency})")


def _ratio(e: Explanation) -> float | None:
    return e.gbs / e.predicted_gbs if e.gbs and e.predicted_gbs else None


def _bound_line(e: Explanation, c: dict[str, float], where: Setting) -> str:
    if e.model_bounds:  # the prediction model's (docs/model.md), lowest first
        named = ", ".join(f"{name} {gbs:.0f} GB/s"
                          for name, gbs in sorted(e.model_bounds.items(), key=lambda kv: kv[1]))
        return f"{e.bound}-bound (the model's bounds, docs/model.md: {named})"
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
             "| expression | op | word | GB/s | % of peak | predicted | measured / predicted "
             "| bound | class | like | its GB/s |",
             "|---|---|---|---:|---:|---:|---:|---|---|---|---:|"]
    for e in explanations:
        cells = [f"`{_cell(e.expression)}`", e.op, e.word, _number(e.gbs),
                 _number(e.pct_peak, "{:.1f}"), _number(e.predicted_gbs),
                 _number(_ratio(e), "{:.3f}"), e.bound or "",
                 "error" if e.error else e.kind or "", f"`{e.like}`" if e.like else "",
                 _number(e.like_gbs)]
        lines.append("| " + " | ".join(cells) + " |")
    for e in explanations:
        lines += ["", f"## `{e.expression}` {shape(e)}", "", f"`{e.name}`", "",
                  *(f"- {line}" for line in e.lines)]
    lines += ["", "GB/s = 10⁹ B/s of bytes read + written, medians of the repetitions. The "
              "prediction is the model's (docs/model.md: the lowest of its bounds, the run's "
              "own parameters) where the run has them, else min(roof × DRAM efficiency, "
              "Little's law: SMs × bytes in flight per SM / DRAM latency, L2 to SM).", ""]
    return "\n".join(lines)


def records(explanations: list[Explanation]) -> list[dict[str, Any]]:
    """The explanations as plain dicts (`gmb pattern --json`), without what only the words
    need."""
    return [{k: dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v  # the model's twin
             for k, v in vars(e).items() if k not in _FOR_THE_WORDS} for e in explanations]


_FOR_THE_WORDS = ("counters", "shape_text")


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def _number(value: float | None, form: str = "{:.0f}") -> str:
    return form.format(value) if value is not None else ""
