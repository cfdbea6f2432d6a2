"""How data is laid out and loaded: `aos_soa` draws bars per struct for an array of structs, a
struct of arrays and AoS staged through shared memory, reading one field or all; `word_ilp`
draws a heat map of copy bandwidth over the bytes per load and the elements per thread."""

import math

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import Colormap
from matplotlib.lines import Line2D

from gmbtools.data.naming import element_bytes
from gmbtools.present.figures.common import SPREAD, _grid
from gmbtools.present.plotkit import (ERROR_COLOR, GBS_LABEL, Drawn, Skip, draw_bars,
                                      draw_reference_lines, error_note, family_rows, flavors_of,
                                      footnote, gbs_axis, new_figure, peak_gbs, reference_lines,
                                      set_title, spread_note)

LAYOUT_COLORS = {"aos": "tab:red", "soa": "tab:purple", "aos_staged": "tab:brown"}
# copy/<type>/ilp:K/grid:full stands in for vector/w<B>/ilp:K until the vector family exists;
# f64 is left out because f32x2 already gives the 8-byte row.
WORD_FALLBACK_TYPES = ("f32", "f32x2", "f32x4")


def aos_soa(medians: pd.DataFrame) -> Drawn:
    """Bars per struct: array of structs, struct of arrays and staged AoS, reading one field
    or all fields, one panel per field choice and flavor."""
    rows = family_rows(medians, "aos", "soa", "aos_staged")
    if "fields" not in rows.columns:
        raise Skip("aos/soa benchmarks without a fields: parameter")
    fields = list(dict.fromkeys(rows["fields"].dropna()))
    present = flavors_of(rows)
    structs = list(dict.fromkeys(rows["type"]))
    top = max(peak_gbs(medians) or 0.0, float(rows["gbs"].max(skipna=True) or 0)) * 1.08
    figure, axes = new_figure(len(fields), len(present), (4.4, 3.1))
    refs = reference_lines(medians, memcpy=False)
    for (i, field), (j, flavor) in _grid(fields, present):
        ax = axes[i, j]
        panel = rows.loc[(rows["fields"] == field) & (rows["flavor"] == flavor)]
        layouts = [lay for lay in LAYOUT_COLORS if (panel["family"] == lay).any()]
        width = 0.8 / max(len(layouts), 1)
        for k, layout in enumerate(layouts):
            bars = panel.loc[panel["family"] == layout].set_index("type").reindex(structs)
            xs = np.arange(len(structs)) + (k - (len(layouts) - 1) / 2) * width
            draw_bars(ax, xs, bars, width, top, color=LAYOUT_COLORS[layout])
        draw_reference_lines(ax, refs)
        ax.set_xticks(range(len(structs)), [_struct_label(s) for s in structs], fontsize=8)
        ax.set_title(f"fields:{field} · {flavor}", fontsize=10)
        gbs_axis(ax, top / 1.08)
    figure.supylabel(GBS_LABEL, fontsize=10)
    for ax in axes[-1]:
        ax.set_xlabel("struct (size in bytes)", fontsize=9)
    handles = [Line2D([], [], color=c, linewidth=6, label=lay)
               for lay, c in LAYOUT_COLORS.items() if (rows["family"] == lay).any()]
    handles += [Line2D([], [], **style) for _, style in refs]
    figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=8)
    set_title(figure, medians, "Array of structs vs struct of arrays")
    footnote(figure, spread_note(rows, "Bars") + error_note(rows))
    data = rows[["flavor", "fields", "family", "type", *SPREAD]].reset_index(drop=True)
    return Drawn(figure, data, (
        "Reading one field or every field of an array of structs (aos), the same data as"
        " a struct of arrays (soa) and AoS staged through shared memory (aos_staged): one"
        " field of a wide struct wastes most of each sector, which SoA avoids."))


