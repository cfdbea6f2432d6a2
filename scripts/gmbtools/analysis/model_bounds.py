"""The bounds of the prediction model: what limits a streaming kernel, each a rate of logical
bytes (read + written, as `bytes_per_second` counts them) from the run's parameters
(`model_params.Params`) and the kernel's shape (`Shape`). The prediction is the lowest bound;
`model_bound` names it (docs/model.md).

- `dram`: DRAM moves the kernel's DRAM bytes (the traffic model's `model_dram_bytes`) at the
  rate of its mix of reads and writes (`Params.dram_ns_per_byte`), strided or scattered
  accesses paying their share of the page term (`model_pages`), a plain copy on a block per
  tile its depth's factor (`model_mix`); a mix of less than half its bytes written no more than
  the loaded chase's streams of one array moved at their busiest (`read_mostly_gbs`).
- `latency`: Little's law (`model_latency`): every SM's threads hold their loads in flight
  for a round: the DRAM latency under the load the kernel itself makes, the wait for the
  round's further lines and in the L1's queue, a persistent warp's own round and the SM's
  drain, a block's slot and start, a reduce rung's tree.
- `block starts`: a grid of one block per tile starts at most `block_rate` blocks per ns.
- `L2 to SM`: every request moves its sectors from the L2 to the SM; the L2's rate counts
  sector bytes, so a request of 32 sectors for 128 useful bytes moves 8 sector bytes each, and
  the L2 answers in halves of a line: a lane alone in its 64 B (lanes 64 B apart or more
  whose lines no other warp of the block reads: strides, gathers) costs 64 B.
- `L1 lines`: the L1 takes one 128-B line of a warp load per SM cycle: a load whose 32 lanes
  touch 16 lines (a 64-B structure's word, lane by lane) moves 8 B per cycle per SM.
- `SM to L2`: stores of lanes 64 B apart or more reach the L2 one line each, at the rate of the
  calibration's column walk (`l2_stores_per_ns`; without it, 128 B of the L2's rate per store);
  stores that share lines are not a bound.
- `chunk turnaround`: a block of bulk copies turns around one chunk per `bulk_chunk_ns`, or
  per the time a warp of a read takes to check its share of the chunk; a block of bulk writes
  one per the write probes' turnaround at its chunk's bytes (`model_bulk`).
- `address translation`: loads scattered over more pages than the SM's TLB reaches each wait
  for a translation, at most `translations_per_ns` of them (`model_translation`).
- `tree`: Little's law, as `latency`, for a reduce rung whose tree in shared memory takes
  longer than its load's round trip (`model_trees`).
"""

import dataclasses
import math

import numpy as np

from gmbtools.analysis import (model_bulk, model_instructions, model_latency, model_pages,
                               model_rounds, model_tiles)
from gmbtools.analysis.kernel_shape import Shape  # also model_bounds.Shape
from gmbtools.analysis.model_params import Params

SECTOR = 32

DRAM, LATENCY, BLOCKS, L2 = "DRAM", "latency", "block starts", "L2 to SM"
L2_STORES = "SM to L2"  # lone stores, a line each
HALF_LINE, LINE = 64, 128  # what the L2 moves for a load alone in its half line, a store alone
CACHE = "cache level"  # hot reads at the rate of the level that holds them (model_onchip)
LINK = "host link"  # mapped host memory at the copy engine's rate over the link (model_links)
TURNAROUND = "chunk turnaround"  # a block of bulk copies handles one chunk at a time (model_bulk)
L1_LINES = "L1 lines"  # the L1 answers one 128-B line of a warp load per cycle
TREE = "tree"  # a reduce rung's blocks sum in shared memory, sharing the SM (model_trees)
TRANSLATION = "address translation"  # scattered loads past the TLB's reach (model_translation)


def bounds(p: Params, s: Shape) -> dict[str, float]:
    """Every bound that applies, in logical GB/s (a bound the run lacks a parameter for is
    left out; none for a 32 x 32 tile's block without the tiles' probes)."""
    slot = tile_slot_ns(p, s)
    if s.exchange is not None and slot is None:  # a 32 x 32 tile's block, no probes to time it
        return {}
    return _bounds(p, s, (rows_apart_ns(p) or 0.0) if s.rows_apart else 0.0, slot)


