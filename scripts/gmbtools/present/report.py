"""`gmb report`: draw the figures (`plot.draw`) and write RESULTS_DIR/report.md around
them: the run, the headline numbers of each flavor (the tables of summary.md), every figure with
one sentence on what it shows (or why it is missing), the inflight cases against their model,
the optimization ladders against their roofs, the errored benchmarks and the context.
"""

import os
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from gmbtools.analysis import arch, frame, headlines, health, ladders
from gmbtools.data import results
from gmbtools.data.results import Results
from gmbtools.present import model_section, plot, summary
from gmbtools.present.headline_tables import headline_tables
from gmbtools.present.plot import Plotted

REPORT_FILE = "report.md"


def write_report(folder: Path, svg: bool = False,
                 out: Path | None = None) -> tuple[Path, Plotted]:
    """Plot into figures/ and write report.md, both in `out` (default `folder`); return its path
    and the plot outcome (for its messages). The text is the same wherever it goes: the figures
    beside it, the other links relative to `folder`. Raises GmbError only when no flavor file
    could be read. Read, then analyse, then present: the files, their medians and the ladders'
    tables, then the figures and the text."""
    out = folder if out is None else out
    context = plot.start_workers()  # their imports overlap the loading below
    loaded = results.load_folder(folder)
    medians = frame.readable_medians(folder, loaded)
    tables = ladders.tables(medians)
    plotted = plot.draw(Plotted(loaded, medians), out / plot.FIGURES_DIR, svg, context)
    path = out / REPORT_FILE
    path.write_text(render(out, plotted, tables), encoding="utf-8")
    return path, plotted


def outputs(out: Path, svg: bool) -> list[Path]:
    """Every file write_report may write into `out`."""
    return [out / REPORT_FILE, *plot.figure_paths(out / plot.FIGURES_DIR, svg)]


def render(folder: Path, plotted: Plotted,
           tables: list[tuple[ladders.Ladder, pd.DataFrame]] | None = None) -> str:
    """report.md's text, the figures linked relative to `folder` (where report.md goes);
    `tables`: ladders.tables(plotted.medians), computed here when None."""
    tables = ladders.tables(plotted.medians) if tables is None else tables
    files = {f: r for f, r in plotted.loaded.items() if isinstance(r, Results)}
    contexts = {flavor: loaded.context for flavor, loaded in files.items()}
    lines = [f"# gmembench report: {summary.gpu_name(contexts)}", ""]
    lines += arch.facts_lines(contexts)
    lines += _run_lines(files, plotted.medians)
    for reason in plotted.unreadable:
        lines += [f"**Not included:** {summary.cell(reason)}", ""]
    lines += ["## Headline numbers", ""]
    for flavor, loaded in files.items():
        medians = results.median_by_name(loaded.records)
        lines += [f"### Flavor `{flavor}`", ""]
        lines += headline_tables(loaded.context, medians, health.affected(loaded.records))
        for line in arch.run_lines(loaded.context, medians):
            lines += [line, ""]
    lines += ["## Figures", ""]
    for spec in plot.FIGURES:
        lines += [f"### {spec.heading}", ""]
        if spec.stem in plotted.written:
            png, *svg = (_relative(p, folder) for p in plotted.written[spec.stem])
            link = f" ([SVG]({svg[0]}))" if svg else ""
            lines += [f"![{spec.heading}]({png})", "", f"{plotted.captions[spec.stem]}{link}", ""]
        else:
            why = summary.cell(plotted.skipped.get(spec.stem, "no data")).replace("*", "\\*")
            lines += [f"**Not drawn:** {why}.", ""]
    lines += model_section.model_lines(plotted.medians, summary.MODEL_DOC)
    lines += _inflight_lines(plotted.medians)
    lines += _ladder_lines(plotted.medians, tables)
    lines += _error_lines(plotted.medians)
    lines += summary.context_section(contexts)
    return "\n".join(lines).rstrip() + "\n"


def _run_lines(files: dict[str, Results], medians: pd.DataFrame) -> list[str]:
    dates = sorted({str(r.context.get("date", "not recorded")) for r in files.values()})
    shas = sorted({str(r.context.get("git_sha", "not recorded")) for r in files.values()})
    repetitions = int(medians["repetitions"].max()) if not medians.empty else 0
    values = (f"medians of {repetitions} repetitions" if repetitions > 1
              else "one run per benchmark")
    names = ", ".join(f"`{loaded.path.name}`" for loaded in files.values())
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
    if "inflight_fit_gbs" not in medians.columns:
        return []
    rows = medians.loc[(medians["family"] == "inflight") & medians["inflight_fit_gbs"].notna()]
    if rows.empty:
        return []
    lines = ["## Bytes in flight: measured vs Little's law", "",
             "`inflight_fit_gbs` = min(roof, SMs × bytes in flight per SM ÷ (loaded latency + one"
             " warp's own round + the other warps' bytes at the SM's drain rate, where the run has"
             " the cases of 2 to 4 warps per SM to fit it)), one block per tile"
             " also paying a block's turnaround and capped by the GPU's block launch rate"
             " ([docs/inflight.md](../../../docs/inflight.md)). One warp per SM"
             " (`block:32/bpsm:1`) calibrates the round and predicts itself: it is left out of"
             " the counts.", ""]
    for flavor, group in rows.groupby("flavor", sort=False):
        group = group.assign(ratio=group["inflight_fit_gbs"] / group["gbs"])
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
                  f" {r.inflight_fit_gbs:.1f} | {r.ratio:.2f} |" for r in group.itertuples()]
        lines.append("")
    return lines


