"""What every gmembench figure shares: flavor colours, the title line, the reference lines
(theoretical peak from the context, never a constant; the measured `ref/memcpy_d2d`), error
bars, byte-valued axes, footnotes, and saving as PNG (and SVG on request).

Figures are plain matplotlib `Figure` objects on an Agg canvas: no pyplot, no global state, no
display needed. Their input is `frame.medians_frame`: one row per flavor and benchmark.
"""

import math
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure, SubFigure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
from PIL import Image  # matplotlib's own dependency

from gmbtools.analysis import arch
from gmbtools.data.flavors import flavors_of
from gmbtools.data.naming import bytes_text

GBS_LABEL = "bandwidth (GB/s = 10⁹ B/s)"
FLAVOR_COLORS = {"default": "tab:blue", "ca": "tab:orange", "cg": "tab:green"}
# Filled, then hollow markers, so lines of builds that measure the same stay distinguishable.
FLAVOR_MARKERS = {"default": ("o", 4.0, "full"), "ca": ("s", 6.0, "none"),
                  "cg": ("^", 6.5, "none")}
ERROR_COLOR = "tab:red"
MEMCPY = "ref/memcpy_d2d"
FOOTER_LINES = 4
FOOTER_INCHES = 0.16 * FOOTER_LINES + 0.1
PNG_DPI = 150
MAX_PNG_PIXELS = 2400  # wider figures get fewer dots per inch


class Skip(Exception):
    """The run has no data for this figure; the message (one line) says what is missing."""


@dataclass
class Drawn:
    """A finished figure, the exact values it shows, and one sentence on what it shows."""

    figure: SubFigure  # the body; `.figure` is the whole figure
    data: pd.DataFrame
    caption: str


def family_rows(medians: pd.DataFrame, *families: str) -> pd.DataFrame:
    """The rows of these families (errored ones included), or Skip when there are none or
    none of them has a value."""
    rows = medians.loc[medians["family"].isin(families)]
    wanted = " or ".join(f"{family}/*" for family in families)
    if rows.empty:
        raise Skip(f"no {wanted} benchmark in this run")
    if rows["gbs"].isna().all():
        raise Skip(f"every {wanted} benchmark in this run errored or was skipped")
    return rows


def color(flavor: str) -> str:
    return FLAVOR_COLORS.get(flavor, "tab:gray")


def line_style(flavor: str) -> dict:
    """Colour and marker of a flavor's measured line (for the line and its legend entry)."""
    marker, size, fill = FLAVOR_MARKERS.get(flavor, ("D", 4.0, "full"))
    return {"color": color(flavor), "marker": marker, "markersize": size, "fillstyle": fill}


def new_figure(nrows: int, ncols: int, panel: tuple[float, float], *,
               sharex: bool = False, sharey: bool = True) -> tuple[SubFigure, np.ndarray]:
    """nrows x ncols panels (always a 2-D array of axes) in the body of a figure whose foot
    holds the footnote (see `footnote`). Title, legend and axis labels go on the body."""
    width, height = panel[0] * ncols, panel[1] * nrows + 1.3
    root = Figure(figsize=(width, height + FOOTER_INCHES), layout="constrained")
    FigureCanvasAgg(root)
    root.subfigures(2, 1, height_ratios=[height, FOOTER_INCHES])
    body = root.subfigs[0]
    axes = body.subplots(nrows, ncols, sharex=sharex, sharey=sharey, squeeze=False)
    return body, axes


def set_title(figure: SubFigure, medians: pd.DataFrame, what: str) -> None:
    """`what`, then GPU, flavor set and run date, from the files' context."""
    gpus = ", ".join(map(str, medians["gpu_name"].dropna().unique())) or "unknown GPU"
    dates = pd.to_datetime(medians["date"], errors="coerce", utc=True).dropna()
    when = dates.min().strftime("%Y-%m-%d %H:%M UTC") if not dates.empty else "date not recorded"
    flavors = ", ".join(flavors_of(medians)) or "unknown"
    figure.suptitle(f"{what}\n{gpus} · flavors: {flavors} · run {when}{unverified(medians)}",
                    fontsize=11)