def _bounds(p: Params, s: Shape, rows_ns: float, slot_ns: float | None = None) -> dict[str, float]:
    """`bounds`, a block over rows far apart holding its slot `rows_ns` longer; a block of a
    full grid holding it `slot_ns` where given."""
    out: dict[str, float] = {}
    reads, writes = s.paced_split
    both = s.read_step is not None and s.write_step is not None and "both" in (p.pages or {})
    ns_per_byte = p.dram_ns_per_byte(reads, writes,
                                     model_pages.share(p.pages, "both" if both else "read",
                                                       s.read_step),
                                     model_pages.share(p.pages, "both" if both else "write",
                                                       s.write_step, s.word_bytes),
                                     persistent=s.grid == "persistent", word_bytes=s.word_bytes)
    if ns_per_byte and reads + writes < s.dram_bytes:  # per DRAM byte, the free indices' too
        ns_per_byte *= (reads + writes) / s.dram_bytes
    if ns_per_byte and p.mix is not None and s.op == "copy" and s.spread_loads:
        # a plain copy's depth: its loads a block apart, on either grid (model_mix)
        ns_per_byte *= p.mix.depth(s.load_bytes_per_thread)
    roof = s.efficiency / ns_per_byte if ns_per_byte else math.inf  # what loads the queues
    if ns_per_byte and s.store_extra and p.store_part_ns and s.dram_bytes > 0:
        # stores off their sectors take DRAM longer, not its queues (model_stores); per DRAM
        # byte, as ns_per_byte is
        ns_per_byte += writes * s.store_extra * p.store_part_ns / s.dram_bytes
    if ns_per_byte:
        out[DRAM] = s.efficiency / ns_per_byte
        streams = read_mostly_gbs(p, s)
        if streams:
            out[DRAM] = min(out[DRAM], streams * s.efficiency)
        if s.transposed_tiles and p.tiles is not None and p.tiles.moved_gbs:
            out[DRAM] = min(out[DRAM], p.tiles.moved_gbs * s.efficiency)  # model_tiles
    if s.grid == "full" and p.block_rate:
        per_block = s.threads_per_block * s.active * s.load_bytes_per_thread * \
            max(s.factor, 1.0) * s.rounds
        out[BLOCKS] = p.block_rate * per_block
    if s.op != "write" and p.sms:
        curve = p.read_curve if s.op == "read" else model_latency.mixed_curve(p, s)
        if curve is not None:
            full_copy = s.grid == "full" and s.op == "copy"  # the probes are such copies
            slots = instruction_slots(p) if s.instructions and full_copy else None
            load_slot = slots.slot(s.instructions) if slots is not None else None
            if slot_ns is not None and s.grid == "full":
                load_slot = slot_ns
            if rows_ns and s.grid == "full":  # it waits for the slowest of its rows
                load_slot = (model_rounds.load_slot(p, s.threads_per_block) if load_slot is None
                             else load_slot) + rows_ns
            gbs, tree_ns = model_latency.littles_law(
                p, s, curve, roof, load_slot,
                drain_bytes_per_ns(p, s.load_bytes_per_thread / s.word_bytes)
                if model_latency.drains(s) or model_latency.grid_round(s) else None)
            # a reduce rung whose tree takes longer than its load's round trip: the tree's
            out[TREE if tree_ns > curve.latency(gbs) else LATENCY] = gbs
    turnaround = model_bulk.chunk_turnaround_ns(p, s)
    if s.chunks and turnaround and p.sms:  # one chunk per turnaround, each block
        chunk_bytes = s.load_bytes_per_thread / s.chunks  # an SM's blocks' chunks, one each
        out[TURNAROUND] = p.sms * chunk_bytes / turnaround * max(s.factor, 1.0)
    if s.op != "write" and p.l2_gbs and s.ld_sectors_per_req:
        # a warp round's useful bytes against the sectors it brings from the L2; the L1 serves
        # the sectors the round's loads share (one structure's fields, a stencil's neighbours)
        useful = 32 * s.load_bytes_per_thread
        alone = s.lone_loads
        per_load = 32 * HALF_LINE if alone else s.ld_sectors_per_req * SECTOR
        moved = per_load * s.load_bytes_per_thread / s.word_bytes
        if not s.l1_reuse and s.requests:  # each request past the L1 brings its own sectors
            moved = per_load * s.requests
        if s.l1_reuse and not alone:
            moved = min(moved, max(useful / max(s.efficiency, 1e-9), SECTOR))
        if moved > useful:
            out[L2] = p.l2_gbs * useful / moved * max(s.factor, 1.0)
    if p.sm_clock_ghz and p.sms and s.lines_per_request and s.op != "write":
        # the L1 takes a warp load's lines one per cycle: 32 lanes' words per that many cycles
        per_cycle = 32 * s.word_bytes / s.lines_per_request  # loaded bytes, per SM
        out[L1_LINES] = p.sms * p.sm_clock_ghz * per_cycle * max(s.factor, 1.0)
    if s.translated and p.translations_per_ns and s.op != "write":  # a translation per load
        # each load carries its word and, in a copy, the word it stores (model_translation)
        out[TRANSLATION] = p.translations_per_ns * s.word_bytes * max(s.factor, 1.0)
    per_ns = p.l2_stores_per_ns or (p.l2_gbs / LINE if p.l2_gbs else None)  # lone stores
    if per_ns and s.op != "read" and (s.write_step or 0) >= HALF_LINE:
        stored = s.store_bytes_per_thread or s.load_bytes_per_thread  # per thread
        stores = stored / (4.0 if s.store_bytes_per_thread else s.word_bytes)
        logical = s.load_bytes_per_thread * (max(s.factor, 1.0) if s.op == "copy" else 1.0)
        out[L2_STORES] = per_ns * logical / stores
    return out


