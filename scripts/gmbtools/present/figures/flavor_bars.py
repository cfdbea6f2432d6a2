"""The same benchmarks built with each load-caching flavor side by side: grouped bars, one
group per benchmark and one bar per flavor, each labelled with its ratio to the first (default)
flavor. `flavors` draws the best of each DRAM family, `reuse` the re-use patterns and
`readonly` the read-only path (plain loads, __ldg, const __restrict__)."""

import math

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from gmbtools.data.flavors import DEFAULT_FLAVOR_ONLY, DEFAULT_FLAVOR_ONLY_SINCE_BULK
from gmbtools.data.naming import LATENCY_FAMILIES
from gmbtools.present.figures.common import _bar_label
from gmbtools.present.plotkit import (GBS_LABEL, Drawn, Skip, color, draw_bars,
                                      draw_reference_lines, error_note, family_rows, flavors_of,
                                      footnote, new_figure, peak_gbs, reference_lines, set_title,
                                      spread_note)


def flavors(medians: pd.DataFrame, names: list[str] | None = None) -> Drawn:
    """Grouped bars, one group per benchmark, one bar per flavor, with the ratio of each
    flavor to the first (default) written over its bar. `names`: which benchmarks; by default
    the best of each DRAM family (every benchmark of a family of at most three)."""
    present = _two_flavors_or_skip(medians)
    names = names or _best_of_each_family(medians, present[0])
    return _flavor_bars(medians, names, f"Load caching: {' vs '.join(present)} builds", (
        f"The same benchmarks built with {', '.join(present)} load caching side by side (the"
        f" best of each family in the {present[0]} build), each bar labelled with its ratio to"
        f" {present[0]}: where the builds differ, the cache operator of plain loads matters."))


def reuse(medians: pd.DataFrame) -> Drawn:
    """The re-use patterns (reuse/*, the driver's carve-out) in every flavor, as `flavors`."""
    present = _two_flavors_or_skip(medians)
    rows = family_rows(medians, "reuse")
    if "l1" in rows.columns:
        rows = rows.loc[rows["l1"].isna()]
    names = list(dict.fromkeys(rows["name"]))
    return _flavor_bars(medians, names, "Re-used lines: " + " vs ".join(present) + " builds", (
        "Patterns whose warps read lines that they or nearby warps read again, built with"
        f" {', '.join(present)} load caching: where a non-caching build (cg) must fetch"
        " every line again from L2, it falls behind; the streaming control (reuse/stream)"
        " shows the builds agreeing where nothing is re-used."))


def readonly(medians: pd.DataFrame) -> Drawn:
    """The read-only path (readonly/*): plain loads, __ldg and `const __restrict__` pointers on
    the same patterns, in every flavor, as `flavors`."""
    present = _two_flavors_or_skip(medians)
    names = list(dict.fromkeys(family_rows(medians, "readonly")["name"]))
    return _flavor_bars(medians, names, "Read-only path: " + " vs ".join(present) + " builds", (
        "Each pattern read with plain loads (ld:default), __ldg (ld:ldg) and plain loads from"
        " const __restrict__ pointers (ld:restrict), built with"
        f" {', '.join(present)} load caching: the read-only path keeps lines in L1 in every"
        " build, so it matters where a build stops caching plain loads (cg) and warps re-use"
        " lines."))


def _two_flavors_or_skip(medians: pd.DataFrame) -> list[str]:
    present = flavors_of(medians)
    if len(present) < 2:
        raise Skip(f"only one flavor ({', '.join(present) or 'none'}) in this run:"
                   " nothing to compare")
    return present


def _flavor_bars(medians: pd.DataFrame, names: list[str], what: str, caption: str) -> Drawn:
    """Grouped bars of `names`, one bar per flavor, each labelled with its ratio to the first
    flavor's bar."""
    present = flavors_of(medians)
    base = present[0]
    if not names:
        raise Skip(f"no valid benchmark in the {base} flavor to compare")
    rows = medians.loc[medians["name"].isin(names)]
    top = max(peak_gbs(medians) or 0.0, float(rows["gbs_hi"].max(skipna=True) or 0),
              float(rows["gbs"].max(skipna=True) or 0)) * 1.12
    figure, axes = new_figure(1, 1, (max(7.0, 0.75 * len(names) + 2.5), 5.0))
    ax = axes[0, 0]
    width = 0.8 / len(present)
    ratio = f"ratio_to_{base}"
    reference = rows.loc[rows["flavor"] == base].set_index("name")["gbs"]
    data = rows[["name", "flavor", "gbs", "gbs_lo", "gbs_hi", "error"]].assign(
        **{ratio: rows["gbs"] / rows["name"].map(reference)})
    data.loc[data["flavor"] == base, ratio] = math.nan
    for j, flavor in enumerate(present):
        bars = data.loc[data["flavor"] == flavor].set_index("name").reindex(names)
        xs = np.arange(len(names)) + (j - (len(present) - 1) / 2) * width
        draw_bars(ax, xs, bars, width, top, color=color(flavor))
        for x, gbs, value in zip(xs, bars["gbs"], bars[ratio]):
            if not math.isnan(value):
                _bar_label(ax, x, gbs, f"{value:.3f}", top)
    refs = reference_lines(medians, memcpy=False)
    draw_reference_lines(ax, refs)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylim(0, top)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_ylabel(GBS_LABEL)
    handles = [Line2D([], [], color=color(f), linewidth=6, label=f) for f in present]
    handles += [Line2D([], [], **style) for _, style in refs]
    figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    set_title(figure, medians, what)
    footnote(figure, f"Numbers in the bars: bandwidth / the same benchmark's {base} bandwidth. "
             + spread_note(rows, "Bars") + error_note(rows))
    order = {name: i for i, name in enumerate(names)}
    data = data.sort_values("name", key=lambda n: n.map(order), kind="stable")
    return Drawn(figure, data.reset_index(drop=True), caption)


def _best_of_each_family(medians: pd.DataFrame, flavor: str, small: int = 3) -> list[str]:
    # Hot working sets (cache/*) run at cache speed, off the scale of the DRAM families; a
    # latency benchmark's bytes per second is no bandwidth; the families built once have no
    # other flavor to compare, nor have the host link's references.
    skipped = ["cache", *LATENCY_FAMILIES, *DEFAULT_FLAVOR_ONLY, *DEFAULT_FLAVOR_ONLY_SINCE_BULK]
    host_refs = medians["name"].str.match(r"ref/memcpy_(h2d|d2h)/")
    rows = medians.loc[(medians["flavor"] == flavor) & ~medians["family"].isin(skipped)
                       & ~host_refs]
    chosen: list[str] = []
    for _, members in rows.groupby("family", sort=False):
        if len(members) <= small:
            chosen += list(members["name"])
            continue
        valid = members.loc[members["gbs"].notna()]
        if not valid.empty:
            chosen.append(valid.loc[valid["gbs"].idxmax(), "name"])
    return chosen