def unverified(medians: pd.DataFrame) -> str:
    """A title line where the GPU's architecture was not measured by the suite (`gpu_facts`):
    its L1 size and model parameters are a guide's, or unknown."""
    if "gpu_facts" not in medians.columns:
        return ""
    rows = medians.loc[medians["gpu_facts"].map(arch.unverified)]
    if rows.empty:
        return ""
    cc = str(rows["gpu_cc"].iloc[0]) if "gpu_cc" in rows.columns else "?"
    return f"\ncompute capability {cc}: L1 size and model parameters not measured (docs/gpus.md)"


def peak_gbs(medians: pd.DataFrame) -> float | None:
    """The theoretical peak from the context (`gpu_peak_gbs`), if recorded."""
    peaks = medians["gpu_peak_gbs"].dropna()
    peaks = peaks.loc[peaks > 0]
    return float(peaks.iloc[0]) if not peaks.empty else None


def reference_gbs(medians: pd.DataFrame, name: str) -> tuple[float, str] | None:
    """A reference benchmark's valid median and the flavor it comes from (default first)."""
    rows = medians.loc[(medians["name"] == name) & medians["gbs"].notna()]
    for flavor in flavors_of(rows):
        return float(rows.loc[rows["flavor"] == flavor, "gbs"].iloc[0]), flavor
    return None


def reference_lines(medians: pd.DataFrame, memcpy: bool = True) -> list[tuple[float, dict]]:
    """(value, line style with label) for the theoretical peak and, if asked, memcpy."""
    lines = []
    peak = peak_gbs(medians)
    if peak is not None:
        lines.append((peak, {"color": "black", "linestyle": ":", "linewidth": 1.2,
                             "label": f"theoretical peak {peak:.0f} GB/s (gpu_peak_gbs)"}))
    reference = reference_gbs(medians, MEMCPY) if memcpy else None
    if reference is not None:
        value, flavor = reference
        lines.append((value, {"color": "dimgray", "linestyle": "-.", "linewidth": 1.2,
                              "label": f"{MEMCPY} {value:.0f} GB/s ({flavor})"}))
    return lines


def draw_reference_lines(ax: Axes, lines: list[tuple[float, dict]]) -> None:
    for value, style in lines:
        ax.axhline(value, **style)


def draw_series(ax: Axes, x: Iterable[float], rows: pd.DataFrame, gid: str,
                **style) -> Line2D:
    """Medians as a line (a gap where a benchmark errored), and error bars from
    `gbs_lo`..`gbs_hi` where the rows have them. The line's gid names the series."""
    x = np.asarray(list(x), dtype=float)
    y = rows["gbs"].to_numpy(dtype=float)
    line = ax.plot(x, y, **style)[0]
    line.set_gid(gid)
    lo = rows["gbs_lo"].to_numpy(dtype=float)
    hi = rows["gbs_hi"].to_numpy(dtype=float)
    has = ~np.isnan(lo) & ~np.isnan(hi) & ~np.isnan(y)
    if has.any():
        ax.errorbar(x[has], y[has], yerr=[y[has] - lo[has], hi[has] - y[has]], fmt="none",
                    ecolor=style.get("color"), elinewidth=0.8, capsize=2)
    return line


