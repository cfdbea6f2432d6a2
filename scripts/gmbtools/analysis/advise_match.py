"""What `gmb advise` says about each global load and store of a profiled kernel: its sectors
and 128-B lines per request (Nsight Compute's counts divided by its executions), the class the
suite gives such an access (coalesced, misaligned, strided with its stride, every lane its own
line), the built-in benchmark that does the same to memory, that benchmark's GB/s in a results
folder of the same GPU, the known fix, and what fixing the line saves: the kernel's sectors
with this line at its ideal count.

Strides come from the lines: 32 lanes of w-byte words S elements apart touch
ceil(32 * S * w / 128) lines (at most one per lane) and ceil(32 * S * w / 32) sectors (the
same), so S = lines * 128 / (lanes * w) where the sectors agree with it. Where every lane
touches a line of its own, a walk down columns and a scattered index look alike to these
counters; the kernel's DRAM bytes tell them apart (`reused`): a walk's neighbouring warps use
the rest of each line while it is in the L2, so DRAM moves about the bytes needed; a scattered
index fetches its lines again.
"""

import math
from dataclasses import dataclass, replace

from gmbtools.analysis.pattern_class import LINE_BYTES, SECTOR_BYTES, STRIDES, SUGGESTIONS
from gmbtools.data.ncu_source import Access

WORDS = {4: "f32", 8: "f64", 16: "f32x4"}
_SLACK = 0.05  # counters are exact; averages over partial warps are not quite


@dataclass(frozen=True)
class Advice:
    """One access, classified and matched; GB/s where a results folder had the twin."""

    access: Access
    sectors_per_request: float
    ideal_per_request: float
    lines_per_request: float
    share: float  # of the kernel's global sectors
    kind: str
    stride: int | None
    twin: str | None
    twin_gbs: float | None
    fix: str | None
    saved_share: float  # of the kernel's sectors, were this access at its ideal count

    @property
    def excess(self) -> float:
        return self.sectors_per_request / self.ideal_per_request if self.ideal_per_request else 1


def advise(accesses: list[Access], gbs: dict[str, float] | None = None,
           dram_bytes: dict[str, float] | None = None) -> list[Advice]:
    """Each access of `accesses` (one kernel's or several), the most sectors of its kernel
    first; `gbs` maps benchmark names to GB/s (a results folder's medians), `dram_bytes`
    kernels to the DRAM bytes of a launch (the profile's, where it has them)."""
    totals: dict[str, float] = {}
    for a in accesses:
        totals[a.kernel] = totals.get(a.kernel, 0.0) + a.sectors
    out = [_one(a, totals[a.kernel], gbs or {}) for a in accesses if a.requests > 0]
    for kernel, dram in (dram_bytes or {}).items():
        out = reused(out, kernel, dram, gbs or {})
    out = _neighbours(out)
    order = {k: i for i, k in enumerate(totals)}
    return sorted(out, key=lambda v: (order[v.access.kernel], -v.access.sectors))


def reused(advice: list[Advice], kernel: str, dram: float,
           gbs: dict[str, float]) -> list[Advice]:
    """The kernel's own-line accesses named by what DRAM saw: a walk whose lines the L2 keeps
    for the neighbouring warps (DRAM moved less than half their excess sectors beyond the
    bytes needed: like the naive transpose) or a scattered index (like gather/random)."""
    mine = [a for a in advice if a.access.kernel == kernel]
    own = [a for a in mine if a.kind == "own line"]
    if not own:
        return advice
    needed = sum(a.access.ideal_sectors for a in mine) * SECTOR_BYTES
    excess = sum(a.access.sectors - a.access.ideal_sectors for a in own) * SECTOR_BYTES
    walk = dram - needed < 0.5 * excess
    changed = {}
    for a in own:
        store = a.access.operation == "Store"
        if walk:  # the transpose ladder's naive rungs: stores down columns, or loads
            twin = _named(gbs, "transpose/f32/naive_rows/" if store else "transpose/f32/naive_cols/")
            kind, fix = "column walk", SUGGESTIONS["transpose"]
        else:
            twin, kind, fix = ("scatter/random" if store else "gather/random"), "scattered", \
                SUGGESTIONS["sort"]
        changed[id(a)] = replace(a, kind=kind, twin=twin, twin_gbs=gbs.get(twin), fix=fix)
    return [changed.get(id(a), a) for a in advice]


def bad_groups(mine: list[Advice]) -> list[list[Advice]]:
    """The accesses that move more than their ideal sectors (by over 5 %), grouped by class and
    stride: one fix serves a group (all fields of one array of structures)."""
    groups: dict[tuple, list[Advice]] = {}
    for a in mine:
        if a.access.sectors - a.access.ideal_sectors > 0.05 * a.access.ideal_sectors:
            groups.setdefault((a.kind, a.stride), []).append(a)
    return list(groups.values())


