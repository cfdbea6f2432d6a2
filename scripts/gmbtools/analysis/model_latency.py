"""The latency bound of the prediction model (`model_bounds`): Little's law. Every SM holds
`threads_per_sm` threads, each with its loads in flight, and the GPU moves them once per round,
so the logical rate B solves B = factor x sms x bytes in flight per SM / round(B)
(`littles_law.solve`). The round (docs/model.md, the latency bound):

- the DRAM latency under the load the kernel itself makes: the loaded chase's curve of the
  same mix (`mixed_curve`), read at the DRAM rate the kernel makes (its logical rate over its
  efficiency: a load that brings unused sectors loads the DRAM more), as a share of what DRAM
  gives the kernel's own traffic;
- the wait for each further 128-B line of a warp's round (`Shape.lines_per_round`; the idle
  wait, as much longer as the loaded latency is);
- the wait in the L1's queue: its data stage takes a load's lines one per cycle (an M/D/1
  queue's mean wait at the share of that stage's rate the kernel uses);
- a persistent grid: the warp's own round (loop and address; cp.async's staging,
  `model_rounds`): with one load per thread on the line through the calibration's grid of
  6 KiB per SM at the drain's rate (`grid_round`), a read of two or more one warp's and the
  SM's drain: the bytes the SM's other warps hold in flight, taken
  in at `drain_bytes_per_ns` (`drain_from`);
- a grid of one block per tile: the time a block holds its slot (a loading block's of its size,
  `model_rounds`, or by its warps' instructions) and its wait among the SM's block starts;
- a reduce rung's block: its tree in shared memory, longer the more trees share the SM
  (`model_trees`); an unpadded transpose tile's block: its bank conflicts (`model_tiles`).
"""

import math

import numpy as np

from gmbtools.analysis import model_bulk, model_rounds, model_tiles, model_trees
from gmbtools.analysis.littles_law import LoadedCurve, loaded_curve, solve

NO_ROOF = 1e5  # GB/s: where Little's law is solved when the run has no DRAM bound
EVEN = 0.5  # the copy curve's share of DRAM bytes written
MIX_SHARE = 0.2  # the mix curve's (model/loaded/load:mix: kernels/latency.cuh, stream_load::kMix)
MIX_SOURCE = "model/loaded/load:mix/*"
# The drain's sources, best first: (word bytes, loads per thread, threads per SM or None for
# the SM's most) of a persistent read of two or more loads per thread below DRAM's rate: the
# calibration's probe, else a grid of the SM's most threads (as most kernels run), else fewer.
DRAIN_SOURCES = {
    "model/inflight/read/w:4/ilp:2/block:256/bpsm:4/grid:persistent": (4, 2, 1024),
    "read/f32/ilp:2/grid:persistent": (4, 2, None),
    "inflight/read/w:4/ilp:4/block:256/bpsm:2/grid:persistent": (4, 4, 512),
}
# ... and of four loads per thread, the calibration's (`drain_bytes_per_ns`: between the two)
DEEP_DRAIN = {"model/inflight/read/w:4/ilp:4/block:256/bpsm:3/grid:persistent": (4, 4, 768)}


def drain_from(value, sources: dict = DRAIN_SOURCES) -> tuple[str, tuple] | None:
    """(source, (word, loads, threads, GB/s)) of the first drain source the run measured
    (`value(name)`: its GB/s or None), or None."""
    for name, (word, loads, threads) in sources.items():
        gbs = value(name)
        if gbs:
            return name, (word, loads, threads, gbs)
    return None


def drains(s) -> bool:
    """Whether a kernel's round waits for the SM's drain: a persistent read of two or more
    loads per thread (with one, the drain is already in the warp's own round)."""
    return s.grid == "persistent" and s.op == "read" and \
        s.load_bytes_per_thread / s.word_bytes >= 2


def grid_round(s) -> bool:
    """Whether a kernel's own round is the calibration's grid of one load per thread, on the
    line of the SM's bytes in flight (`model_rounds.grid_round`): a persistent read or copy of
    one load per thread (a read of two or more: the one-warp round and the drain)."""
    return s.grid == "persistent" and s.op in ("read", "copy") and not s.chunks and \
        s.load_bytes_per_thread / s.word_bytes < 2


def mix_curve_from(rows, read_curve: LoadedCurve | None) -> LoadedCurve | None:
    """The mix's curve from one file's `model/loaded/load:mix/*` rows (None without two
    points); its probes stream from 8 SMs on: with none, the chase is the read curve's idle."""
    mix = loaded_curve(rows, "mix") if "load" in rows.columns else None
    if mix is not None and read_curve is not None and mix.gbs[0] > 0:
        mix = LoadedCurve(np.insert(mix.gbs, 0, 0.0), np.insert(mix.ns, 0, read_curve.idle_ns))
    return mix if mix is not None and len(mix.gbs) > 1 else None