def read_mostly_gbs(p: Params, s: Shape) -> float | None:
    """What DRAM gives a kernel that writes less than half its bytes: the most the loaded
    chase's streams moved, one array read (no writes: the read's streams), or a fifth of the
    bytes written in place (the mix's: `model_latency.MIX_SHARE`), and a copy's rate at half
    (`ref/memcpy_d2d`), linear in the write share between them; None for other shares and runs
    without the mix's streams. The deep mix probes (`model_mix`: eight or more arrays) move
    more than one array's reads and writes do."""
    reads, writes = s.dram_split
    share = writes / (reads + writes) if reads + writes > 0 else 0.0
    if p.mix_curve is None or p.read_curve is None or not p.copy_gbs or not 0.0 < share < 0.5:
        return None
    return float(np.interp(share, (0.0, model_latency.MIX_SHARE, 0.5),
                           (p.read_curve.most_gbs, p.mix_curve.most_gbs, p.copy_gbs)))


def instruction_slots(p: Params) -> model_instructions.InstructionSlots | None:
    """The block slot by a warp's instructions from the run's instruction probes: each probe's
    slot is the one with which this module's latency bound of the f32 copy gives its GB/s."""
    if not p.instruction_probes:
        return None

    def found():
        plain = dataclasses.replace(p, instruction_probes=None, solved={})

        def bound(slot: float, dram: float) -> float:
            copy = Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram,
                         efficiency=1.0, ld_sectors_per_req=4.0)
            return bounds(dataclasses.replace(plain, load_slot_ns=slot), copy).get(LATENCY, math.nan)

        return model_instructions.slots_from(p.instruction_probes, bound)

    return _solved(p, "instruction_slots", found)


def drain_bytes_per_ns(p: Params, loads: float = 2.0) -> float | None:
    """The SM's drain (bytes per ns per SM) for a kernel of `loads` loads per thread: the rate
    with which this module's latency bound of the run's drain probe (two loads per thread)
    gives its GB/s, and of its deep drain probe (four) where the run has it, log-linear in the
    loads between the two, flat outside; None where no rate reproduces the probe (the bound
    without a drain is below its GB/s, or the latency bound is not the probe's)."""
    two = _solved(p, "drain", lambda: _drain_of(p, p.drain_probe))
    if two is None or loads <= 2.0 or not p.deep_drain_probe:
        return two
    four = _solved(p, "deep_drain", lambda: _drain_of(p, p.deep_drain_probe))
    if four is None:
        return two
    share = min(1.0, math.log2(loads / 2.0))
    return two * (four / two) ** share


