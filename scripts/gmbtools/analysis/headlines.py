"""The headline picks of a run: the best read, write and copy (the benchmarks of each family
with the highest median GB/s, none errored) and the driver's copy and fill they stand beside.
summary.md's headline table, the frames' `headline` column, the ladders' roofs and the node
table all use these, so they name the very same benchmarks."""

from gmbtools.data.results import Median

# Families whose best result is shown, and the in-process references measured beside them.
FAMILIES = ("read", "write", "copy")

MEMCPY = "ref/memcpy_d2d"

MEMSET = "ref/memset"


def headline_picks(medians: dict[str, Median]) -> dict[str, str]:
    """{name: "best read" | "best write" | "best copy"}: the benchmarks the headline table
    picks, so that other tables (the ladders' roofs) use the very same ones."""
    picks = ((family, best_of(medians, family)) for family in FAMILIES)
    return {best.name: f"best {family}" for family, best in picks if best is not None}


def best_of(medians: dict[str, Median], family: str) -> Median | None:
    candidates = [
        m for m in medians.values()
        if m.family == family and m.error is None and m.bytes_per_second is not None
    ]
    return max(candidates, key=lambda m: m.bytes_per_second or 0.0, default=None)
