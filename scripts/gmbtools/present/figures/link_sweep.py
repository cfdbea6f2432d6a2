"""The stride sweep over the peer link beside the local one (`peer_stride`): an f32 copy whose
strided side is this GPU's memory (`stride/f32/read/s:K`) or the partner's
(`peer/copy/f32/s:K/dir:pull`, s:1 its coalesced pull), measured and as the model predicts
each (model_gbs: the local model's bounds, the link's model of analysis/model_peer.py), log-log,
default flavor."""

import re

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from gmbtools.present.plotkit import (Drawn, Skip, draw_series, footnote, log2_axis, new_figure,
                                      set_title)

LOCAL = re.compile(r"^stride/f32/read/s:(\d+)$")
PEER = re.compile(r"^peer/copy/f32/(?:s:(\d+)|ilp:1)/dir:pull$")
SIDES = (("this GPU's memory", LOCAL, "tab:blue"), ("the partner's, over the link", PEER,
                                                    "tab:orange"))


def peer_stride(medians: pd.DataFrame) -> Drawn:
    """Bandwidth against the stride, local and over the peer link, with the model's lines."""
    rows = medians.loc[medians["flavor"] == "default"]
    series = {label: _series(rows, pattern) for label, pattern, _ in SIDES}
    if series[SIDES[1][0]].empty:
        raise Skip("no peer/copy/f32/s:K/dir:pull benchmark in this run (a two-GPU node's)")
    figure, axes = new_figure(1, 1, (6.4, 4.2))
    ax = axes[0, 0]
    shown = []
    for label, _, colour in SIDES:
        points = series[label]
        if points.empty:
            continue
        draw_series(ax, points["s"], points, gid=f"measured {label}", color=colour,
                    marker="o", markersize=4, label=f"{label}, measured")
        ax.plot(points["s"], points["model_gbs"], linestyle="--", color=colour, linewidth=1,
                gid=f"model {label}")
        shown.append(points.assign(side=label)[["side", "flavor", "name", "s", "gbs",
                                                "model_gbs"]])
    drawn = pd.concat(shown, ignore_index=True)
    log2_axis(ax, drawn["s"])
    ax.set_yscale("log")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.set_xlabel("stride s between threads' f32 elements (log scale)", fontsize=9)
    ax.set_ylabel("GB/s, bytes read + written (log)", fontsize=9)
    handles = [Line2D([], [], color=c, marker="o", label=f"{label}, measured")
               for label, _, c in SIDES]
    handles.append(Line2D([], [], color="gray", linestyle="--", label="model (model_gbs)"))
    figure.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
    set_title(figure, rows, "Strides over the peer link")  # the flavor it draws
    footnote(figure, "An f32 copy whose strided side is local or the partner's memory (the"
             " other side coalesced), medians of the default flavor. Model: the local bounds"
             " (docs/model.md) and the link's: a 16-B header and the span of sectors a request"
             " touches per 128-B line (docs/peer.md).")
    return Drawn(figure, drawn, (
        "What a stride costs when the strided array is on the other GPU: useful GB/s against"
        " the stride, local and over the link, each with its model."))


def _series(rows: pd.DataFrame, pattern: re.Pattern) -> pd.DataFrame:
    """The rows whose name matches, with `s` (1 for the coalesced pull), sorted by it."""
    names = rows["name"].astype(str)
    found = names.str.extract(pattern)[0]
    hit = names.str.match(pattern)
    picked = rows.loc[hit].assign(s=pd.to_numeric(found[hit], errors="coerce").fillna(1.0))
    for column in ("model_gbs", "gbs_lo", "gbs_hi"):
        if column not in picked.columns:
            picked = picked.assign(**{column: np.nan})
    return picked.sort_values("s")
