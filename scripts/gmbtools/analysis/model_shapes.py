"""Each benchmark's kernel as the prediction model sees it (`model_bounds.Shape`): which bytes
it moves, how many loads a thread keeps in flight, how its grid is laid out. From the name
(the naming contract of docs/design.md) and the traffic model's counters of the same row; the
launch facts are the kernels' own (`kernels/*.cuh`: 256-thread blocks, one tile per block
unless the name says `grid:persistent`).
"""

import math

import pandas as pd

from gmbtools.analysis import model_stores, model_texture, model_tiles
from gmbtools.analysis.kernel_shape import Shape, index_share
from gmbtools.analysis.model_bounds import HALF_LINE
from gmbtools.data.naming import element_bytes

# Families whose kernel reads one array and writes another of the same length (a mapped copy):
# the op in their name says which side the pattern is on, not what moves.
COPY_FAMILIES = ("offset", "stride", "aos", "soa", "aos_staged", "warp", "gather", "scatter",
                 "matrix", "reuse", "cache_op", "readonly", "vector", "transpose")


TILED_RUNGS = ("copy", "tile_rows8", "tile_tma", "best")
STRUCT_FAMILIES = ("aos", "soa", "aos_staged")
# Cache operators whose loads do not keep their lines in the L1 (a stencil's neighbours come
# from the L2, each request for itself), and the requests of the family's patterns
# (benchmarks/cache_ops.cu: a window of 5 words per thread).
L1_BYPASS = ("cg", "lu", "cv")
CACHE_OP_REQUESTS = {"copy": 1.0, "stencil": 5.0}
ONE_WORD_STORES = (*STRUCT_FAMILIES, "reuse", "cache_op", "readonly")
FIELDS = {"s8": 2, "p12": 3, "a12": 3, "s16": 4, "s32": 8, "s64": 16}  # floats per structure


def _loads_past_l1(row) -> bool:
    """Whether a round's loads each go past the L1 to the L2 instead of sharing the lines the
    L1 keeps: a cache operator that keeps no line there (`ld:cg|lu|cv`), or a plain load
    (`ld:default`, or a family without `ld`) of the `cg` build, whose loads are all `.cg`
    (`ld:ldg|ca|cs` and `restrict`'s read-only path still keep theirs: measured alike in both
    builds)."""
    ld = str(row.get("ld", "default"))
    plain = ld in ("default", "None", "nan", "<NA>")
    return ld in L1_BYPASS or plain and row.get("flavor") == "cg"


def _requests_past_l1(row) -> float | None:
    """The warp loads of one round past the L1 (`_loads_past_l1`): a stencil's window of
    2r + 1 words (`reuse/stencil/r:R`, the radius-2 windows of `cache_op/` and `readonly/`),
    a copy's one; None for other patterns."""
    if row["variant"] == "stencil":
        return 2 * _number(row, "r", 2) + 1
    return CACHE_OP_REQUESTS.get(str(row["variant"])) if row["family"] == "cache_op" else None


def _number(row, key: str, default=None):
    if key not in row.index:
        return default
    value = pd.to_numeric(row[key], errors="coerce")
    return default if pd.isna(value) else float(value)


def _counter(row, key: str):
    value = row.get(key)
    return None if value is None or pd.isna(value) else float(value)


