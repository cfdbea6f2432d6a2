"""Where a table or an array should live (`paths`): a table read through constant memory
against plain and __ldg loads, 2-D walks through plain loads against textures, and the host
link (the copy engine beside kernels on mapped host memory, and managed memory), as three
panels of the default flavor."""

import math

import numpy as np
import pandas as pd

from gmbtools.present.figures.common import SPREAD
from gmbtools.present.plotkit import (GBS_LABEL, Drawn, Skip, draw_bars, error_note, family_rows,
                                      footnote, new_figure, set_title, spread_note)


def paths(medians: pd.DataFrame) -> Drawn:
    """Where a table should live: left, a table read by warps whose lanes touch 1..32 distinct
    words, through constant memory and plain or __ldg loads; middle, 2-D walks through plain
    loads and textures; right, the host link: the copy engine beside kernels reading and
    writing mapped host memory, and managed memory. Default flavor (the families run there)."""
    rows = family_rows(medians, "constant", "texture", "host", "managed", "ref")
    rows = rows.loc[rows["flavor"] == "default"]
    for key in ("ws", "distinct", "path", "pct_peak"):  # absent where no family has the key
        if key not in rows.columns:
            rows = rows.assign(**{key: math.nan})
    constant = rows.loc[(rows["family"] == "constant") & (rows["ws"].astype(str) == "1024")]
    texture = rows.loc[(rows["family"] == "texture") & rows["name"].str.startswith("texture/read/")]
    link_names = ["ref/memcpy_h2d/mem:pinned", "host/read/f32x4/ilp:4", "host/read/f32/off:1",
                  "host/read/f32/s:8", "ref/memcpy_d2h/mem:pinned", "host/write/f32x4/ilp:4",
                  "host/write/f32/off:1", "managed/read/prefetch:gpu",
                  "managed/read/pages:host"]
    link = rows.set_index("name").reindex(link_names).dropna(subset=["family"]).reset_index()
    if constant.empty and texture.empty and link.empty:
        raise Skip("no constant/, texture/ or host/ benchmark in this run")
    figure, axes = new_figure(1, 3, (5.4, 3.6), sharey=False)
    left, middle, right = axes[0]
    for path, style in (("constant", "o-"), ("global", "s--"), ("ldg", "^:")):
        line = constant.loc[constant["path"] == path].copy()
        line["d"] = pd.to_numeric(line["distinct"], errors="coerce")
        line = line.dropna(subset=["d", "gbs"]).sort_values("d")
        if not line.empty:
            left.plot(line["d"], line["gbs"], style, label=f"path:{path}")
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xlabel("distinct words per warp load (table of 1 KiB)", fontsize=9)
    left.set_title("a table: constant vs global", fontsize=10)
    left.legend(fontsize=8)
    left.set_ylabel(GBS_LABEL, fontsize=9)
    walk_of = texture["name"].str.rsplit("/", n=1).str[0]
    walks = list(dict.fromkeys(walk_of))
    tex_paths = [p for p in ("global", "ldg", "tex1d", "tex2d", "array")
                 if (texture["path"] == p).any()]
    width = 0.8 / max(len(tex_paths), 1)
    top = _top(texture, 1.15)
    for k, path in enumerate(tex_paths):
        bars = texture.loc[texture["path"] == path].assign(walk=walk_of).set_index("walk")
        xs = np.arange(len(walks)) + (k - (len(tex_paths) - 1) / 2) * width
        draw_bars(middle, xs, bars.reindex(walks), width, top, color=f"C{k}", label=path)
    middle.set_xticks(range(len(walks)), [w.removeprefix("texture/read/") for w in walks],
                      fontsize=7, rotation=20)
    middle.set_ylim(0, top)
    middle.set_title("2-D walks: plain loads vs textures", fontsize=10)
    middle.legend(fontsize=8, title="path", title_fontsize=8)
    ytop = _top(link, 1.25)
    draw_bars(right, np.arange(len(link)), link, 0.7, ytop, color="C0")
    peak = (link["gbs"] / (link["pct_peak"] / 100)).median()
    if np.isfinite(peak):
        right.axhline(peak, linestyle=":", color="black", label=f"link peak {peak:.1f} GB/s")
        right.legend(fontsize=8)
    right.set_xticks(range(len(link)), [n.replace("/mem:pinned", "") for n in link["name"]],
                     fontsize=7, rotation=35, ha="right")
    right.set_ylim(0, ytop)
    right.set_title("over the host link", fontsize=10)
    set_title(figure, medians, "Paths to memory: constant, texture, host-mapped and managed")
    footnote(figure, spread_note(rows, "Bars") + error_note(rows))
    data = pd.concat([constant, texture, link])[["flavor", "name", *SPREAD]].reset_index(drop=True)
    return Drawn(figure, data, (
        "Left: a 1-KiB table read by warps whose lanes touch 1 to 32 distinct words: constant"
        " memory serializes by distinct address, plain and __ldg loads do not. Middle: 2-D"
        " walks through plain loads and texture fetches (a CUDA array's block-linear layout"
        " helps column walks). Right: kernels reading and writing pinned host memory beside"
        " the copy engine, and managed memory migrating over the same link."))


def _top(rows: pd.DataFrame, room: float) -> float:
    """The axis top over rows' bars (1 where there are none)."""
    most = rows["gbs"].max(skipna=True) if not rows.empty else math.nan
    return float(most) * room if np.isfinite(most) else 1.0
