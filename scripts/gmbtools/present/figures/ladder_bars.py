"""The optimization ladders (`transpose_ladder`, `reduce_ladder`): a bar per rung and flavor in
rung order, a panel per type (and, for the transpose, per matrix side), each bar labelled with
its GB/s and % of the ladder's roof, the roof and the reference as lines, and a non-default
flavor's bar that differs from the default one by more than LADDER_DIFF marked with its
ratio."""

import math

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from gmbtools.analysis import ladders
from gmbtools.present.figures.common import SPREAD, _bar_label
from gmbtools.present.plotkit import (GBS_LABEL, Drawn, Skip, color, draw_bars,
                                      draw_reference_lines, error_note, family_rows, flavors_of,
                                      footnote, new_figure, reference_lines, set_title, spread_note)

# A ladder's bar this far from the default flavor's bar of the same rung is marked.
LADDER_DIFF = 0.05


def transpose_ladder(medians: pd.DataFrame) -> Drawn:
    """The transpose ladder: a panel per type (rows) and matrix side N (columns, every N of the
    run: a power-of-two side and one that is not part ways exactly where a rung works around
    partition camping, so neither is left out), a bar per rung in rung order and per flavor,
    each labelled with its GB/s and % of the roof: the same type and N's copy rung; that roof,
    ref/memcpy_d2d and the theoretical peak as lines."""
    return _ladder(medians, ladders.TRANSPOSE, (
        "Each step of the transpose ladder against a plain copy of the same matrix (the roof,"
        " rung 0): the naive kernels lose most of it to strided reads or writes, tiles through"
        " shared memory win it back, padding removes their bank conflicts."))


def reduce_ladder(medians: pd.DataFrame) -> Drawn:
    """The reduction ladder: a panel per type, a bar per rung in rung order and per flavor,
    each labelled with its GB/s and % of the roof: the file's best read (summary.md's); that
    roof, reduce/<type>/cub and the theoretical peak as lines."""
    return _ladder(medians, ladders.REDUCE, (
        "Each step of the classic sum-reduction ladder against the best coalesced read of the"
        " same run (the roof) and CUB's DeviceReduce::Sum: divergence, bank conflicts and idle"
        " threads cost the first rungs most of the bandwidth a reduction could have."))


def _ladder(medians: pd.DataFrame, ladder: ladders.Ladder, caption: str) -> Drawn:
    """Grouped bars of a ladder's rungs (the reference is a line, not a bar), a panel per
    ladder of a type; bars of a non-default flavor more than LADDER_DIFF away from the default
    bar carry their ratio to it, in bold."""
    family_rows(medians, ladder.family)  # Skip without the family
    table = ladders.steps(medians, ladder)
    if table["reference"].all():
        raise Skip(f"no rung of the {ladder.family} ladder in this run, only its reference")
    present = flavors_of(table)
    base = table.loc[table["flavor"] == present[0]].set_index("name")["gbs"]
    ratio = table["gbs"] / table["name"].map(base)
    table = table.assign(ratio_to_first=ratio, differs=(table["flavor"] != present[0])
                         & ((ratio - 1).abs() > LADDER_DIFF))
    types = list(dict.fromkeys(table["type"]))
    layout = [list(dict.fromkeys(table.loc[table["type"] == t, "group"])) for t in types]
    refs = reference_lines(medians, memcpy=ladder.reference_op is None)
    values = table[["gbs", "gbs_hi", "roof_gbs", "ref_gbs"]].to_numpy(dtype=float)
    top = max([np.nanmax(values, initial=0.0)] + [value for value, _ in refs]) * 1.4
    rungs = table.loc[~table["reference"]].groupby("group")["name"].nunique().max()
    figure, axes = new_figure(len(types), max(map(len, layout)),
                              (max(5.0, 0.2 * rungs * len(present) + 1.2), 4.2))
    for (i, groups), j in ((row, j) for row in enumerate(layout) for j in range(axes.shape[1])):
        if j < len(groups):
            _ladder_panel(axes[i, j], table.loc[table["group"] == groups[j]], present, top,
                          ladder, refs)
        else:
            axes[i, j].set_axis_off()
    figure.supylabel(GBS_LABEL, fontsize=10)
    handles = [Line2D([], [], color=color(f), linewidth=6, label=f) for f in present]
    figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    set_title(figure, medians, f"Optimization ladder: {ladder.title.lower()}")
    marked = (f" Bold, with a ratio: a bar more than {LADDER_DIFF:.0%} away from the"
              f" {present[0]} bar of the same rung." if len(present) > 1 else "")
    footnote(figure, f"On each bar: GB/s · % of its own flavor's roof ({ladder.roof}, same"
             f" file).{marked} Roof and reference lines: the {present[0]} flavor's. "
             + spread_note(table, "Bars") + error_note(table))
    data = table[["flavor", "group", "rung", "op", "reference", "roof_name", "roof_gbs",
                  "pct_roof", "ratio_to_first", "differs", *SPREAD]]
    return Drawn(figure, data, caption)


