"""Bandwidth against one swept parameter: stride (the distance between neighbouring threads'
elements, log-2 axis) and offset (the misalignment of the whole access, in bytes), a panel per
type and op, a line per flavor, with the traffic model's prediction anchored to the
unit-stride or aligned case as a dashed line, and peak and memcpy as horizontal lines."""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, MaxNLocator

from gmbtools.data.naming import element_bytes
from gmbtools.present.figures.common import SPREAD, _grid
from gmbtools.present.plotkit import (GBS_LABEL, Drawn, Skip, color, draw_reference_lines,
                                      draw_series, error_handle, error_note, family_rows,
                                      flavors_of, footnote, gbs_axis, line_style, log2_axis,
                                      mark_errors, new_figure, reference_lines, set_title,
                                      spread_note)


@dataclass(frozen=True)
class Sweep:
    """A family swept over one numeric parameter, drawn by `_sweep`."""

    family: str
    param: str
    base: int  # the parameter value the model is anchored to (the unit-stride/aligned case)
    in_bytes: bool  # x = param x the type's size, on a linear axis (else param, log-2 axis)
    what: str
    xlabel: str
    caption: str


STRIDE = Sweep(
    "stride", "s", 1, False, "Bandwidth vs stride",
    "stride s between threads (elements of the type, log scale)",
    "Effective bandwidth as the distance between neighbouring threads' elements grows: every"
    " doubling of the stride halves the useful bytes per memory sector until each element has"
    " its own, and the dashed model line predicts that loss.",
)


OFFSET = Sweep(
    "offset", "off", 0, True, "Bandwidth vs offset", "offset of the first element (bytes)",
    "Effective bandwidth of coalesced accesses shifted by an offset: a shift that is not a"
    " multiple of the 32-byte sector makes each warp touch one more sector (and 64-byte DRAM"
    " chunk, Hopper's granule), which the dashed model line counts.",
)


def stride(medians: pd.DataFrame) -> Drawn:
    """Bandwidth against the stride between consecutive threads' elements."""
    return _sweep(medians, STRIDE)


def offset(medians: pd.DataFrame) -> Drawn:
    """Bandwidth against the misalignment of the whole access (offset in bytes)."""
    return _sweep(medians, OFFSET)


def _sweep(medians: pd.DataFrame, sweep: Sweep) -> Drawn:
    """Bandwidth against one numeric parameter: a panel per type (rows) and op (columns), a
    line per flavor, the model's prediction dashed, peak and memcpy as horizontal lines."""
    family, param, base, in_bytes = sweep.family, sweep.param, sweep.base, sweep.in_bytes
    rows = family_rows(medians, family)
    if param not in rows.columns:
        raise Skip(f"{family}/* benchmarks without a {param}: parameter")
    size = rows["type"].map(element_bytes) if in_bytes else 1
    x = pd.to_numeric(rows[param], errors="coerce") * size
    rows = rows.assign(x=x, op=rows["op"].fillna("")).dropna(subset=["x"])
    if rows.empty:
        raise Skip(f"no {family}/* benchmark with a numeric {param}: parameter")
    types, ops = list(dict.fromkeys(rows["type"])), list(dict.fromkeys(rows["op"]))
    present = flavors_of(rows)
    refs = reference_lines(medians)
    top = max([value for value, _ in refs]
              + [float(rows[c].max(skipna=True) or 0) for c in ("gbs", "gbs_hi")])
    figure, axes = new_figure(len(types), len(ops), (4.2, 3.0))
    shown = []
    for (i, type_), (j, op) in _grid(types, ops):
        ax = axes[i, j]
        panel = rows.loc[(rows["type"] == type_) & (rows["op"] == op)]
        for flavor in present:
            series = panel.loc[panel["flavor"] == flavor].sort_values(param)
            if series.empty:
                continue
            model = _model(series, param, base)
            draw_series(ax, series["x"], series, gid=f"{flavor}/{type_}/{op}",
                        label=flavor, **line_style(flavor))
            ax.plot(series["x"], model, linestyle="--", linewidth=1, color=color(flavor),
                    alpha=0.8, gid=f"model {flavor}/{type_}/{op}")
            mark_errors(ax, series.loc[series["error"].notna(), "x"], color(flavor))
            shown.append(series[["flavor", "type", "op", param, "x", *SPREAD]]
                         .assign(model_gbs=model))
        draw_reference_lines(ax, refs)
        ax.set_title(f"{type_} · {op}" if op else type_, fontsize=10)
        if in_bytes:
            _byte_ticks(ax, panel["x"])
        else:
            log2_axis(ax, panel["x"])
        gbs_axis(ax, top)
    for ax in axes[-1]:  # figure.supxlabel would collide with the legend below it
        ax.set_xlabel(sweep.xlabel, fontsize=9)
    figure.supylabel(GBS_LABEL, fontsize=10)
    handles = [Line2D([], [], label=f"{f} (measured)", **line_style(f)) for f in present]
    handles.append(Line2D([], [], color="gray", linestyle="--", linewidth=1,
                          label=f"model: efficiency × measured at {param}:{base}"))
    handles += [Line2D([], [], **style) for _, style in refs]
    if rows["error"].notna().any():
        handles.append(error_handle())
    figure.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4),
                  fontsize=8)
    set_title(figure, medians, sweep.what)
    footnote(figure, spread_note(rows) + " Model: the traffic model's efficiency (useful / moved"
             f" bytes) relative to {param}:{base}, times the bandwidth measured there."
             + error_note(rows))
    return Drawn(figure, pd.concat(shown, ignore_index=True), sweep.caption)


def _model(series: pd.DataFrame, param: str, base: int) -> pd.Series:
    """model_efficiency scaled so that it equals the measurement at `param` = base."""
    at_base = series.loc[(series[param] == base) & series["gbs"].notna()
                         & (series["model_efficiency"] > 0)]
    if at_base.empty:
        return pd.Series(np.nan, index=series.index)
    anchor = at_base.iloc[0]
    return series["model_efficiency"] / anchor["model_efficiency"] * anchor["gbs"]


def _spaced(values: list, min_gap: float) -> list:
    """The values at least `min_gap` apart, the first and the last always kept (the last one
    replaces a kept value that sits too close to it), so tick labels never overlap."""
    kept: list = []
    for v in values:
        if not kept or v - kept[-1] >= min_gap:
            kept.append(v)
    if values and kept[-1] != values[-1]:
        if len(kept) > 1:
            kept[-1] = values[-1]
        else:
            kept.append(values[-1])
    return kept


def _byte_ticks(ax: Axes, xs: pd.Series) -> None:
    """Ticks at the measured offsets when there are few, else at round binary steps."""
    values = sorted(set(xs.dropna()))
    if len(values) <= 9:
        span = values[-1] - values[0] if values else 0
        # A 3-digit label needs about a fifteenth of a panel.
        ax.xaxis.set_major_locator(FixedLocator(_spaced(values, span / 15)))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 4, 8]))