def word_ilp(medians: pd.DataFrame) -> Drawn:
    """Heat map of copy bandwidth: bytes per load x elements per thread, a panel per flavor."""
    rows, note = _word_ilp_rows(medians)
    present = flavors_of(rows)
    words = sorted(rows["word_bytes"].unique())
    ilps = sorted(rows["ilp"].unique())
    peak = peak_gbs(medians)
    vmax = peak or float(rows["gbs"].max(skipna=True))
    scale = "the theoretical peak" if peak else "the largest value (no gpu_peak_gbs recorded)"
    figure, axes = new_figure(1, len(present), (3.8, 3.4))
    cmap = _colormap()
    images = []
    for j, flavor in enumerate(present):
        ax = axes[0, j]
        panel = rows.loc[rows["flavor"] == flavor]
        grid = np.full((len(words), len(ilps)), np.nan)
        for row in panel.itertuples():
            grid[words.index(row.word_bytes), ilps.index(row.ilp)] = row.gbs
        images.append(ax.imshow(grid, origin="lower", cmap=cmap, vmin=0, vmax=vmax,
                                 aspect="auto"))
        for (w, k), value in np.ndenumerate(grid):
            cell = panel.loc[(panel["word_bytes"] == words[w]) & (panel["ilp"] == ilps[k])]
            text = f"{value:.0f}" if not math.isnan(value) else (
                "error" if not cell.empty else "–")
            dark = not math.isnan(value) and value < 0.55 * vmax
            ax.text(k, w, text, ha="center", va="center", fontsize=8,
                    color="white" if dark else (ERROR_COLOR if text == "error" else "black"))
        ax.set_xticks(range(len(ilps)), [str(k) for k in ilps])
        ax.set_yticks(range(len(words)), [f"{w} B" for w in words])
        ax.set_xlabel("elements per thread (ilp)")
        ax.set_title(flavor, fontsize=10)
    axes[0, 0].set_ylabel("word size (bytes per load)")
    figure.colorbar(images[-1], ax=list(axes[0]), label=GBS_LABEL, shrink=0.9)
    set_title(figure, medians, "Copy bandwidth: word size × elements per thread")
    footnote(figure, spread_note(rows, "Cells (GB/s)", bars=False)
             + f" Colour scale: 0 to {scale}. {note}" + error_note(rows))
    data = rows[["flavor", "word_bytes", "ilp", *SPREAD]].reset_index(drop=True)
    return Drawn(figure, data, (
        "Copy bandwidth for each word size (bytes one load moves) and number of elements each"
        " thread handles: narrow words need more elements per thread to keep enough bytes"
        " in flight to reach the peak. " + note).strip())


def _word_ilp_rows(medians: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """vector/w<B>/ilp:K rows with word_bytes, or copy/<type>/ilp:K/grid:full standing in."""
    if "ilp" in medians.columns:
        vector = medians.loc[(medians["family"] == "vector") & medians["ilp"].notna()]
        if not vector.empty:
            return _with_word_bytes(vector), ""
        if "grid" in medians.columns:
            copy = medians.loc[(medians["family"] == "copy") & (medians["grid"] == "full")
                               & medians["type"].isin(WORD_FALLBACK_TYPES)
                               & medians["ilp"].notna()]
            if not copy.empty:
                return _with_word_bytes(copy), (
                    "No vector/* benchmark in this run: copy/<type>/ilp:K/grid:full stands in"
                    " (f32 = 4 B, f32x2 = 8 B, f32x4 = 16 B; f64, also 8 B, is left out). ")
    raise Skip("no vector/* benchmark (nor copy/*/ilp:K/grid:full to stand in for it)")


def _with_word_bytes(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows with the bytes of their type's word; a type the contract does not size is left out."""
    return rows.assign(word_bytes=rows["type"].map(element_bytes)).dropna(subset=["word_bytes"])


def _struct_label(struct: str) -> str:
    size = element_bytes(struct)
    return struct if size is None else f"{struct}\n{size} B"


def _colormap() -> Colormap:
    """viridis, with missing cells (errored or not measured) in light grey."""
    return matplotlib.colormaps["viridis"].with_extremes(bad="lightgray")
