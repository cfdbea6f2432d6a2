"""pattern.png of a saved `gmb pattern` run: a bar per expression (measured), its prediction
marked across it, the theoretical peak and ref/memcpy_d2d as lines."""

from pathlib import Path

from gmbtools.analysis.pattern_explain import Explanation, Setting
from gmbtools.present import plotkit
from gmbtools.present.pattern_text import unverified_line


def draw(folder: Path, where: Setting,
         explanations: list[Explanation]) -> Path:
    """folder/pattern.png: a bar per expression (measured), its prediction marked across it,
    the theoretical peak and ref/memcpy_d2d as lines. Raises ImportError without matplotlib."""
    import textwrap

    import numpy as np

    count = len(explanations)
    body, axes = plotkit.new_figure(1, 1, (max(6.0, 1.1 * count + 1.5) + 2.6, 4.2))
    ax = axes[0][0]
    xs = np.arange(count, dtype=float)
    measured = np.array([e.gbs if e.gbs is not None else np.nan for e in explanations])
    valid = ~np.isnan(measured)
    ax.bar(xs[valid], measured[valid], 0.6, color="tab:blue", label="measured (median)")
    predicted = [(x, e.predicted_gbs) for x, e in zip(xs, explanations)
                 if e.predicted_gbs is not None]
    label = "predicted (the lowest bound: DRAM, Little's law, L2 to SM)"
    for k, (x, value) in enumerate(predicted):
        ax.hlines(value, x - 0.38, x + 0.38, colors="black", linewidth=2.2,
                  label=label if k == 0 else None)
    values = [v for v in (*measured[valid], *(v for _, v in predicted), where.peak_gbs,
                          where.memcpy_gbs) if v]
    top = max(values, default=1.0)
    for x, e in zip(xs, explanations):
        if e.error:
            ax.text(x, top * 0.02, "error", rotation=90, ha="center", va="bottom", fontsize=8,
                    color=plotkit.ERROR_COLOR, fontweight="bold")
    if where.peak_gbs:
        ax.axhline(where.peak_gbs, color="black", linestyle=":", linewidth=1.2,
                   label=f"theoretical peak {where.peak_gbs:.0f} GB/s (gpu_peak_gbs)")
    if where.memcpy_gbs:
        ax.axhline(where.memcpy_gbs, color="dimgray", linestyle="-.", linewidth=1.2,
                   label=f"{plotkit.MEMCPY} {where.memcpy_gbs:.0f} GB/s")
    labels = [textwrap.fill(e.expression, 18) + f"\n{e.op} {e.word}" +
              (f"\n{e.kind}" if e.kind else "") for e in explanations]
    ax.set_xticks(xs, labels, fontsize=7.5)
    ax.set_xlim(-0.6, count - 0.4)  # room for an errored pattern's mark at either end
    plotkit.gbs_axis(ax, top)
    ax.set_ylabel(plotkit.GBS_LABEL)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    when = (where.date or "date not recorded")[:16].replace("T", " ")
    unverified = "".join(f"\n{line}" for line in unverified_line(where))
    body.suptitle(f"Your access patterns\n{where.gpu_name or 'unknown GPU'} · flavor "
                  f"{where.flavor or 'unknown'} · run {when}{unverified}", fontsize=11)
    plotkit.footnote(body, "Bars: medians of the repetitions (GB/s = 10⁹ B/s read + written). "
                     "Black marks: the model's prediction. Below each bar: the expression "
                     "(element index of thread i), op, word and class; explanation.md says "
                     "which built-in each behaves like.")
    return plotkit.save(body, folder / "pattern")[0]
