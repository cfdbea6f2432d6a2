"""What a warp's round and a block's slot cost beyond the loaded latency, from whole grids of
one 4-B load per thread (`model_params` takes them; `model_latency` adds them to a round):

- `round_ns`: a persistent warp's own round (loop, address, the dependent add): one warp per SM
  streaming alone, else a whole persistent grid, each round less the loaded latency at its
  bandwidth.
- `load_slot_ns`: how long a block of 256 threads that loads holds its slot on a grid of one
  block per tile: its round less the loaded latency and its wait among the SM's block starts;
  `big_slot_ns`, the same of blocks of 1,024 threads (32 warps: the block waits for the
  slowest), one per SM; a block between the two sizes holds its slot for the line between them
  (`load_slot`).
- `grid_round_ns`: the round of a persistent grid of six blocks of 256 per SM (6 KiB of loads
  in flight) beyond the loaded latency: a warp of a persistent read of one load per thread
  waits for the SM to take in its other warps' loads, so its round is on the line through this
  one at the SM's drain rate (`grid_round`): 8 warps per SM wait less than the grid, 64 more.
- `async_ns`: what staging a load through shared memory by cp.async adds to a persistent
  warp's round: the same grid's round read by cp.async less its round read plainly (each less
  the loaded latency at its own bandwidth).
"""

BIG_BLOCK = 1024
SMALL_BLOCK = 256
BIG_SLOT = "model/inflight/read/w:4/ilp:1/block:1024/bpsm:1/grid:full"
GRID_PAIR = ("model/inflight/read_async/w:4/ilp:1/block:256/bpsm:6/grid:persistent",
             "model/inflight/read/w:4/ilp:1/block:256/bpsm:6/grid:persistent")
GRID_THREADS = 256 * 6  # per SM, of each of the pair


def take_terms(p, value, take, sources: dict, round_bytes: dict) -> None:
    """The five terms of one run (`model_params.params_from`'s `value` and `take`), each from
    its source (`sources`: model_params.SOURCES) where the run has it."""
    if p.read_curve is None or not p.sms:
        return
    for name in sources["round_ns"]:
        gbs = value(name)
        if gbs:
            per_sm = round_bytes[name] * (1 if name.startswith("inflight") else p.threads_per_sm)
            take("round_ns", max(0.0, _round(p, per_sm, gbs)), name)
            break
    if p.block_rate:
        start = p.sms / p.block_rate  # the wait among the SM's block starts
        for key, name, threads in (("load_slot_ns", sources["load_slot_ns"][0], p.threads_per_sm),
                                   ("big_slot_ns", BIG_SLOT, BIG_BLOCK)):
            gbs = value(name)
            if gbs:
                take(key, max(0.0, _round(p, threads * 4, gbs) - start), name)
    staged, plain = (value(name) for name in GRID_PAIR)
    if plain:
        take("grid_round_ns", _round(p, GRID_THREADS * 4, plain), GRID_PAIR[1])
    if staged and plain:
        extra = _round(p, GRID_THREADS * 4, staged) - _round(p, GRID_THREADS * 4, plain)
        take("async_ns", max(0.0, extra), GRID_PAIR[0])


def _round(p, bytes_per_sm: float, gbs: float) -> float:
    """A grid's round (every SM's bytes in flight over its bandwidth) less the loaded latency."""
    return bytes_per_sm * p.sms / gbs - p.read_curve.latency(gbs)


def load_slot(p, threads_per_block: int) -> float:
    """How long a loading block of `threads_per_block` holds its slot: the 256-thread blocks'
    up to that size, linear in the threads to the 1,024-thread blocks' where the run measured
    them (flat past it)."""
    small = p.load_slot_ns or 0.0
    if p.big_slot_ns is None or threads_per_block <= SMALL_BLOCK:
        return small
    share = min(1.0, (threads_per_block - SMALL_BLOCK) / (BIG_BLOCK - SMALL_BLOCK))
    return small + share * (p.big_slot_ns - small)


def grid_round(p, bytes_per_sm: float, drain: float | None) -> float | None:
    """A persistent warp's own round (one load per thread) where the SM holds `bytes_per_sm`
    in flight: the calibration grid's, less or more the bytes it holds beyond the grid's at the
    drain rate (bytes per ns), never below 0; None without either."""
    if p.grid_round_ns is None or not drain:
        return None
    return max(0.0, p.grid_round_ns + (bytes_per_sm - GRID_THREADS * 4) / drain)
