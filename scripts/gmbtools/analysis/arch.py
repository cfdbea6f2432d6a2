"""What a run says of its GPU's architecture: whether the suite's facts and model parameters
were measured there (`gpu_facts` of the context, gmb/arch_facts.hpp), the DRAM read granule
the run itself measured from the stride family, and whether the theoretical peak held
(docs/gpus.md).

Granule: f32 reads 32 B apart (stride s:8) touch adjacent sectors, so DRAM moves 32 B per
element whatever its granule; 64 B apart (s:16) it moves up to 64 B per element, and 128 B
apart (s:32) up to 128 B. So bandwidth(s:8) / bandwidth(s:16) is about 2 where the granule is
64 B or more (1 where it is 32 B), and bandwidth(s:16) / bandwidth(s:32) about 2 where it is
128 B or more (1 below): on an H100 1.92 and 1.10, 64 B.
"""

from typing import Any

from gmbtools.data.results import Median

MEASURED = "measured"
GRANULE_PAIR = ("stride/f32/read/s:8/ilp:4", "stride/f32/read/s:16/ilp:4")
WIDE_STRIDE = "stride/f32/read/s:32/ilp:4"  # tells 64 B from 128 B
SECTOR_BYTES = 32


def unverified(facts: Any) -> bool:
    """Whether a context's `gpu_facts` says the architecture was not measured (files from
    before the key, and empty cells of a frame, say nothing)."""
    return facts not in (None, "", "None", "nan", MEASURED) and facts == facts  # NaN != NaN


def facts_lines(contexts: dict[str, dict[str, Any]]) -> list[str]:
    """One line for the top of a summary or report where the GPU's architecture was not
    measured by the suite; nothing where it was, or for files from before the key existed."""
    statuses = sorted({str(c["gpu_facts"]) for c in contexts.values() if "gpu_facts" in c})
    unverified_ones = [s for s in statuses if unverified(s)]
    lines = [f"> **Unverified on this GPU:** {s} (see `docs/gpus.md`)." for s in unverified_ones]
    return lines + [""] if lines else []


def _gbs(medians: dict[str, Median], name: str) -> float | None:
    m = medians.get(name)
    return m.gbs if m is not None else None


def measured_granule(medians: dict[str, Median]) -> tuple[int, float] | None:
    """(granule in bytes, bandwidth ratio s:8 / s:16), or None where the run lacks either. A
    ratio of 1.5 or more means 64 B or more; then s:16 / s:32 of 1.5 or more means 128 B (a
    run without s:32 says 64)."""
    s8, s16, s32 = (_gbs(medians, name) for name in (*GRANULE_PAIR, WIDE_STRIDE))
    if s8 is None or s16 is None:
        return None
    ratio = s8 / s16
    if ratio < 1.5:
        return SECTOR_BYTES, ratio
    wide = s32 is not None and s16 / s32 >= 1.5
    return (4 if wide else 2) * SECTOR_BYTES, ratio


def granule_line(context: dict[str, Any], medians: dict[str, Median]) -> list[str]:
    """The granule this run measured beside the one its model assumed."""
    found = measured_granule(medians)
    if found is None:
        return []
    granule, ratio = found
    assumed = context.get("model_dram_granule_bytes")
    line = (f"DRAM read granule measured by this run: {granule} B (`{GRANULE_PAIR[0]}` over "
            f"`{GRANULE_PAIR[1]}`: {ratio:.2f}x)")
    if assumed is None:
        return [line + ".", ""]
    if int(assumed) == granule:
        return [line + f"; the traffic model assumes {assumed} B.", ""]
    return [line + f"; **the traffic model assumes {assumed} B**: its `model_dram_bytes` of "
            "sparse loads are off by that factor on this GPU.", ""]


# The in-process references that stream DRAM on a cold L2: neither can beat a true peak.
PEAK_WITNESSES = ("ref/memcpy_d2d", "ref/memset")


def peak_lines(context: dict[str, Any], medians: dict[str, Median]) -> list[str]:
    """A warning where a DRAM reference measured more than `gpu_peak_gbs` (2 x memory clock x
    bus width, as the device reports them: checked on Hopper only), i.e. the peak is wrong for
    this GPU's memory and so is every pct_peak of the run."""
    try:
        peak = float(context.get("gpu_peak_gbs", ""))
    except ValueError:
        return []
    over = [(name, gbs) for name in PEAK_WITNESSES
            if (gbs := _gbs(medians, name)) is not None and gbs > peak > 0]
    return [f"**The theoretical peak is wrong for this GPU:** `{name}` measured {gbs:.1f} GB/s, "
            f"above `gpu_peak_gbs` {peak:.1f} (2 x memory clock x bus width as the device "
            "reports them); every pct_peak of this run is too high." for name, gbs in over]


def run_lines(context: dict[str, Any], medians: dict[str, Median]) -> list[str]:
    """What one flavor's file says of the GPU beyond its numbers: the DRAM granule it measured
    and, where a DRAM reference beat it, that the theoretical peak is wrong."""
    return [line for line in granule_line(context, medians) if line] + peak_lines(context, medians)

