"""The figures of `gmb plot`, one function each.

Each takes `frame.medians_frame` (one row per flavor and benchmark) and returns a `Drawn`: the
figure, the exact values it shows (a DataFrame, so tests can compare them with the input) and
one sentence on what it shows; or raises `Skip` when the run has no benchmark of its family.
Values are medians; an errored benchmark is marked as such, never drawn as a number.
"""

import math
from dataclasses import dataclass

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import Colormap
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, MaxNLocator

from . import ladders, littles_law
from .flavors import DEFAULT_FLAVOR_ONLY
from .naming import LATENCY_FAMILIES, element_bytes
from .plotkit import (ERROR_COLOR, GBS_LABEL, Drawn, Skip, bytes_text, color, draw_bars,
                      draw_reference_lines, draw_series, error_handle, error_note,
                      family_rows, flavors_of, footnote, gbs_axis, line_style, log2_axis,
                      mark_errors, new_figure, peak_gbs, reference_lines, set_title,
                      spread_note)

SPREAD = ["gbs", "gbs_lo", "gbs_hi", "error", "name"]
LAYOUT_COLORS = {"aos": "tab:red", "soa": "tab:purple", "aos_staged": "tab:brown"}
# copy/<type>/ilp:K/grid:full stands in for vector/w<B>/ilp:K until the vector family exists;
# f64 is left out because f32x2 already gives the 8-byte row.
WORD_FALLBACK_TYPES = ("f32", "f32x2", "f32x4")
# A ladder's bar this far from the default flavor's bar of the same rung is marked.
LADDER_DIFF = 0.05


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
    " chunk), which the dashed model line counts.",
)


def stride(medians: pd.DataFrame) -> Drawn:
    """Bandwidth against the stride between consecutive threads' elements."""
    return _sweep(medians, STRIDE)


def offset(medians: pd.DataFrame) -> Drawn:
    """Bandwidth against the misalignment of the whole access (offset in bytes)."""
    return _sweep(medians, OFFSET)


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


def working_set(medians: pd.DataFrame) -> Drawn:
    """Hot read bandwidth against the working-set size, a line per flavor and carve-out (the
    driver's choice, and each `l1:` parameter in the run), with the unified L1 and the L2
    sizes marked."""
    rows = family_rows(medians, "cache")
    if "ws" not in rows.columns:
        raise Skip("cache/* benchmarks without a ws: parameter")
    rows = rows.assign(ws=pd.to_numeric(rows["ws"], errors="coerce")).dropna(subset=["ws"])
    if rows.empty:
        raise Skip("no cache/* benchmark with a numeric ws: parameter")
    carveout = (rows["l1"] if "l1" in rows.columns else pd.Series(None, index=rows.index))
    rows = rows.assign(l1=carveout.fillna(""))
    present = flavors_of(rows)
    carveouts = sorted(set(rows["l1"]), key=lambda c: ("", "large", "small").index(c)
                       if c in ("", "large", "small") else 3)
    figure, axes = new_figure(1, 1, (9.0, 5.0))
    ax = axes[0, 0]
    shown = []
    for flavor in present:
        for k, l1 in enumerate(carveouts):
            series = rows.loc[(rows["flavor"] == flavor) & (rows["l1"] == l1)].sort_values("ws")
            if series.empty:
                continue
            label = flavor + (f", {l1} L1" if l1 else "")
            style = {**line_style(flavor), "linestyle": ["-", "--", ":", "-."][k % 4]}
            draw_series(ax, series["ws"], series, gid=f"{flavor}/{l1 or 'driver'}",
                        label=label, **style)
            mark_errors(ax, series.loc[series["error"].notna(), "ws"], color(flavor))
            shown.append(series[["flavor", "variant", "l1", "ws", *SPREAD]])
    sms = medians["gpu_sms"].dropna() if "gpu_sms" in medians.columns else pd.Series([])
    l2_users = f", shared by {int(sms.iloc[0])} SMs" if not sms.empty else ""
    for key, name, style in (("gpu_l1_shared_per_sm_bytes", "L1 + shared memory per SM", "--"),
                             ("gpu_l2_bytes", "L2" + l2_users, "-.")):
        size = medians[key].dropna() if key in medians.columns else pd.Series([])
        if not size.empty and float(size.iloc[0]) > 0:
            ax.axvline(float(size.iloc[0]), color="black", linestyle=style, linewidth=1,
                       label=f"{name}: {bytes_text(float(size.iloc[0]))} ({key})")
        else:  # an architecture the suite has no table entry for: say so, draw no wrong line
            ax.plot([], [], " ", label=f"{name}: unknown for this GPU, not marked ({key})")
    peak = peak_gbs(medians)
    if peak is not None:
        ax.axhline(peak, color="black", linestyle=":", linewidth=1.2,
                   label=f"DRAM theoretical peak {peak:.0f} GB/s")
    log2_axis(ax, rows["ws"], in_bytes=True)
    gbs_axis(ax, max(peak or 0.0, float(rows["gbs_hi"].max(skipna=True) or 0),
                     float(rows["gbs"].max(skipna=True) or 0)))
    ax.set_xlabel("working set (bytes, log scale)")
    ax.set_ylabel(GBS_LABEL)
    handles, _ = ax.get_legend_handles_labels()
    if rows["error"].notna().any():
        handles.append(error_handle())
    ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.95)
    set_title(figure, medians, "Hot working-set sweep: read bandwidth vs working-set size")
    footnote(figure, "The working set is read repeatedly (hot caches, no flush); every block"
             " reads the same bytes at every size. Small L1: the carve-out hint"
             " cudaSharedmemCarveoutMaxShared (cudaFuncAttributePreferredSharedMemoryCarveout)."
             " " + spread_note(rows) + error_note(rows))
    return Drawn(figure, pd.concat(shown, ignore_index=True), (
        "Read bandwidth of a working set read over and over, against its size: the steps"
        " down mark where it stops fitting in L1 and then in L2 (dashed lines, sizes from the"
        " device) and DRAM takes over; a non-caching build (cg) has no L1 step, and a small"
        " L1 carve-out moves the first step to smaller sets."))