def shape_of(row) -> Shape | None:
    """The shape of one medians row, or None where the model has no shape for its kernel."""
    family = row["family"]
    dram = _counter(row, "model_dram_bytes")
    efficiency = _counter(row, "model_efficiency")
    sectors = _counter(row, "model_ld_sectors_per_req")
    known = dram is not None and efficiency is not None and math.isfinite(dram) and dram > 0
    if family in ("read", "write", "copy") and known:
        word = _word(row)
        ilp = _number(row, "ilp", 1)
        return Shape(op=family, load_bytes_per_thread=ilp * word, grid=str(row["grid"]),
                     dram_bytes=dram, efficiency=efficiency, ld_sectors_per_req=sectors,
                     word_bytes=word, instructions=_counter(row, "model_warp_instructions"),
                     spread_loads=True)
    if family == "inflight" and row["variant"] in ("read", "copy", "read_async", "write"):
        return _inflight(row)
    if family == "bulk" and row["variant"] in ("read", "write", "copy"):
        return _bulk(row)
    if family == "reduce":
        return _reduce(row)
    if family == "texture" and row.get("path") in model_texture.ARRAY_PATHS:
        # no traffic counters: the array's layout
        return model_texture.array_shape(row, _counter(row, "model_warp_instructions"))
    if not known:
        return None
    if family == "readonly" and row["variant"] == "gather":
        # its window stays in the L2, which reads each line from DRAM once: the bytes used,
        # streaming; every lane's load alone in its half line of the L2
        return Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram * efficiency,
                     efficiency=1.0, ld_sectors_per_req=sectors, store_bytes_per_thread=4.0,
                     lone_loads=True, l1_reuse=row.get("flavor") != "cg")
    if family == "texture":
        return model_texture.plain_shape(row, dram, efficiency, sectors,
                                         _counter(row, "model_warp_instructions"))
    if family == "transpose" and row.get("op") in model_tiles.EXCHANGES:  # 32 x 32 threads
        return model_tiles.rung_shape(row, dram, efficiency)
    if family in COPY_FAMILIES:
        word = _word(row)
        ilp = _number(row, "ilp", 1)
        if family in STRUCT_FAMILIES:
            word, ilp = _struct_loads(row)
        if family == "reuse" and row["variant"] == "aos":  # one structure's words, 4 B each
            word, ilp = 4.0, _number(row, "bytes", 4) / 4
        if family == "transpose" and row.get("op") in TILED_RUNGS:
            # 32 x 8 threads move a 32 x 32 tile: 4 loads each, of the width the traffic model
            # counts per lane (pairs: two elements)
            word, ilp = float(sectors or word), 4
        read_step, write_step = _steps(row, word)
        # lanes 64 B apart or more whose lines no other warp of the block reads (a 2-D walk's
        # neighbouring warps read the neighbouring columns of the same lines)
        lone = family in ("stride", "gather") and (read_step or 0) >= HALF_LINE
        # kernels that combine their loads into one 4-B word per thread (kernels/aos.cuh,
        # kernels/reuse.cuh): their bytes read are distinct, their stores 4 B
        store = 4.0 if family in ONE_WORD_STORES else None
        rounds = 1.0
        if family == "aos_staged":
            # its SASS (sm_90, nvcc 13.0) stores each word to shared memory before it loads the
            # next, in the same register: one load in flight, the last two together
            rounds = max(1.0, ilp - 1)
            ilp, store = ilp / rounds, 4.0 / rounds
        extra = 0.0 if write_step is not None else model_stores.extra_share(
            _counter(row, "model_st_sectors_per_req"), 4.0 if family in ONE_WORD_STORES else word)
        bypass = _loads_past_l1(row)
        requests = _requests_past_l1(row) if bypass else None
        # a thread's loads each in its own line: a vector's a block apart, a tile's 8 rows apart
        spread = family == "vector" or (family == "transpose" and row.get("op") in TILED_RUNGS)
        return Shape(op="copy", load_bytes_per_thread=ilp * word, grid="full", dram_bytes=dram,
                     efficiency=efficiency * _shared_words(row), ld_sectors_per_req=sectors,
                     word_bytes=word, transposed_tiles=model_tiles.moves_tiles(row), store_extra=extra,
                     active=_active_lanes(row),
                     requests=requests,
                     spread_loads=spread, rows_apart=_rows_apart(row),
                     read_step=read_step, write_step=write_step, store_bytes_per_thread=store, lone_loads=lone,
                     l1_reuse=row.get("flavor") != "cg" and not bypass,
                     counted=_counted_share(row),
                     rounds=rounds, lines_per_request=_lines_per_request(row, word, read_step),
                     instructions=_counter(row, "model_warp_instructions"), index_share=index_share(family))
    if family == "managed" and row["variant"] == "read":  # float4, 4 per thread (managed.cu)
        return Shape(op="read", load_bytes_per_thread=16 * 4, grid="full", dram_bytes=dram,
                     efficiency=efficiency, ld_sectors_per_req=sectors, word_bytes=16)
    return None