def _ladder_lines(medians: pd.DataFrame,
                  tables: list[tuple[ladders.Ladder, pd.DataFrame]]) -> list[str]:
    """A table per ladder and flavor: its rungs in order against their roof, the peak, the
    traffic model and, for a reduction, the library reference."""
    if not tables:
        return []
    lines = ["## Optimization ladders", "",
             "Each rung is one step of a kernel's optimization, in the order of its `rung`"
             " counter. % of roof is of the same file's roof: for the transpose the same type"
             " and N's `copy` rung (a plain copy of the same bytes), for the reduction the best"
             " read of the headline table; % of peak is `pct_peak`; sectors per request are the"
             " traffic model's, loads and stores apart.", ""]
    for ladder, table in tables:
        columns = _ladder_columns(ladder, table)
        lines += [f"### {ladder.title}", ""]
        for flavor, rows in table.groupby("flavor", sort=False):
            lines += [f"#### Flavor `{flavor}`", "", _roof_sentence(ladder, rows, medians), "",
                      "| " + " | ".join(header for header, _ in columns) + " |",
                      "|" + "|".join("---" if header in ("benchmark", ladder.group_header)
                                     else "---:" for header, _ in columns) + "|"]
            lines += ["| " + " | ".join(value(row) for _, value in columns) + " |"
                      for row in rows.itertuples()]
            lines.append("")
    return lines


def _ladder_columns(ladder: ladders.Ladder, table: pd.DataFrame) -> list[tuple[str, Callable]]:
    """(header, cell of a row) of a ladder's table; the model's sectors where any rung has them."""
    columns: list[tuple[str, Callable]] = [
        (ladder.group_header, lambda r: r.group),
        ("rung", lambda r: "ref" if r.reference else _number(r.rung, ".0f")),
        ("benchmark", lambda r: f"`{r.name}`"),
        ("GB/s", lambda r: "error (see below)" if pd.isna(r.gbs) and isinstance(r.error, str)
         else _number(r.gbs, ".1f")),
        (f"% of {ladder.roof}", lambda r: _number(r.pct_roof, ".1f")),
        ("% of peak", lambda r: _number(r.pct_peak, ".1f")),
    ]
    for counter, header in (("model_ld_sectors_per_req", "ld sectors/req"),
                            ("model_st_sectors_per_req", "st sectors/req")):
        if table[counter].notna().any():
            columns.append((header, lambda r, c=counter: _number(getattr(r, c), "g")))
    if ladder.reference_op:
        columns.append((f"× {ladder.reference_op}", lambda r: _number(r.ratio_to_ref, ".2f")))
    return columns


def _roof_sentence(ladder: ladders.Ladder, rows: pd.DataFrame, medians: pd.DataFrame) -> str:
    """What this flavor's roof and references are, with their values."""
    if ladder.roof_op:
        memcpy = medians.loc[(medians["file"] == rows["file"].iloc[0])
                             & (medians["name"] == headlines.MEMCPY), "gbs"].dropna()
        where = f"{memcpy.iloc[0]:.1f} GB/s" if not memcpy.empty else "not in this file"
        return (f"% of {ladder.roof}: of the same type and N's `{ladder.roof_op}` rung."
                f" `{headlines.MEMCPY}`: {where}.")
    roof = rows.dropna(subset=["roof_gbs"])
    text = (f"% of {ladder.roof}: of `{roof['roof_name'].iloc[0]}`"
            f" ({roof['roof_gbs'].iloc[0]:.1f} GB/s)." if not roof.empty
            else f"% of {ladder.roof}: n/a (no valid read/* benchmark in this file).")
    if ladder.reference_op:
        text += (f" × {ladder.reference_op}: of the same type's"
                 f" `{ladder.family}/<type>/{ladder.reference_op}` (its row `ref`).")
    return text


def _number(value: float, spec: str) -> str:
    """A table cell: blank where there is no value."""
    return "" if pd.isna(value) else format(value, spec)


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