def latency(medians: pd.DataFrame) -> Drawn:
    """Left: the pointer chase's ns per load against the working set, one line per flavor and
    lane count, with the L1 and L2 sizes marked. Right: the tlb chase's ns per load against
    the span, one line per page step (the first flavor)."""
    chase = medians.loc[(medians["family"] == "latency") & (medians["variant"] == "chase")]
    tlb = medians.loc[medians["family"] == "tlb"]
    if "latency_ns" not in medians.columns or (chase.empty and tlb.empty):
        raise Skip("no latency/chase/* or tlb/* benchmark in this run")
    figure, axes = new_figure(1, 2, (6.6, 5.0), sharey=False)
    left, right = axes[0, 0], axes[0, 1]
    shown = []
    if not chase.empty and {"ws", "lanes"} <= set(chase.columns):
        for fl in flavors_of(chase):
            for lanes, style in ((1, "-"), (32, "--")):
                series = chase.loc[(chase["flavor"] == fl) & (chase["lanes"] == lanes)]
                series = series.dropna(subset=["latency_ns"]).sort_values("ws")
                if series.empty:
                    continue
                left.plot(series["ws"], series["latency_ns"], linestyle=style,
                          label=f"{fl}, {lanes} lane{'s' if lanes > 1 else ''}",
                          **_line_only(fl))
                shown.append(series[["flavor", "name", "ws", "lanes", "latency_ns"]])
        for key, name, style in (("gpu_l1_shared_per_sm_bytes", "L1 + shared per SM", "--"),
                                 ("gpu_l2_bytes", "L2", "-.")):
            size = medians[key].dropna() if key in medians.columns else pd.Series([])
            if not size.empty and float(size.iloc[0]) > 0:
                left.axvline(float(size.iloc[0]), color="black", linestyle=style, linewidth=1,
                             label=f"{name}: {bytes_text(float(size.iloc[0]))}")
        log2_axis(left, chase["ws"], in_bytes=True)
        left.legend(fontsize=7, loc="upper left")
    left.set_xlabel("working set (bytes, log scale)")
    left.set_ylabel("ns per dependent load (latency_ns)")
    left.set_ylim(bottom=0)
    left.grid(True, alpha=0.3)
    if not tlb.empty and {"step", "span"} <= set(tlb.columns):
        fl = flavors_of(tlb)[0]
        for step in sorted(tlb["step"].dropna().unique()):
            series = tlb.loc[(tlb["flavor"] == fl) & (tlb["step"] == step)]
            series = series.dropna(subset=["latency_ns"]).sort_values("span")
            right.plot(series["span"], series["latency_ns"], marker="o", markersize=4,
                       label=f"one line per {bytes_text(float(step))}")
            shown.append(series[["flavor", "name", "step", "span", "latency_ns"]])
        log2_axis(right, tlb["span"], in_bytes=True)
        right.set_ylim(0, float(tlb["latency_ns"].max()) * 1.25)
        right.legend(fontsize=8, loc="lower right")
        right.set_xlabel(f"span the chase's pages cover (bytes, log scale) · flavor {fl}")
    else:
        right.text(0.5, 0.5, "no tlb/* in this run", ha="center", transform=right.transAxes)
    right.set_ylabel("ns per dependent load, an L2 hit (latency_ns)")
    right.grid(True, alpha=0.3)
    set_title(figure, medians, "Load latency: pointer chases per level and across pages")
    footnote(figure, "Left: latency/chase/ws:B/lanes:L, each line of the chain holding the next"
             " line's address in a pseudo-random cycle; 32 lanes chase 32 chains at once."
             " Right: tlb/chase/step:S/span:X, one line per S bytes over X bytes, loaded past"
             " the L1 from the L2: what grows with the span is address translation."
             " Values: medians (in-kernel clocks).")
    return Drawn(figure, pd.concat(shown, ignore_index=True) if shown else pd.DataFrame(), (
        "Load latency from the L1, the L2 and DRAM (left; the non-caching build has no L1"
        " step), and what address translation adds as a chase's pages spread over more"
        " memory (right)."))


