"""The headline tables of a flavor, in summary.md and report.md: the best read, write and copy
and the driver's copy and fill beside the theoretical peak, with their cv and run-health marks,
then the ratios that say whether the best kernels reach the hardware."""

import math
from typing import Any

from gmbtools.analysis import health
from gmbtools.analysis.headlines import FAMILIES, MEMCPY, MEMSET, best_of
from gmbtools.data.results import Median


def headline_tables(context: dict[str, Any], medians: dict[str, Median],
                    flagged: dict[str, int] | None = None) -> list[str]:
    """The best read/write/copy and the references, then the ratios between them: the headline
    of one flavor's results (used by summary.md and report.md). Benchmarks in `flagged` (run
    health) are marked."""
    flagged = flagged or {}
    best = {family: best_of(medians, family) for family in FAMILIES}
    memcpy, memset = medians.get(MEMCPY), medians.get(MEMSET)
    lines = [
        "| | benchmark | GB/s | % of peak | cv |",
        "|---|---|---:|---:|---:|",
        _row("best read", best["read"], flagged),
        _row("best write", best["write"], flagged),
        _row("best copy", best["copy"], flagged),
        _row(MEMCPY, memcpy, flagged),
        _row(MEMSET, memset, flagged),
        "",
    ]

    peak = _peak_bytes_per_second(context)
    peak_label = "theoretical peak (gpu_peak_gbs)"
    if peak is not None:
        peak_label = f"theoretical peak ({peak / 1e9:.1f} GB/s, gpu_peak_gbs)"
    read, write, copy = (_rate(best[f], f"valid {f}/* benchmark") for f in FAMILIES)
    lines += [
        "| ratio | value |",
        "|---|---:|",
        _ratio_row(f"best copy / {MEMCPY}", copy, _rate(memcpy, MEMCPY)),
        _ratio_row(f"best read / {peak_label}", read, (peak, "no gpu_peak_gbs in the context")),
        _ratio_row(f"best write / {MEMSET}", write, _rate(memset, MEMSET)),
        "",
    ]
    return lines


def _row(label: str, median: Median | None, flagged: dict[str, int]) -> str:
    if median is None:
        return f"| {label} | (not in this file) | | | |"
    if median.error is not None:
        return f"| {label} | `{median.name}` | error (see below) | | |"
    mark = f" ⚠ {health.describe(flagged[median.name])}" if median.name in flagged else ""
    return (
        f"| {label} | `{median.name}`{mark} | {_gbs(median.bytes_per_second)} |"
        f" {_number(median.pct_peak)} | {percent(median.cv)} |"
    )


def _rate(median: Median | None, what: str) -> tuple[float | None, str]:
    """A benchmark's median bytes/s, or None and the reason there is none."""
    if median is None:
        return None, f"no {what} in this file"
    if median.error is not None:
        return None, f"{what} errored"
    if not median.bytes_per_second:
        return None, f"{what} has no (or a zero) bytes_per_second"
    return median.bytes_per_second, ""


def _ratio_row(
    label: str, numerator: tuple[float | None, str], denominator: tuple[float | None, str]
) -> str:
    (top, why_not_top), (bottom, why_not_bottom) = numerator, denominator
    if top is None:
        text = f"n/a ({why_not_top})"
    elif bottom is None:
        text = f"n/a ({why_not_bottom})"
    else:
        text = f"{top / bottom:.3f}"
    return f"| {label} | {text} |"


def _peak_bytes_per_second(context: dict[str, Any]) -> float | None:
    try:
        peak_gbs = float(context["gpu_peak_gbs"])
    except (KeyError, TypeError, ValueError):
        return None
    return peak_gbs * 1e9 if math.isfinite(peak_gbs) and peak_gbs > 0 else None


def _gbs(bytes_per_second: float | None) -> str:
    return "n/a" if bytes_per_second is None else f"{bytes_per_second / 1e9:.1f}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def percent(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{fraction * 100:.1f} %"
