"""The model's section of summary.md and report.md: what the L2 partition probe found, then
measured / predicted per family (how many within 5 %, the median, the worst) and the ten
benchmarks farthest from their prediction with the bound the model names for them
(analysis/model_check.py; docs/model.md)."""

import pandas as pd

from gmbtools.analysis import frame, model_chases, model_check, model_pages, model_params
from gmbtools.data.results import Results

HEADING = "## Model: measured vs predicted"
DOC = "docs/model.md"


def model_lines(medians: pd.DataFrame, doc_link: str = DOC) -> list[str]:
    """The section's lines ([] when no benchmark has a prediction and the run has no L2
    partition probe)."""
    checks = model_check.check(medians)
    if not any(c.predicted for c in checks):
        partition = partition_lines(medians)
        return [HEADING, "", *partition, "No benchmark of this run has a prediction.", ""] if (
            partition) else []
    lines = [HEADING, "",
             "`model_gbs`: the lowest of the model's bounds (DRAM, latency × bytes in flight,"
             " block starts, L2 to SM, the cache level of a hot read, the host link), from"
             " parameters the"
             " same run measured with the"
             f" benchmark's own family left out ([{doc_link.rsplit('/', 1)[-1]}]({doc_link})). "
             f"Within {model_check.TOLERANCE:.0%}: |measured / predicted − 1| ≤"
             f" {model_check.TOLERANCE}; `ref/` and `peer/` are references and `model/` the"
             " calibration, not counted.", ""]
    lines += partition_lines(medians) + page_lines(medians)
    for c in checks:
        lines += [f"### Flavor `{c.flavor}`", "",
                  f"{c.within} of {c.benchmarks} benchmarks within {model_check.TOLERANCE:.0%}"
                  f" ({_share(c.within, c.benchmarks)}); {c.predicted} predicted,"
                  f" {c.benchmarks - c.predicted} without a prediction yet.", "",
                  "| family | benchmarks | predicted | within 5 % | median measured / predicted"
                  " | worst | worst benchmark |",
                  "|---|---:|---:|---:|---:|---:|---|"]
        for f in c.families:
            median = "" if f.median is None else f"{f.median:.3f}"
            worst = "" if f.worst is None else f"{f.worst:.3f}"
            name = "" if f.worst_name is None else f"`{f.worst_name}`"
            lines.append(f"| {f.family} | {f.benchmarks} | {f.predicted} | {f.within} |"
                         f" {median} | {worst} | {name} |")
        lines += ["", "Farthest from the model:", "",
                  "| benchmark | GB/s | model GB/s | bound | measured / predicted |",
                  "|---|---:|---:|---|---:|"]
        lines += [f"| `{r.name}` | {r.gbs:.1f} | {r.model_gbs:.1f} | {r.model_bound} |"
                  f" {r.ratio:.3f} |" for r in c.worst.itertuples()]
        lines.append("")
    return lines


def partition_lines(medians: pd.DataFrame) -> list[str]:
    """What the L2 partition probe found, one paragraph ([] without it)."""
    l2 = model_chases.partition_from(medians)
    if l2 is None:
        return []
    sms = pd.to_numeric(medians.get("gpu_sms", pd.Series(dtype=float)), errors="coerce").dropna()
    of = f" of {int(sms.iloc[0])}" if not sms.empty else ""
    line = (f"The L2 from each SM (`{model_chases.PARTITION}*`): {l2.near_ns:.1f} ns per load to"
            f" lines the SM read itself ({l2.near_min_ns:.1f} to {l2.near_max_ns:.1f} across the"
            f" SMs); a first read of lines the lowest SM read takes {l2.first_ns:.1f} ns")
    if l2.far_first_ns is None:
        return [line + " on every SM: one L2, as near to all.", ""]
    return [line + f" on its half and {l2.far_first_ns:.1f} ns ({l2.far_first_min_ns:.1f} to"
            f" {l2.far_first_max_ns:.1f}) on the other, {l2.far_sms}{of} SMs: two partitions.", ""]


# The share of a random access's page cost that marks the page: past a page a strided access
# pays about all of it (0.9 to 1.05), so the curve meets 1 late or never (docs/model.md).
PAGE_LEVEL = 0.9


def page_lines(medians: pd.DataFrame) -> list[str]:
    """The DRAM page as the calibration's strided probes see it (the first file's), one
    paragraph ([] without the probes)."""
    if medians.empty or "file" not in medians.columns:
        return []
    rows = medians.loc[medians["file"] == medians["file"].iloc[0]]
    curves = model_params.params_from(rows).pages or {}
    said = []
    for side in ("read", "write"):
        curve = curves.get(side)
        page, half = (curve.reaches(PAGE_LEVEL), curve.reaches(0.5)) if curve else (None, None)
        if page and half:
            said.append(f"a {side} strided {page:.0f} B or more pays {PAGE_LEVEL:.0%} of a"
                        f" random {side}'s extra DRAM time (half of it at {half:.0f} B)")
    if not said:
        return []
    return [f"DRAM pages (`{model_pages.PROBES.format('*')}*`): " + "; ".join(said) + ".", ""]


def summary_lines(loaded: dict[str, Results | str | None], doc_link: str) -> list[str]:
    """The section for summary.md from its loaded files."""
    readable = [value for value in loaded.values() if isinstance(value, Results)]
    if not readable:
        return []
    return model_lines(frame.medians_frame(readable), doc_link)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "none"
