"""The model against the run (`model`): measured GB/s against the model's prediction for every
benchmark that has one, log-log, a panel per flavor, a colour per winning bound, with the
diagonal and the 5 % band (analysis/model_check.py)."""

import numpy as np
import pandas as pd

from gmbtools.analysis import model_bounds, model_check
from gmbtools.present.plotkit import Drawn, Skip, flavors_of, footnote, new_figure, set_title

BOUND_COLORS = {model_bounds.DRAM: "tab:blue", model_bounds.LATENCY: "tab:orange",
                model_bounds.BLOCKS: "tab:green", model_bounds.L2: "tab:purple",
                model_bounds.CACHE: "tab:red", model_bounds.LINK: "tab:brown",
                model_bounds.TURNAROUND: "tab:olive", model_bounds.L2_STORES: "tab:pink",
                model_bounds.L1_LINES: "tab:cyan", model_bounds.TREE: "darkgoldenrod"}


def model(medians: pd.DataFrame) -> Drawn:
    """Measured vs predicted, one point per benchmark and flavor."""
    rows = model_check.ratios(medians).dropna(subset=["ratio"])
    if rows.empty:
        raise Skip("no benchmark of this run has a model prediction")
    present = flavors_of(rows)
    figure, axes = new_figure(1, len(present), (5.2, 5.0), sharey=True)
    low = float(min(rows["gbs"].min(), rows["model_gbs"].min())) / 1.3
    high = float(max(rows["gbs"].max(), rows["model_gbs"].max())) * 1.3
    line = np.geomspace(low, high, 50)
    for ax, flavor in zip(axes[0], present):
        group = rows.loc[rows["flavor"] == flavor]
        ax.fill_between(line, line * (1 - model_check.TOLERANCE), line * (1 + model_check.TOLERANCE),
                        color="0.85", label=f"within {model_check.TOLERANCE:.0%}")
        ax.plot(line, line, color="black", linewidth=0.8)
        for bound, points in group.groupby("model_bound", sort=True):
            ax.scatter(points["model_gbs"], points["gbs"], s=9,
                       color=BOUND_COLORS.get(bound, "tab:gray"), label=f"bound: {bound}",
                       gid=f"{flavor}/{bound}")
        within = int(((group["ratio"] - 1).abs() <= model_check.TOLERANCE).sum())
        ax.set_title(f"{flavor}: {within} of {len(group)} predicted within"
                     f" {model_check.TOLERANCE:.0%}", fontsize=9)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        ax.set_xlabel("predicted GB/s (model_gbs, log)")
        ax.legend(loc="upper left", fontsize=7, framealpha=0.95)
    axes[0, 0].set_ylabel("measured GB/s (log)")
    set_title(figure, medians, "The model: measured vs predicted bandwidth")
    footnote(figure, "Each point a benchmark (median of its repetitions) against the lowest of"
             " the model's bounds, from parameters the run measured with the benchmark's own"
             " family left out; the colour names the bound. Benchmarks without a prediction"
             " (the parameters' own sources, paths not modelled yet) are not drawn: the"
             " summary counts them. docs/model.md.")
    shown = rows[["flavor", "name", "gbs", "model_gbs", "model_bound", "ratio"]]
    return Drawn(figure, shown.reset_index(drop=True), (
        "Measured bandwidth against the model's prediction for every predicted benchmark:"
        " points in the grey band are within 5 %; the colour is the bound the model says"
        " limits the kernel."))