def inflight(medians: pd.DataFrame) -> Drawn:
    """Left: the loaded latency (the chase's latency against the bandwidth other SMs stream,
    reads and copies), a line per flavor. Right, for one flavor (default first): inflight read
    and copy bandwidth against the bytes each SM keeps in flight, persistent grids filled and
    one block per tile hollow, the model's prediction for each point, and plain Little's law
    (the idle-to-loaded chase latency, nothing else) as a dashed line."""
    rows = family_rows(medians, "inflight")
    rows = rows.loc[rows["variant"].isin(["read", "copy"])
                    & rows["bytes_in_flight_per_sm"].notna()]
    if rows.empty:
        raise Skip("no inflight/read or inflight/copy benchmark with bytes_in_flight_per_sm")
    flavor = flavors_of(rows)[0]
    points = rows.loc[rows["flavor"] == flavor]
    loaded = medians.loc[(medians["family"] == "latency") & (medians["variant"] == "loaded")]
    figure, axes = new_figure(1, 2, (6.6, 5.0), sharey=False)
    left, right = axes[0, 0], axes[0, 1]
    shown = [points[["flavor", "bytes_in_flight_per_sm", "model_gbs", *SPREAD]]]
    for fl in flavors_of(loaded) if not loaded.empty else []:
        for load, style in (("read", "-"), ("copy", "--")):
            curve = littles_law.loaded_curve(loaded.loc[loaded["flavor"] == fl], load)
            if curve is not None:
                left.plot(curve.gbs, curve.ns, linestyle=style, label=f"{fl}, streams {load}",
                          **_line_only(fl))
    peak = peak_gbs(medians)
    if peak is not None:
        left.axvline(peak, color="black", linestyle=":", linewidth=1.2)
        right.axhline(peak, color="black", linestyle=":", linewidth=1.2,
                      label=f"theoretical peak {peak:.0f} GB/s")
    left.set_xlabel("bandwidth the other SMs stream (GB/s, load_gbs)")
    left.set_ylabel("chase latency under that load (ns, latency_ns)")
    left.grid(True, alpha=0.3)
    if left.lines:
        left.legend(fontsize=8, loc="upper left")
    else:
        left.text(0.5, 0.5, "no latency/loaded/* in this run", ha="center",
                  transform=left.transAxes)
    words = sorted(points["w"].dropna().unique()) if "w" in points.columns else []
    cmap = matplotlib.colormaps["viridis"]
    for k, word in enumerate(words):
        tint = cmap(0.15 + 0.7 * k / max(1, len(words) - 1))
        for op, marker in (("read", "o"), ("copy", "D")):
            for grid, fill in (("persistent", "full"), ("full", "none")):
                series = points.loc[(points["w"] == word) & (points["variant"] == op)
                                    & (points["grid"] == grid)]
                if series.empty:
                    continue
                right.plot(series["bytes_in_flight_per_sm"], series["gbs"], linestyle="none",
                           marker=marker, fillstyle=fill, color=tint, markersize=5,
                           label=f"{op}, {int(word)}-B words, grid:{grid}")
    model = points.dropna(subset=["model_gbs"])
    if not model.empty:
        right.plot(model["bytes_in_flight_per_sm"], model["model_gbs"], linestyle="none",
                   marker="x", color="black", markersize=4, label="model_gbs (each point)")
    curve = littles_law.loaded_curve(loaded.loc[loaded["flavor"] == flavor], "read") \
        if not loaded.empty else None
    sms = points["gpu_sms"].dropna()
    if curve is not None and peak is not None and not sms.empty:
        xs = np.geomspace(points["bytes_in_flight_per_sm"].min(),
                          points["bytes_in_flight_per_sm"].max(), 64)
        ys = [littles_law.solve(x, float(sms.iloc[0]), peak, curve) for x in xs]
        right.plot(xs, ys, color="gray", linestyle="--", linewidth=1,
                   label="Little's law, read: SMs × bytes / loaded latency")
    log2_axis(right, points["bytes_in_flight_per_sm"], in_bytes=True)
    gbs_axis(right, max(peak or 0.0, float(points["gbs"].max(skipna=True) or 0)))
    right.set_xlabel(f"bytes in flight per SM (log scale) · flavor {flavor}")
    right.set_ylabel(GBS_LABEL)
    right.legend(fontsize=7, loc="lower right", framealpha=0.95)
    set_title(figure, medians, "Bytes in flight: loaded latency and Little's law")
    footnote(figure, "Left: one thread chases a DRAM-sized chain on an SM of its own while K"
             " other SMs stream (latency/loaded/load:read|copy/sms:K). Right: inflight/*"
             " cases; bytes in flight = resident threads × loads per thread × word size. The"
             " model adds, per operation, word and loads per thread, one warp's own round"
             " (block:32/bpsm:1), the SM's drain of the other warps' bytes (fitted to 2 to 4"
             " warps per SM, full sweep) and, for one block per tile, a block's"
             " turnaround and the GPU's block launch rate (inflight/blocks). "
             + spread_note(points, bars=False))
    return Drawn(figure, pd.concat(shown, ignore_index=True), (
        "Why one float per thread cannot fill the memory: bandwidth grows with the bytes each"
        " SM keeps in flight until the loaded latency (left) makes more bytes useless, and a"
        " grid of one block per tile is further capped by how fast the GPU starts blocks; the"
        " crosses are the Little's-law model of each point."))


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