# The reduction ladder's loads (kernels/reduce.cuh, include/gmb/reduce_plan.hpp): (bytes of one
# load, loads in flight per thread, grid). Rungs 0-2 load one element per thread, 3-5 two (the
# first add), on a block per tile; 6 and 7 two per round of a resident grid, 8 two 16-B
# vectors, 9 four; CUB (cub/device/device_reduce.cuh) 16 elements per thread in 16-B vectors.
# The tree in shared memory after the loads of rungs 0-5 holds the block (model_trees).
REDUCE_LOADS = {"interleaved_divergent": (4, 1, "full"), "interleaved_bank": (4, 1, "full"),
                "sequential": (4, 1, "full"), "first_add": (4, 2, "full"),
                "unroll_last_warp": (4, 2, "full"), "unroll_complete": (4, 2, "full"),
                "many_per_thread": (4, 2, "persistent"), "shuffle": (4, 2, "persistent"),
                "vector": (16, 2, "persistent"), "one_pass": (16, 4, "persistent"),
                "cub": (16, 4, "persistent")}


def _reduce(row) -> Shape | None:
    loads = REDUCE_LOADS.get(str(row.get("op")))
    if loads is None:
        return None
    word, ilp, grid = loads
    # No traffic-model counters: every element read once, coalesced. A block per tile sums
    # its partials in a tree in shared memory before it retires.
    return Shape(op="read", load_bytes_per_thread=word * ilp, grid=grid, dram_bytes=1.0,
                 efficiency=1.0, ld_sectors_per_req=word, word_bytes=word,
                 tree=str(row.get("op")) if grid == "full" else None)


def _lines_per_request(row, word: float, read_step: float | None) -> float:
    """128-B lines one warp load touches: its 32 lanes `step` bytes apart (a structure's size
    for `reuse/aos`, 32 lines for a transposed tile's lanes, `warp/permute_across`)."""
    step = read_step
    if row["family"] == "reuse" and row["variant"] == "aos":
        step = _number(row, "bytes", 4)
    if row["family"] == "warp" and row["variant"] == "permute_across":
        step = math.inf
    if step is None or step < word:
        step = word
    return 32.0 if not math.isfinite(step) else min(32.0, max(1.0, 32 * step / 128))


def _rows_apart(row) -> bool:
    """Whether a block's warps load rows far apart: the 32 x 8 blocks of the row-major matrix
    copy (kernels/matrix.cuh) and of the transpose ladder's tiles."""
    if row["family"] == "matrix":
        return row["variant"] == "rows"
    return row["family"] == "transpose" and row.get("op") in TILED_RUNGS


def _active_lanes(row) -> float:
    """The share of a 2-D walk's threads that load: a row of `w` elements takes whole 32-thread
    warps along it (kernels/matrix.cuh), the last one in part."""
    if row["family"] != "matrix" or row["variant"] != "rows":
        return 1.0
    width = _number(row, "w", 0)
    return width / (32 * math.ceil(width / 32)) if width > 0 else 1.0


def _counted_share(row) -> float:
    """The bytes an AoS kernel's GB/s counts per byte its lanes load and store: a padded
    structure's loads bring its padding too (`a12`: 16 B for 12 B of fields, kernels/aos.cuh),
    which the traffic model counts as asked for and the benchmark does not; 1 elsewhere."""
    if row["family"] not in ("aos", "aos_staged") or row.get("fields") != "all":
        return 1.0
    size = float(element_bytes(str(row.get("type"))) or 4)
    fields = 4.0 * FIELDS.get(str(row.get("type")), size / 4)
    return (fields + 4.0) / (size + 4.0)  # the fields read and the 4-B word stored


def _shared_words(row) -> float:
    """The bytes the GB/s counts per distinct byte (the traffic model's useful bytes), as `gmb
    pattern`'s efficiency: `warp/broadcast`'s 32 lanes read one word, write 32, count 64."""
    return 64 / 33 if row["family"] == "warp" and row["variant"] == "broadcast" else 1.0


