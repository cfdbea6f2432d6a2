"""What the prediction model needs of one kernel (`Shape`): the bytes it moves, how many each
thread keeps in flight, how its lanes and warps lay them out, its grid. `model_shapes` builds one
per benchmark from its row; `model_bounds` turns it into bounds."""

import math
from dataclasses import dataclass


def index_share(family: str) -> float:
    """Of the logical bytes a benchmark counts, the indices it reads: gather/ and scatter/
    read a 4-B index from a table beside each 4-B load and store (benchmarks/warp.cu)."""
    return 1 / 3 if family in ("gather", "scatter") else 0.0


@dataclass(frozen=True)
class Shape:
    """What the model needs of one kernel. Bytes are per launch unless named per thread."""

    op: str  # "read", "write" or "copy": which bytes it moves and which latency curve applies
    load_bytes_per_thread: float  # loads a thread has in flight at once (ilp x word)
    grid: str  # "full": one block per tile; "persistent": each SM's blocks loop
    dram_bytes: float  # the traffic model's DRAM bytes
    efficiency: float  # the bytes its GB/s counts / DRAM bytes (above 1 where lanes share words)
    threads_per_block: int = 256
    ld_sectors_per_req: float | None = None  # sectors one warp load brings to the SM
    word_bytes: float = 4.0
    resident_threads: int | None = None  # per SM; None: the SM's most
    read_step: float | None = None  # bytes between neighbouring lanes' loads (None: streaming)
    write_step: float | None = None  # ... stores
    lone_loads: bool = False  # every lane's load alone in its half line, no other warp's there
    store_bytes_per_thread: float | None = None  # a copy's stores, where not its loads' bytes
    l1_reuse: bool = True  # the L1 serves a warp's repeated sectors (not with -dlcm=cg)
    chunks: float = 0.0  # bulk copies a block keeps in flight, turned around one at a time
    checked_bytes: float = 0.0  # of each chunk, what one warp of a bulk read checks
    filled_bytes: float = 0.0  # of each chunk, what the warp of a bulk write fills first
    tree: str | None = None  # the reduce rung whose tree holds the block after its loads
    counted: float = 1.0  # the bytes the benchmark counts per byte its lanes ask for (padding)
    rounds: float = 1.0  # rounds of loads a block of a full grid makes, one after another
    lines_per_request: float | None = None  # 128-B lines one warp load touches (the L1's cycles)
    lines_per_load: float | None = None  # ... its sectors span, where a line holds not 4 of them
    instructions: float | None = None  # a warp's, one pass (model_warp_instructions)
    store_extra: float = 0.0  # extra sectors its stores write per sector filled (model_stores)
    active: float = 1.0  # the share of a block's threads that load (the rest hold slots idle)
    requests: float | None = None  # warp loads a round makes where each goes past the L1
    spread_loads: bool = False  # a thread's loads a block apart: each in a line of its own
    rows_apart: bool = False  # a block's warps load rows far apart (32 x 8 over a matrix)
    staged: bool = False  # its loads go to shared memory by cp.async (LDGSTS)
    transposed_tiles: bool = False  # it writes whole tiles to their transposed places
    exchange: int | None = None  # a 32 x 32 tile's pad in shared memory (model_tiles)
    translated: bool = False  # each load needs an address translation (model_translation)
    index_share: float = 0.0  # of the logical bytes, the indices it reads (streaming: gather/)

    @property
    def logical_bytes(self) -> float:
        return self.dram_bytes * self.efficiency

    @property
    def lines_per_round(self) -> float:
        """128-B lines one warp's loads of one round touch: a strided load's lanes share a line
        only within 128 B; otherwise the lines its sectors span (a request of 5 sectors: 2),
        each load apart, at most the lines of the distinct bytes the round brings (loads of
        one structure's fields share theirs), never fewer than one load's own (a gather's
        lanes in lines other warps also read), unless the loads are a block apart; loads that go
        past the L1 (`requests`, `l1_reuse` off) each wait for their own lines."""
        loads = max(1.0, self.load_bytes_per_thread / self.word_bytes)
        if self.read_step is not None:
            step = self.read_step
            return loads * (32.0 if not math.isfinite(step) else min(32.0, max(1.0, step / 4)))
        per_load = self.lines_per_load or max(
            1.0, math.ceil((self.ld_sectors_per_req or 4.0) / 4 - 1e-9))
        if not self.l1_reuse and self.requests:  # each request's lines come from the L2
            return self.requests * per_load
        lines = loads * per_load
        if self.spread_loads:
            return lines
        distinct = 32 * self.load_bytes_per_thread / max(self.efficiency, 1e-9)
        return min(lines, max(per_load, math.ceil(distinct / 128 - 1e-9)))

    @property
    def factor(self) -> float:
        """Logical bytes moved per logical byte loaded: 2 for a copy (each read is written), or
        what its own stores add."""
        if self.op == "copy" and self.store_bytes_per_thread is not None:
            return 1.0 + self.store_bytes_per_thread / self.load_bytes_per_thread
        return {"read": 1.0, "write": 0.0, "copy": 2.0}[self.op]

    @property
    def index_bytes(self) -> float:
        """DRAM bytes of the indices it reads (streaming, whichever side scatters)."""
        return min(self.logical_bytes * self.index_share, self.dram_bytes)

    @property
    def paced_split(self) -> tuple[float, float]:
        """`dram_split` less the indices where a side is scattered: while that side waits for
        its DRAM pages, the indices stream in the bus's idle time (gather/random makes
        stride/f32/read/s:1024's picks per ns, though it reads 4 B more per element)."""
        reads, writes = self.dram_split
        if self.read_step is None and self.write_step is None:
            return reads, writes
        return reads - self.index_bytes, writes

    @property
    def dram_split(self) -> tuple[float, float]:
        """(DRAM read bytes, DRAM write bytes) of one launch. A copy reads and writes the same
        logical bytes (besides its indices, read as they are); DRAM moves them as they are on
        the streaming side and the rest (whole sectors and granules, read-modify-writes) on the
        scattered one, half each where both are scattered."""
        if self.op == "read":
            return self.dram_bytes, 0.0
        if self.op == "write":
            return 0.0, self.dram_bytes
        index = self.index_bytes
        half = min((self.logical_bytes - index) / 2, self.dram_bytes - index)
        if self.store_bytes_per_thread is not None:  # the stores' share, streaming
            half = min(self.logical_bytes * (1 - 1 / self.factor), self.dram_bytes)
        if self.write_step is not None and self.read_step is None:
            return half + index, self.dram_bytes - half - index
        if self.write_step is not None and self.read_step is not None:
            return self.dram_bytes / 2, self.dram_bytes / 2
        return self.dram_bytes - half, half
