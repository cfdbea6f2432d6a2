"""`gmb report`: draw the figures (`plot.plot_folder`) and write RESULTS_DIR/report.md around
them: the run, the headline numbers of each flavor (the tables of summary.md), every figure with
one sentence on what it shows (or why it is missing), the errored benchmarks and the context.
"""

import os
from pathlib import Path

import pandas as pd

from . import health, plot, results, summary
from .flavors import json_name
from .plot import Plotted
from .results import Results

REPORT_FILE = "report.md"


def write_report(folder: Path) -> tuple[Path, Plotted]:
    """Plot into folder/figures and write folder/report.md; return its path and the plot
    outcome (for its messages). Raises GmbError only when no flavor file could be read."""
    plotted = plot.plot_folder(folder)
    path = folder / REPORT_FILE
    path.write_text(render(folder, plotted), encoding="utf-8")
    return path, plotted


def render(folder: Path, plotted: Plotted) -> str:
    files = {f: r for f, r in plotted.loaded.items() if isinstance(r, Results)}
    contexts = {flavor: loaded.context for flavor, loaded in files.items()}
    lines = [f"# gmembench report: {summary.gpu_name(contexts)}", ""]
    lines += _run_lines(files, plotted.medians)
    for reason in plotted.unreadable:
        lines += [f"**Not included:** {summary.cell(reason)}", ""]
    lines += ["## Headline numbers", ""]
    for flavor, loaded in files.items():
        medians = results.median_by_name(loaded.records)
        lines += [f"### Flavor `{flavor}`", ""]
        lines += summary.headline_tables(loaded.context, medians,
                                         health.affected(loaded.records))
    lines += ["## Figures", ""]
    for spec in plot.FIGURES:
        lines += [f"### {spec.heading}", ""]
        if spec.stem in plotted.written:
            png, svg = (_relative(p, folder) for p in plotted.written[spec.stem])
            lines += [f"![{spec.heading}]({png})", "",
                      f"{plotted.captions[spec.stem]} ([SVG]({svg}))", ""]
        else:
            why = summary.cell(plotted.skipped.get(spec.stem, "no data")).replace("*", "\\*")
            lines += [f"**Not drawn:** {why}.", ""]
    lines += _inflight_lines(plotted.medians)
    lines += _error_lines(plotted.medians)
    lines += summary.context_section(contexts)
    return "\n".join(lines).rstrip() + "\n"


def _run_lines(files: dict[str, Results], medians: pd.DataFrame) -> list[str]:
    dates = sorted({str(r.context.get("date", "not recorded")) for r in files.values()})
    shas = sorted({str(r.context.get("git_sha", "not recorded")) for r in files.values()})
    repetitions = int(medians["repetitions"].max()) if not medians.empty else 0
    values = (f"medians of {repetitions} repetitions" if repetitions > 1
              else "one run per benchmark")
    names = ", ".join(f"`{json_name(flavor)}`" for flavor in files)
    return [
        f"- flavors: {', '.join(files)} ({names}); {medians['name'].nunique()} benchmark names",
        f"- run date: {', '.join(dates)}; git sha: {', '.join(shas)}",
        f"- values: {values}; GB/s = 10⁹ B/s; % of peak against `gpu_peak_gbs` of the context",
        f"- commands, exit codes and clocks: [`{summary.SUMMARY_FILE}`]({summary.SUMMARY_FILE})",
        "",
    ]


def _inflight_lines(medians: pd.DataFrame) -> list[str]:
    """The inflight cases of each flavor against the Little's-law model (`littles_law`): a
    table, and how many of each grid form the model predicts within 15 %."""
    if "model_gbs" not in medians.columns:
        return []
    rows = medians.loc[(medians["family"] == "inflight") & medians["model_gbs"].notna()]
    if rows.empty:
        return []
    lines = ["## Bytes in flight: measured vs Little's law", "",
             "`model_gbs` = min(roof, SMs × bytes in flight per SM ÷ (loaded latency + one"
             " warp's own round)), one block per tile also paying a block's turnaround and"
             " capped by the GPU's block launch rate ([docs/inflight.md](../../../docs/"
             "inflight.md)). One warp per SM (`block:32/bpsm:1`) calibrates the round and"
             " predicts itself: it is left out of the counts.", ""]
    for flavor, group in rows.groupby("flavor", sort=False):
        group = group.assign(ratio=group["model_gbs"] / group["gbs"])
        predicted = group.loc[~group["name"].str.contains("/block:32/bpsm:1/")]
        lines += [f"### Flavor `{flavor}`", ""]
        for form, cases in predicted.groupby("grid", sort=False):
            error = (cases["ratio"] - 1).abs()
            worst = cases.loc[error.idxmax()]
            lines.append(f"- grid:{form}: {int((error <= 0.15).sum())} of {len(cases)} within"
                         f" 15 % (largest: model {worst['ratio']:.2f}× `{worst['name']}`)")
        lines += ["", "| benchmark | bytes in flight per SM | GB/s | model GB/s | model / measured |",
                  "|---|---:|---:|---:|---:|"]
        lines += [f"| `{r.name}` | {r.bytes_in_flight_per_sm:.0f} | {r.gbs:.1f} |"
                  f" {r.model_gbs:.1f} | {r.ratio:.2f} |" for r in group.itertuples()]
        lines.append("")
    return lines


def _error_lines(medians: pd.DataFrame) -> list[str]:
    errored = medians.loc[medians["error"].notna()]
    lines = ["## Errored or skipped benchmarks", ""]
    if errored.empty:
        return lines + ["None: every benchmark produced a verified number.", ""]
    lines += ["No number is reported or drawn for these.", "",
              "| flavor | benchmark | error |", "|---|---|---|"]
    lines += [f"| {row.flavor} | `{row.name}` | {summary.cell(str(row.error))} |"
              for row in errored.itertuples()]
    return lines + [""]


def _relative(path: Path, folder: Path) -> str:
    """A link from report.md to path, with forward slashes."""
    return Path(os.path.relpath(path, folder)).as_posix()