def _struct_loads(row) -> tuple[float, float]:
    """(bytes of one load, loads per thread) of the AoS and SoA kernels (kernels/aos.cuh): one
    field is one 4-B load; all fields of a structure are its size in loads of its alignment
    (p12: three 4-B loads), all fields of an SoA one 4-B load per field array, and the staged
    AoS loads a structure's words, 4 B each, into shared memory."""
    size = float(element_bytes(str(row.get("type"))) or 4)
    fields = FIELDS.get(str(row.get("type")), size / 4)
    if row.get("fields") == "one":
        return 4.0, 1.0
    if row["family"] == "soa":
        return 4.0, fields
    if row["family"] == "aos_staged":
        return 4.0, size / 4
    width = min(size, 16.0) if str(row.get("type")) != "p12" else 4.0
    return width, size / width


def _steps(row, word: float) -> tuple[float | None, float | None]:
    """Bytes between neighbouring lanes' loads and stores where they do not stream."""
    family, variant = row["family"], str(row["variant"])
    if family == "stride":
        step = _number(row, "s", 1) * word
        op = row.get("op")
        return (step if op in ("read", "both") else None,
                step if op in ("write", "both") else None)
    if family == "gather":
        return math.inf, None
    if family == "scatter":
        return None, math.inf
    if family == "aos" and row.get("fields") == "one":  # one field per structure
        return float(element_bytes(str(row.get("type"))) or 4), None
    if family == "matrix" and variant == "cols":
        step = (_number(row, "w", 0) + _number(row, "pad", 0)) * 4
        return step, step
    if family == "transpose":  # the rung is the name's op: transpose/f32/naive_rows/n:N
        step = _number(row, "n", 0) * word
        if row.get("op") == "naive_rows":
            return None, step
        if row.get("op") == "naive_cols":
            return step, None
    return None, None


def _word(row) -> float:
    """Bytes of one load: the element type's (`w<B>`: B bytes; structs: their size), else 4."""
    return float(element_bytes(str(row.get("type"))) or 4)


def _inflight(row) -> Shape | None:
    block = _number(row, "block")
    bpsm = _number(row, "bpsm")
    w = _number(row, "w")
    ilp = _number(row, "ilp", 1)
    if None in (block, bpsm, w):
        return None
    # No traffic-model counters: its tiles, all useful; cp.async keeps the loads' bytes in flight.
    staged = row["variant"] == "read_async"
    return Shape(op="read" if staged else str(row["variant"]), load_bytes_per_thread=ilp * w,
                 grid=str(row["grid"]), dram_bytes=1.0, efficiency=1.0,
                 threads_per_block=int(block), ld_sectors_per_req=w, word_bytes=w,
                 resident_threads=int(block * bpsm), staged=staged)


def _bulk(row) -> Shape | None:
    """Bulk copies (benchmarks/bulk.cu): one thread of each block starts them, so an SM keeps
    bytes x stages x bpsm in flight (a copy one stage fewer: a stage is refilled once the copy
    out of it has read it); whole lines, all useful. Little's law on the curve of the same mix,
    with no wait per line (the copy unit asks for all of a copy's lines at once), and each
    block turning its chunks around one at a time (`Params.bulk_chunk_ns`)."""
    size, stages, bpsm = (_number(row, key) for key in ("bytes", "stages", "bpsm"))
    if None in (size, stages, bpsm):
        return None
    op = str(row["variant"])
    warps = _number(row, "warps", 1)  # reads: the warps that check each chunk
    chunks = max(1.0, stages - 1) if op == "copy" else stages
    return Shape(op=op, load_bytes_per_thread=size * chunks * bpsm, grid="persistent",
                 dram_bytes=1.0, efficiency=1.0, threads_per_block=int(32 * warps),
                 ld_sectors_per_req=4.0, word_bytes=size * chunks * bpsm, resident_threads=1,
                 chunks=chunks, checked_bytes=size / warps if op == "read" else 0.0,
                 filled_bytes=size if op == "write" else 0.0)