# --- helpers ---------------------------------------------------------------------------------

def _line_only(flavor: str) -> dict:
    """A flavor's colour and marker for a line drawn with plot() (no error bars to fill)."""
    return {k: v for k, v in line_style(flavor).items() if k != "fillstyle"}


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


def _bar_label(ax: Axes, x: float, gbs: float, text: str, top: float, room: float = 0.25,
               **font) -> None:
    """Text written upwards inside the top of its bar, above a bar shorter than `room` x top."""
    inside = gbs > room * top
    ax.text(x, gbs - top * 0.015 if inside else gbs + top * 0.015, text, rotation=90,
            ha="center", va="top" if inside else "bottom", fontsize=font.pop("fontsize", 7),
            color="white" if inside else "black", **font)


def _best_of_each_family(medians: pd.DataFrame, flavor: str, small: int = 3) -> list[str]:
    # Hot working sets (cache/*) run at cache speed, off the scale of the DRAM families; a
    # latency benchmark's bytes per second is no bandwidth; the families built once have no
    # other flavor to compare, nor have the host link's references.
    skipped = ["cache", *LATENCY_FAMILIES, *DEFAULT_FLAVOR_ONLY]
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


def _grid(first: list, second: list):
    """(i, a), (j, b) for every pair, row by row."""
    for i, a in enumerate(first):
        for j, b in enumerate(second):
            yield (i, a), (j, b)


def _struct_label(struct: str) -> str:
    size = element_bytes(struct)
    return struct if size is None else f"{struct}\n{size} B"


def _colormap() -> Colormap:
    """viridis, with missing cells (errored or not measured) in light grey."""
    return matplotlib.colormaps["viridis"].with_extremes(bad="lightgray")
