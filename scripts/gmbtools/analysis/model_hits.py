"""What an L2 hit costs beside misses (docs/model.md, hits beside misses): scattered loads that
the L2 answers, among scattered loads that each miss to DRAM, are not free. A quarter, half and
three quarters of every warp's lanes hitting a set on 8 pages beside misses over 2 GiB ran
slower than the misses' DRAM time alone gives, as much by whole warps as by lanes.

- The probe: `model/hits/lanes:16/set:16777216/span:2147483648` (benchmarks/warp.cu): 2^24
  threads, half of every warp's lanes reading one word of 2^17 lines on 8 pages (hits past the
  first pass), the other half a granule each over 2 GiB (misses), each storing its word
  coalesced.
- The term (`model_bounds.hit_ns`): the GPU's time per hit that the probe takes beyond the
  DRAM bound of its misses (their DRAM bytes and page term, as any scattered load's), added to
  DRAM's time per hit of a kernel with hits beside its misses.
- A pattern's hits (`pattern_model`): its scattered loads less those whose DRAM bytes bring a
  granule each.
"""

from gmbtools.analysis.kernel_shape import Shape

PROBE = "model/hits/lanes:16/set:16777216/span:2147483648"
HITS = 2**23  # half of the probe's 2^24 loads
GRANULE = 64  # what a missing load brings from DRAM


def probe_from(value) -> tuple | None:
    """(GB/s, DRAM bytes, efficiency) of the probe (`value(name, column)`), or None."""
    found = (value(PROBE), value(PROBE, "model_dram_bytes"), value(PROBE, "model_efficiency"))
    return found if all(found) else None


def probe_shape(dram_bytes: float, efficiency: float, hits: bool = True) -> Shape:
    """The probe's kernel: a gather of lone loads, one f32 a thread, the stores coalesced;
    `hits` False: as if its hits were free."""
    return Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram_bytes,
                 efficiency=efficiency, ld_sectors_per_req=32.0, read_step=float("inf"),
                 lone_loads=True, hits_per_dram_byte=HITS / dram_bytes if hits else 0.0)


def lone_hits(loads: float, load_dram_bytes: float) -> float:
    """Lone loads the L2 answers: those whose DRAM bytes do not bring a granule each."""
    return max(0.0, loads - load_dram_bytes / GRANULE)


def hit_ns(probe: tuple | None, dram_bound) -> float | None:
    """The GPU's time (ns) per hit that the probe (`probe_from`) takes beyond `dram_bound` of
    its shape without hits (a `Shape` -> GB/s, or None), at least 0; None without either."""
    if not probe:
        return None
    gbs, dram, efficiency = probe
    free = dram_bound(probe_shape(dram, efficiency, hits=False))
    if not free:
        return None
    logical = dram * efficiency
    return max(0.0, (logical / gbs - logical / free) / HITS)