def mixed_curve(p, s) -> LoadedCurve | None:
    """The loaded latency of a kernel that reads and writes: the copy's curve (as many bytes
    written as read) for an even mix, the read curve's for none, and between them the curves
    the run measured (the mix's, a fifth of its bytes written), linear in the writes' share
    between the two nearest."""
    if p.copy_curve is None or p.read_curve is None:
        return p.copy_curve
    reads, writes = s.dram_split
    share = writes / (reads + writes) if reads + writes > 0 else EVEN
    if share >= EVEN:
        return p.copy_curve
    known = [(0.0, p.read_curve), (EVEN, p.copy_curve)]
    if p.mix_curve is not None:
        known.insert(1, (MIX_SHARE, p.mix_curve))
    for at, curve in known:
        if math.isclose(share, at, abs_tol=1e-9):
            return curve
    (low, below), (high, above) = next(
        (a, b) for a, b in zip(known, known[1:]) if a[0] < share < b[0])
    weight = (share - low) / (high - low)
    most = (1 - weight) * below.most_gbs + weight * above.most_gbs
    gbs = np.union1d(below.gbs, above.gbs)
    gbs = np.append(gbs[gbs < most], most)  # up to what DRAM gives the mix
    ns = [(1 - weight) * below.latency(g) + weight * above.latency(g) for g in gbs]
    return LoadedCurve(gbs, np.array(ns))


def littles_law(p, s, curve: LoadedCurve, roof: float, load_slot: float | None,
                drain: float | None) -> tuple[float, float]:
    """(logical GB/s, a reduce rung's tree time there) of kernel `s` on the run's parameters
    `p`: `littles_law.solve` on the curve read at the DRAM rate the kernel makes (inf where B
    would pass the roof but the run has no DRAM bound). `load_slot`: a loading block's slot
    (ns) where it is not `p.load_slot_ns`; `drain`: the SM's drain rate (bytes per ns), for
    kernels that wait for it (`drains`, `grid_round`)."""
    threads = s.resident_threads or p.threads_per_sm
    # each further line's wait, measured idle, grows as the loaded latency does
    lines_ns = (p.line_ns or 0.0) * (s.lines_per_round - 1)
    bif, factor = threads * s.active * s.load_bytes_per_thread, max(s.factor, 1.0)
    slot = 0.0
    turnaround = model_bulk.chunk_turnaround_ns(p, s)
    if s.chunks and turnaround:  # a bulk stage waits for its copy and the turnaround
        slot += turnaround
    elif s.grid == "persistent" or s.rounds > 1:  # a warp's own round: the use, the next load
        own = model_rounds.grid_round(p, bif, drain) if grid_round(s) else None
        slot += own if own is not None else \
            (p.round_ns or 0.0) * (1 if s.grid == "persistent" else 1 - 1 / s.rounds)
        if s.staged and s.grid == "persistent":  # cp.async's staging through shared memory
            slot += p.async_ns or 0.0
    if drain and drains(s):  # the other warps' bytes in flight, taken in at the drain's rate
        slot += max(0.0, bif - 32 * s.load_bytes_per_thread) / drain
    if s.grid == "full":  # a tile's block holds its slot for an empty block's turnaround and
        # waits its turn among the SM's starts: one per sms / block_rate ns at the GPU's rate
        start = p.sms / p.block_rate if p.block_rate else 0.0
        slot += (model_rounds.load_slot(p, s.threads_per_block) if load_slot is None
                 else load_slot) / s.rounds
        slot += start / s.rounds  # once per block
    # the curve's load as a share of what DRAM gives this kernel's traffic: a stream DRAM
    # moves more slowly (a persistent grid's one-line requests) reaches the same queues sooner
    scale = min(1.0, roof / (curve.most_gbs * s.efficiency)) if math.isfinite(roof) else 1.0
    logical_curve = LoadedCurve(curve.gbs * s.efficiency * scale, curve.ns)
    peak = roof if math.isfinite(roof) else NO_ROOF
    empty = (p.block_slot_ns or 0.0) + (p.sms / p.block_rate if p.block_rate else 0.0)
    tree = model_trees.tree_of(p.trees or {}, s.tree, empty) if s.tree else None
    per_sm = threads / s.threads_per_block

    def tree_ns(gbs: float) -> float:  # a reduce rung's tree at the round `gbs` gives
        return tree.time(factor * p.sms * bif / gbs, per_sm) if tree and gbs > 0 else 0.0

    def conflicts_ns(gbs: float) -> float:  # an unpadded tile's, queued behind the SM's others'
        if s.exchange != 0 or gbs <= 0:
            return 0.0
        return model_tiles.conflict_ns(p.sm_clock_ghz, factor * p.sms * bif / gbs, per_sm) or 0.0

    l1_gbs = p.sms * p.sm_clock_ghz * 32 * s.word_bytes / s.lines_per_request * factor \
        if p.sm_clock_ghz and s.lines_per_request else None

    def queue(b: float) -> float:  # the wait for the L1's data stage, one line per cycle
        if not l1_gbs:
            return 0.0
        rho = min(b / l1_gbs, 0.99)
        return s.lines_per_request / p.sm_clock_ghz * rho / (2 * (1 - rho))

    def extra(b: float) -> float:
        lines = lines_ns * logical_curve.latency(b) / max(logical_curve.idle_ns, 1e-9) \
            if lines_ns else 0.0
        return slot + tree_ns(b) + conflicts_ns(b) + lines + queue(b)

    gbs = solve(bif, p.sms, peak, logical_curve, factor=factor, extra_ns=extra)
    return (math.inf, 0.0) if gbs >= NO_ROOF else (gbs, tree_ns(gbs))
