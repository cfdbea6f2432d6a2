"""The transpose ladder's tiled rungs (`Params.tiles`), taken apart by the calibration's probes
(`model/transpose/f32/...`, benchmarks/transpose.cu, kernels/transpose_probes.cuh), each a
rung's own blocks with one part left out:

- `moved/block:32x8`: each tile loaded as the rungs of 32 x 8 threads load it and stored to its
  transposed place, its rows kept, no shared memory: what DRAM gives such writes, tiles 32 rows
  apart landing a tile row apart (`moved_gbs`, the DRAM roof of every rung that writes whole
  tiles to their transposed places);
- `moved/block:32x32`: the same by the 32 x 32 rungs' blocks, one element per thread: how long
  such a block holds its slot (model_bounds solves it, as the row walk's);
- `exchange/pad:1` and `stores/block:32x32`: no load; each element's value made in registers,
  through the padded shared tile and stored transposed, or stored straight: what the exchange
  adds to a 32 x 32 block's round (`exchange_ns`), the round of a probe being an SM's blocks'
  bytes over its rate.

A 32 x 32 rung's block then holds its slot for the moved tile's and its exchange's. An unpadded
tile puts a column in one bank: after the barrier the block's 32 warps each read theirs in 32
wavefronts of the shared memory, one per cycle, a batch of 32 x 31 more than the padded tile's
that the block waits for, and for the batch of another block of the SM under way: an M/D/1
queue, as the L1's data stage (`conflict_ns`).
"""

from dataclasses import dataclass

from gmbtools.analysis.kernel_shape import Shape

PROBE = "model/transpose/f32/"
MOVED = PROBE + "moved/block:32x8"
BIG_MOVED = PROBE + "moved/block:32x32"
EXCHANGE = PROBE + "exchange/pad:1"
STORES = PROBE + "stores/block:32x32"
TILE = 32  # a tile's side in 4-B words (kTransposeTile), a shared tile's banks
BIG_BLOCK = TILE * TILE  # threads of a 32 x 32 rung's block
EXCHANGES = {"tile": 0, "tile_padded": 1}  # the 32 x 32 rungs: their shared tile's pad
# The 32 x 8 rungs that store whole tiles to their transposed places in row order, as the
# probe does (the full sweep's `tile_async` too, and `tile_diagonal` not, whose writes land
# along diagonals: both modelled as plain copies for now)
MOVED_RUNGS = ("tile_rows8", "tile_tma")
TILE_BYTES = TILE * TILE * 4  # what one block of the no-load probes writes


@dataclass(frozen=True)
class TileProbes:
    """What the run measured of the tiled rungs."""

    moved_gbs: float | None  # tiles written to their transposed places (32 x 8 blocks)
    big_moved_gbs: float | None  # ... by 32 x 32 blocks
    exchange_ns: float | None  # what the padded exchange adds to a 32 x 32 block's round


def probes_from(value, sms: int | None, threads_per_sm: int) -> TileProbes | None:
    """The tiles' probes of one run (`value(name)`: a benchmark's GB/s), None without any."""
    moved, big = value(MOVED), value(BIG_MOVED)
    per_sm = threads_per_sm // BIG_BLOCK

    def round_ns(name: str) -> float | None:  # an SM's blocks' bytes over the probe's rate
        gbs = value(name)
        return TILE_BYTES * per_sm * sms / gbs if gbs and sms and per_sm else None

    stores, exchange = round_ns(STORES), round_ns(EXCHANGE)
    extra = max(0.0, exchange - stores) if stores is not None and exchange is not None else None
    if moved is None and big is None and extra is None:
        return None
    return TileProbes(moved, big, extra)


def conflict_ns(clock_ghz: float | None, round_ns: float, per_sm: float) -> float | None:
    """What an unpadded tile's bank conflicts add to its block's round (`round_ns`, `per_sm`
    blocks per SM): the batch of 32 warps x 31 more wavefronts at one a cycle, and the wait
    for another block's batch under way (M/D/1); None without the SM clock."""
    if not clock_ghz:
        return None
    batch = (BIG_BLOCK // 32) * (TILE - 1) / clock_ghz  # each warp's column: one bank
    busy = min(per_sm * batch / round_ns, 0.99) if round_ns > 0 else 0.99
    return batch + busy * batch / (2 * (1 - busy))


def moved_shape(exchange: int | None = None, dram_bytes: float = 1.0,
                efficiency: float = 1.0) -> Shape:
    """A 32 x 32 rung's kernel as the model sees it: 1,024 threads a block, one 4-B load each,
    its tile written to the transposed place; `exchange`: the pad of its shared tile (None: the
    moved probe's, no exchange)."""
    return Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram_bytes,
                 efficiency=efficiency, threads_per_block=BIG_BLOCK, ld_sectors_per_req=4.0,
                 transposed_tiles=True, exchange=exchange)


def moves_tiles(row) -> bool:
    """Whether a transpose row's rung writes whole f32 tiles where the moved probe does."""
    return row.get("family") == "transpose" and row.get("op") in MOVED_RUNGS and \
        row.get("type") == "f32"


def rung_shape(row, dram_bytes: float, efficiency: float) -> Shape | None:
    """A 32 x 32 rung's shape (`moved_shape`, its pad from its name); None but for f32, the
    probes' element."""
    if row.get("type") != "f32" or row.get("op") not in EXCHANGES:
        return None
    return moved_shape(EXCHANGES[row["op"]], dram_bytes, efficiency)
