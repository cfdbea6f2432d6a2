"""`gmb advise`'s what-if: a kernel's time were one group of its accesses fixed.

A group is the kernel's accesses of one class and stride (all the fields of one array of
structures fall in one: an SoA conversion fixes them together). The model splits the measured
time T of a launch in two:

- the floor: the bytes the kernel needs at the rate of the GPU's best coalesced kernel of the
  same kind (copy where loads and stores each move 5% of the bytes or more; else read or
  write), measured in a results folder of this GPU; for a fix the catalog measures as a
  kernel of its own (FIX_TWINS: a column walk's tiled transpose), at that kernel's rate. The
  bytes are the accesses' ideal sectors, or the DRAM bytes the profile counted where fewer
  (lines re-used through the caches are fetched once);
- the excess, T minus the floor, shared among the groups by their excess sectors (sectors
  beyond the ideal count, Nsight Compute's own).

Fixing a group removes its part of the excess. Where T is below the floor (the data came from
the L2), the excess is not DRAM's: the time scales with the sectors the fix removes.
"""

from dataclasses import dataclass

from gmbtools.analysis.advise_match import Advice, bad_groups
from gmbtools.analysis.pattern_class import SECTOR_BYTES
from gmbtools.data.ncu_launches import KernelTime


_DRAM = "its share of the time over coalesced"
_L2 = "measured below coalesced: the data came from the L2; time scaled by sectors"


@dataclass(frozen=True)
class Rate:
    """The best coalesced benchmark of one kind in the results folder."""

    kind: str  # "copy", "read" or "write"
    name: str
    gbs: float


@dataclass(frozen=True)
class Fix:
    group: list[Advice]
    seconds: float  # predicted time of a launch with the group fixed
    rate: Rate | None = None  # the fixed kernel's rate where the fix has a twin of its own

    @property
    def label(self) -> str:
        first = self.group[0]
        return first.kind if first.stride is None else f"{first.kind}, {first.stride} elements apart"


@dataclass(frozen=True)
class KernelWhatIf:
    kernel: str
    time: KernelTime
    needed_bytes: float  # what the floor moves
    rate: Rate | None
    floor_seconds: float | None
    bound: str  # how the fixes were predicted (_DRAM or _L2)
    fixes: list[Fix]


# A fix the catalog measures as a kernel of its own: a column walk fixed is the transpose
# ladder's tiled rung (32 x 8 threads, a padded 32 x 32 tile), whose shared-memory round trip
# keeps it below the best copy.
FIX_TWINS = {"column walk": "tiled transpose"}


def best_rates(gbs: dict[str, float]) -> dict[str, Rate]:
    """The best coalesced copy (a kernel or ref/memcpy_d2d), read and write of a folder, and
    the rates of the fixes the catalog measures (FIX_TWINS)."""
    prefixes = {"copy": ("copy/", "ref/memcpy_d2d"), "read": ("read/",), "write": ("write/",),
                "tiled transpose": ("transpose/f32/tile_rows8/",)}
    out: dict[str, Rate] = {}
    for kind, starts in prefixes.items():
        found = [(v, k) for k, v in gbs.items() if k.startswith(starts) and v > 0]
        if found:
            value, name = max(found)
            out[kind] = Rate(kind=kind, name=name, gbs=value)
    return out


def what_if(advice: list[Advice], times: dict[str, KernelTime],
            rates: dict[str, Rate]) -> list[KernelWhatIf]:
    """Per kernel that has a time, its floor and each group's predicted time."""
    out = []
    for kernel in dict.fromkeys(a.access.kernel for a in advice):
        if kernel not in times:
            continue
        mine = [a for a in advice if a.access.kernel == kernel]
        out.append(_kernel(kernel, mine, times[kernel], rates))
    return out


def _kernel(kernel: str, mine: list[Advice], time: KernelTime,
            rates: dict[str, Rate]) -> KernelWhatIf:
    rate = rates.get(_kind(mine))
    ideal = sum(a.access.ideal_sectors for a in mine) * SECTOR_BYTES
    needed = min(ideal, time.dram_bytes) if time.dram_bytes else ideal
    floor = needed / (rate.gbs * 1e9) if rate else None
    sectors = sum(a.access.sectors for a in mine)
    extra = {id(a): max(0.0, a.access.sectors - a.access.ideal_sectors) for a in mine}
    all_extra = sum(extra.values())
    dram_bound = floor is not None and time.seconds > floor
    fixes = []
    for group in bad_groups(mine):
        removed = sum(extra[id(a)] for a in group)
        own = rates.get(FIX_TWINS.get(group[0].kind, ""))
        group_floor = needed / (own.gbs * 1e9) if own else floor
        if dram_bound:
            seconds = time.seconds - (time.seconds - group_floor) * removed / all_extra
        else:
            seconds = time.seconds * (1 - removed / sectors) if sectors else time.seconds
        fixes.append(Fix(group=group, seconds=seconds, rate=own if dram_bound else None))
    return KernelWhatIf(kernel=kernel, time=time, needed_bytes=needed, rate=rate,
                        floor_seconds=floor, bound=_DRAM if dram_bound else _L2,
                        fixes=sorted(fixes, key=lambda f: f.seconds))


def _kind(mine: list[Advice]) -> str:
    """copy where loads and stores both move at least 5% of the bytes; else read or write."""
    loads = sum(a.access.ideal_sectors for a in mine if a.access.operation == "Load")
    stores = sum(a.access.ideal_sectors for a in mine if a.access.operation == "Store")
    if stores < 0.05 * (loads + stores):
        return "read"
    return "write" if loads < 0.05 * (loads + stores) else "copy"