def _drain_of(p: Params, probe: tuple | None) -> float | None:
    """The drain rate that reproduces `probe` (word, loads, threads, GB/s), by bisection: the
    bound rises with the rate."""
    if not probe:
        return None
    word, loads, threads, gbs = probe
    read = Shape(op="read", load_bytes_per_thread=word * loads, grid="persistent",
                 dram_bytes=1.0, efficiency=1.0, ld_sectors_per_req=32 * word / SECTOR,
                 word_bytes=word, resident_threads=threads)
    plain = dataclasses.replace(p, drain_probe=None, deep_drain_probe=None, solved={})
    roof = bounds(plain, read).get(DRAM, math.inf)  # as `bounds` reads the curve

    def bound(rate: float) -> float:
        if plain.read_curve is None:
            return math.nan
        return model_latency.littles_law(plain, read, plain.read_curve, roof, None, rate)[0]

    lo, hi = 1.0, 1e5
    if not bound(lo) < gbs < bound(hi):
        return None
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if bound(mid) > gbs else (mid, hi)
    return math.sqrt(lo * hi)


def tile_slot_ns(p: Params, s: Shape) -> float | None:
    """How long a 32 x 32 tile's block holds its slot (`model_tiles`): the slot with which
    this module's latency bound of the moved probe gives its GB/s, and the padded exchange's
    time (an unpadded tile's conflicts: `model_latency`, by its round); None for other kernels
    and runs without the probes (or, for an unpadded tile, the SM clock)."""
    if s.exchange is None or p.tiles is None or p.tiles.exchange_ns is None or \
            (s.exchange == 0 and not p.sm_clock_ghz):
        return None

    def found():
        plain = dataclasses.replace(p, solved={})
        return time_for(p.tiles.big_moved_gbs, lambda ns: _bounds(
            plain, model_tiles.moved_shape(), 0.0, ns).get(LATENCY, math.nan))

    moved = _solved(p, "tile_slot", found)
    return None if moved is None else moved + p.tiles.exchange_ns


def rows_apart_ns(p: Params) -> float | None:
    """How much longer a block whose warps load rows far apart holds its slot: the time with
    which this module's latency bound of the row probe (`Params.row_probe`, the row-major
    matrix copy of 32 x 8 blocks) gives its GB/s (`time_for`)."""
    if not p.row_probe:
        return None

    def found():
        instructions, gbs, dram, efficiency, active = p.row_probe
        copy = Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram,
                     efficiency=efficiency, ld_sectors_per_req=4.0, instructions=instructions,
                     active=active, rows_apart=True)
        plain = dataclasses.replace(p, row_probe=None, solved={})

        return time_for(gbs, lambda ns: _bounds(plain, copy, ns).get(LATENCY, math.nan))

    return _solved(p, "rows_apart", found)


def time_for(gbs: float | None, bound) -> float | None:
    """The time (ns) with which `bound(ns)` (GB/s, falling as the time grows) gives a probe's
    `gbs`, by bisection; 0 where the bound with none is already at or below it, None without
    the probe or a bound (nan)."""
    if not gbs or not bound(0.0) == bound(0.0):
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


def _solved(p: Params, key: str, find):
    """A term found by solving the model for its probe (`find()`), kept on `p` with the
    parameters it was found from (the very objects) and found again when any has changed."""
    inputs = tuple(getattr(p, f.name) for f in dataclasses.fields(p) if f.name != "solved")
    cached = p.solved.get(key)
    if cached is None or len(cached[0]) != len(inputs) or \
            any(a is not b for a, b in zip(cached[0], inputs)):
        cached = (inputs, find())
        p.solved[key] = cached
    return cached[1]


def predict(p: Params, s: Shape) -> tuple[float | None, str | None]:
    """(model GB/s, the bound that wins), or (None, None) when no bound applies."""
    found = bounds(p, s)
    if not found:
        return None, None
    name = min(found, key=found.get)
    return found[name] * s.counted, name
