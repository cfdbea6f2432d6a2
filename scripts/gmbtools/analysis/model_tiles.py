"""The transpose ladder's tiled rungs (`Params.tiles`), taken apart by the calibration's probes
(`model/transpose/f32/...`, benchmarks/transpose.cu, kernels/transpose_probes.cuh), each a
rung's own blocks with one part left out:

- `moved/block:32x8`: each tile loaded as the rungs of 32 x 8 threads load it and stored to its
  transposed place, its rows kept, no shared memory: what DRAM gives such writes, tiles 32 rows
  apart landing a tile row apart (`moved_gbs`, the DRAM roof of every rung that writes whole
  tiles to their transposed places);
- `moved/block:32x32`: the same by the 32 x 32 rungs' blocks, one element per thread: how long
  such a block holds its slot (model_bounds solves it, as the row walk's);
- `exchange/pad:0|1` and `stores/block:32x32`: no load; each element's value made in registers,
  through the shared tile (unpadded: 32-way bank conflicts; padded: none) and stored transposed,
  or stored straight: what the exchange adds to a 32 x 32 block's round (`exchange_ns`), the
  round of a probe being an SM's blocks' bytes over its rate.

A 32 x 32 rung's block then holds its slot for the moved tile's and its exchange's.
"""

from dataclasses import dataclass

from gmbtools.analysis.kernel_shape import Shape

PROBE = "model/transpose/f32/"
MOVED = PROBE + "moved/block:32x8"
BIG_MOVED = PROBE + "moved/block:32x32"
EXCHANGE = {0: PROBE + "exchange/pad:0", 1: PROBE + "exchange/pad:1"}
STORES = PROBE + "stores/block:32x32"
BIG_BLOCK = 1024  # threads of a 32 x 32 rung's block
EXCHANGES = {"tile": 0, "tile_padded": 1}  # the 32 x 32 rungs: their shared tile's pad
MOVED_RUNGS = ("tile_rows8", "tile_tma")  # 32 x 8 rungs storing whole tiles transposed
TILE_BYTES = 32 * 32 * 4  # what one block of the no-load probes writes


@dataclass(frozen=True)
class TileProbes:
    """What the run measured of the tiled rungs."""

    moved_gbs: float | None  # tiles written to their transposed places (32 x 8 blocks)
    big_moved_gbs: float | None  # ... by 32 x 32 blocks
    exchange_ns: dict  # pad -> what the exchange adds to a 32 x 32 block's round (ns)


def probes_from(value, sms: int | None, threads_per_sm: int) -> TileProbes | None:
    """The tiles' probes of one run (`value(name)`: a benchmark's GB/s), None without any."""
    moved, big = value(MOVED), value(BIG_MOVED)
    per_sm = threads_per_sm // BIG_BLOCK

    def round_ns(name: str) -> float | None:  # an SM's blocks' bytes over the probe's rate
        gbs = value(name)
        return TILE_BYTES * per_sm * sms / gbs if gbs and sms and per_sm else None

    stores = round_ns(STORES)
    exchange = {pad: ns - stores for pad, name in EXCHANGE.items()
                if stores is not None and (ns := round_ns(name)) is not None}
    if moved is None and big is None and not exchange:
        return None
    return TileProbes(moved, big, {pad: max(0.0, ns) for pad, ns in exchange.items()})


def moved_shape(exchange: int | None = None, dram_bytes: float = 1.0,
                efficiency: float = 1.0) -> Shape:
    """A 32 x 32 rung's kernel as the model sees it: 1,024 threads a block, one 4-B load each,
    its tile written to the transposed place; `exchange`: the pad of its shared tile (None: the
    moved probe's, no exchange)."""
    return Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram_bytes,
                 efficiency=efficiency, threads_per_block=BIG_BLOCK, ld_sectors_per_req=4.0,
                 transposed_tiles=True, exchange=exchange)


def slot_from(gbs: float | None, bound) -> float | None:
    """The slot (ns) with which `bound(slot)` (GB/s, falling as the slot grows) gives the moved
    probe's `gbs`, by bisection; 0 where the bound with none is already at or below it, None
    without the probe or a bound."""
    if not gbs or not bound(0.0) == bound(0.0):  # no probe, or no latency bound (nan)
        return None
    if bound(0.0) <= gbs:
        return 0.0
    lo, hi = 0.0, 20000.0
    if not bound(hi) < gbs:
        return None
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if bound(mid) > gbs else (lo, mid)
    return lo