STENCIL = ("a stencil's neighbours of an aligned load: the L1 serves them in a caching build; "
           "for the rest, stage the block's tile and halo in shared memory")


def _neighbours(advice: list[Advice]) -> list[Advice]:
    """Misaligned loads on the line of a coalesced load of the same kernel are a stencil's
    neighbours, not an array to pad."""
    aligned = {(a.access.kernel, a.access.where) for a in advice
               if a.kind == "coalesced" and a.access.operation == "Load"}
    return [replace(a, fix=STENCIL) if a.kind == "misaligned" and a.access.operation == "Load"
            and (a.access.kernel, a.access.where) in aligned else a for a in advice]


def _named(gbs: dict[str, float], prefix: str) -> str:
    """The folder's benchmark of that name prefix (its size axis differs by sweep)."""
    return next((name for name in sorted(gbs) if name.startswith(prefix)), prefix.rstrip("/"))


def _one(a: Access, kernel_sectors: float, gbs: dict[str, float]) -> Advice:
    s = a.sectors / a.requests
    ideal = a.ideal_sectors / a.requests
    lines = a.lines / a.requests
    kind, stride = classify(s, ideal, lines, a.lanes, a.word_bytes)
    twin = twin_of(kind, stride, a.operation, a.word_bytes)
    share = a.sectors / kernel_sectors if kernel_sectors else 0.0
    saved = (a.sectors - a.ideal_sectors) / kernel_sectors if kernel_sectors else 0.0
    return Advice(access=a, sectors_per_request=s, ideal_per_request=ideal,
                  lines_per_request=lines, share=share, kind=kind, stride=stride, twin=twin,
                  twin_gbs=gbs.get(twin) if twin else None,
                  fix=fix_for(kind, stride, a.word_bytes), saved_share=max(0.0, saved))


def classify(sectors: float, ideal: float, lines: float, lanes: float,
             word_bytes: float) -> tuple[str, int | None]:
    """(class, stride in elements or None) of an access with these counts per request. A
    permutation of a warp's own words is coalesced to these counters (it is:
    warp/permute_segment runs as fast); lanes that all read one word are a broadcast."""
    if sectors <= ideal + _SLACK and ideal <= 1 + _SLACK and lanes * word_bytes > SECTOR_BYTES:
        return "broadcast", None
    if sectors <= ideal + _SLACK:
        return "coalesced", None
    fewest_lines = math.ceil(lanes * word_bytes / LINE_BYTES - _SLACK)
    if sectors <= ideal + 1 + _SLACK and lines <= fewest_lines + 1 + _SLACK:
        return "misaligned", None
    if lines >= lanes - 0.5:
        return "own line", None
    stride = round(lines * LINE_BYTES / (lanes * word_bytes)) if word_bytes else None
    if stride and stride > 1:
        expected = min(lanes, math.ceil(lanes * stride * word_bytes / SECTOR_BYTES))
        if abs(sectors - expected) <= 0.15 * expected:
            return "strided", stride
    return "scattered", None


def twin_of(kind: str, stride: int | None, operation: str, word_bytes: float) -> str | None:
    """The built-in benchmark that does to memory what the access does."""
    op = "write" if operation == "Store" else "read"
    word = WORDS.get(int(word_bytes))
    if kind == "broadcast":
        return "warp/broadcast" if op == "read" else None
    if kind == "coalesced":
        return f"{op}/{word}/ilp:1/grid:full" if word else None
    if kind == "misaligned":
        return f"offset/f32/{op}/off:1" if word == "f32" else None
    if kind == "strided" and word == "f32" and stride:
        nearest = min(STRIDES, key=lambda s: abs(math.log(s / stride)))
        return f"stride/f32/{op}/s:{nearest}"
    if kind == "own line":
        return f"stride/f32/{op}/s:32" if word == "f32" else None
    if kind == "scattered":
        return "gather/random" if op == "read" else "scatter/random"
    return None


def fix_for(kind: str, stride: int | None, word_bytes: float) -> str | None:
    """The known fix, in the words `gmb pattern` uses."""
    if kind == "own line":  # a walk a line or more apart, or a scattered index
        return f"{SUGGESTIONS['transpose']} for a walk down columns; to {SUGGESTIONS['sort']} " \
               "for a scattered index"
    if kind == "strided" and stride and stride * word_bytes >= LINE_BYTES:
        return SUGGESTIONS["transpose"]
    if kind == "strided":
        return SUGGESTIONS["aos"]
    return {"scattered": SUGGESTIONS["sort"], "misaligned": SUGGESTIONS["align"]}.get(kind)