def draw_bars(ax: Axes, xs: np.ndarray, rows: pd.DataFrame, width: float, top: float,
              **style) -> None:
    """Medians as bars at xs with min-max error bars where the rows have them. An errored
    benchmark gets the word "error" where its bar would stand, never a bar of height zero;
    a row that is all NaN (not in this run) gets nothing."""
    y = rows["gbs"].to_numpy(dtype=float)
    lo = rows["gbs_lo"].to_numpy(dtype=float)
    hi = rows["gbs_hi"].to_numpy(dtype=float)
    valid = ~np.isnan(y)
    ax.bar(xs[valid], y[valid], width, **style)
    spread = valid & ~np.isnan(lo) & ~np.isnan(hi)
    if spread.any():
        ax.errorbar(xs[spread], y[spread], yerr=[y[spread] - lo[spread], hi[spread] - y[spread]],
                    fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
    for x in xs[~valid & rows["error"].notna().to_numpy()]:
        ax.text(x, top * 0.02, "error", rotation=90, ha="center", va="bottom", fontsize=8,
                color=ERROR_COLOR, fontweight="bold")


def mark_errors(ax: Axes, xs: Iterable[float], col: str) -> None:
    """An errored benchmark has no value: mark where it is, in its series' colour."""
    for x in xs:
        ax.axvline(x, color=col, linestyle=(0, (1, 3)), linewidth=1.2, alpha=0.9)


def error_handle() -> Line2D:
    return Line2D([], [], color="gray", linestyle=(0, (1, 3)),
                  label="errored or skipped in that flavor: no value (see report.md)")


def log2_axis(ax: Axes, values: Iterable[float], in_bytes: bool = False) -> None:
    """Log-2 x axis, ticks at the powers of two the data spans (thinned to at most ~10)."""
    finite = [v for v in values if v > 0 and math.isfinite(v)]
    ax.set_xscale("log", base=2)
    if not finite:
        return
    low, high = math.floor(math.log2(min(finite))), math.ceil(math.log2(max(finite)))
    step = max(1, math.ceil((high - low + 1) / 10))
    ticks = [2.0**p for p in range(low, high + 1, step)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda v, _: bytes_text(v) if in_bytes else f"{v:g}"))


def gbs_axis(ax: Axes, top: float | None) -> None:
    ax.set_ylim(0, (top or 1.0) * 1.08)
    ax.grid(True, axis="y", alpha=0.3)


def spread_note(rows: pd.DataFrame, values: str = "Points", bars: bool = True) -> str:
    """How the values (and their error bars) were made, from the rows actually drawn."""
    valid = rows.loc[rows["gbs"].notna()]
    if (valid["spread"] == "min-max").any():
        most = int(valid["repetitions"].max())
        whiskers = "; error bars: min–max of the repetitions" if bars else ""
        return f"{values}: medians of {most} repetitions{whiskers}."
    if (valid["spread"] == "stddev").any():
        whiskers = "; error bars: ± one standard deviation" if bars else ""
        return f"{values}: median aggregates{whiskers}."
    return f"{values}: one run per benchmark (no repetitions)."


def error_note(rows: pd.DataFrame) -> str:
    errored = rows.loc[rows["error"].notna()]
    if errored.empty:
        return ""
    return (f" {len(errored)} errored or skipped benchmark(s) have no value and are not drawn"
            " as one (listed in report.md).")


def footnote(body: SubFigure, text: str) -> None:
    """Small grey text in the foot of the figure, wrapped to its width."""
    root = body.figure
    lines = textwrap.wrap(text, width=int(root.get_size_inches()[0] * 17))
    root.subfigs[1].text(0.01, 0.95, "\n".join(lines[:FOOTER_LINES]), fontsize=7.5,
                         color="dimgray", ha="left", va="top")


def save(body: SubFigure, stem: Path, svg: bool = False) -> list[Path]:
    """Write the whole figure as stem.png and, with `svg`, stem.svg (text kept as text, so it
    is searchable); return the paths written.

    The PNG is sized for reading on GitHub: 150 dpi, at most MAX_PNG_PIXELS wide, in a
    256-colour palette (line art and a few flat colours lose nothing visible; a third of the
    bytes of full colour)."""
    root = body.figure
    paths = [stem.with_suffix(".png")]
    width_in = root.get_size_inches()[0]
    root.set_dpi(min(PNG_DPI, MAX_PNG_PIXELS / width_in))
    canvas = root.canvas
    canvas.draw()
    rgba = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba())
    rgba.convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE).save(paths[0])
    if svg:
        paths.append(stem.with_suffix(".svg"))
        root.set_layout_engine("none")  # keep the layout just computed: the SVG needs no new one
        with matplotlib.rc_context({"svg.fonttype": "none"}):
            root.savefig(paths[1])
    return paths