def _ladder_panel(ax: Axes, rows: pd.DataFrame, present: list[str], top: float,
                  ladder: ladders.Ladder, refs: list[tuple[float, dict]]) -> None:
    """One ladder (a type, and N): a bar per rung and flavor, its roof and reference lines."""
    steps = rows.loc[~rows["reference"]].drop_duplicates("name").set_index("name")
    width = 0.8 / len(present)
    for j, flavor in enumerate(present):
        bars = rows.loc[rows["flavor"] == flavor].set_index("name").reindex(steps.index)
        xs = np.arange(len(steps)) + (j - (len(present) - 1) / 2) * width
        draw_bars(ax, xs, bars, width, top, color=color(flavor))
        for x, bar in zip(xs, bars.itertuples()):
            if not math.isnan(bar.gbs):
                _bar_label(ax, x, bar.gbs, _ladder_text(bar), top, room=0.45, fontsize=6.5,
                           fontweight="bold" if bar.differs else "normal")
    lines = _ladder_roofs(rows, ladder) + refs
    draw_reference_lines(ax, lines)
    ax.legend(handles=[Line2D([], [], **style) for _, style in lines], loc="upper left",
              fontsize=7, framealpha=0.95)
    labels = [op if math.isnan(rung) else f"{rung:.0f} {op}"
              for rung, op in zip(steps["rung"], steps["op"])]
    ax.set_xticks(range(len(steps)), labels, rotation=35, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(steps) - 0.4)
    ax.set_ylim(0, top)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(ladders.panel_title(rows), fontsize=10)


def _ladder_roofs(rows: pd.DataFrame, ladder: ladders.Ladder) -> list[tuple[float, dict]]:
    """The roof and, where the ladder has one, the reference of the first flavor present."""
    flavor = flavors_of(rows)[0]
    first = rows.loc[rows["flavor"] == flavor]
    lines = []
    roof = first.dropna(subset=["roof_gbs"])
    if not roof.empty:
        value = float(roof["roof_gbs"].iloc[0])
        lines.append((value, {"color": "tab:purple", "linestyle": "--", "linewidth": 1.2,
                              "label": f"roof, {ladder.roof}: {roof['roof_name'].iloc[0]}"
                                       f" {value:.0f} GB/s ({flavor})"}))
    reference = first.loc[first["reference"] & first["gbs"].notna()]
    if not reference.empty:
        value = float(reference["gbs"].iloc[0])
        lines.append((value, {"color": "tab:brown", "linestyle": "-.", "linewidth": 1.2,
                              "label": f"{reference['name'].iloc[0]} {value:.0f} GB/s"
                                       f" ({flavor})"}))
    return lines


def _ladder_text(bar) -> str:
    """GB/s · % of the roof, and the ratio to the first flavor where it differs (a bar with a
    value, so `differs` is a bool, not the NaN of a rung missing in this flavor)."""
    text = f"{bar.gbs:.0f}" + ("" if math.isnan(bar.pct_roof) else f" · {bar.pct_roof:.0f}%")
    return text + (f" · {bar.ratio_to_first:.2f}×" if bar.differs else "")
