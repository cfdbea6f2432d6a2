"""The texture family (`texture/`, kernels/texture.cuh) as the prediction model sees it: its
plain loads and stores as the index maps' traffic counts them (`plain_shape`), and its CUDA
array's fetches and surface writes, which have no traffic counters, by the array's layout
(`array_shape`).

A CUDA array is block-linear: 64-B x 8-row blocks of 512 B (GOBs), stacked down the array,
inside which a 32-B sector holds 16 B of two rows and a 128-B line 32 B of four rows (the
GOB's address bits: x[3:0], y[0], x[4], y[2:1], x[5]; the Tegra X1 TRM's block-linear
layout). So a warp's 32 texels down a column, one texel wide, touch 16 sectors in 8 lines (4
GOBs); a warp's 128 B along a row, 8 sectors in 4 lines (2 GOBs). The neighbouring columns
and rows that share those sectors are read by the block's other warps and the blocks beside
it: the array's DRAM bytes are the texels' own. A surface write by rows writes whole rows:
the plain write's blocks and bytes (docs/model.md, "The texture paths").
"""

from gmbtools.analysis.kernel_shape import Shape

TEXTURE_WIDTH = 4096  # the texture family's matrix, in f32 elements (kernels/texture.cuh)
ARRAY_PATHS = ("array", "surface")
# A warp request's sectors and lines in the block-linear array: down a column, along a row.
COLUMN = (16.0, 8.0)
ROW = (8.0, 4.0)


def plain_shape(row, dram: float, efficiency: float, sectors,
                instructions: float | None) -> Shape | None:
    """The texture family's plain loads (`path:global`) of a 4096-wide f32 matrix
    (kernels/texture.cuh), one word stored per thread: by columns, lanes a row (16 KiB) apart,
    the warps of a 32 x 8 block reading the neighbouring columns of the same lines, those of a
    256 x 1 block going down one column (each lane alone in its line); or a 5-point stencil in
    row order, its neighbours' loads served by the L1 as `reuse/stencil`'s; and its plain
    stores in row order, one word per thread on 256-thread blocks: `write/f32/ilp:1/grid:full`'s
    kernel (the CUDA array's paths: `array_shape`)."""
    if row.get("path") != "global":
        return None
    op, walk = (str(row["variant"]).split("/", 1) + [""])[:2]
    if op == "write" and walk == "rows":
        return Shape(op="write", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram,
                     efficiency=efficiency, ld_sectors_per_req=sectors, word_bytes=4.0,
                     instructions=instructions, spread_loads=True)
    if op != "read":
        return None
    if walk == "cols":
        return Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram,
                     efficiency=efficiency, ld_sectors_per_req=sectors,
                     read_step=TEXTURE_WIDTH * 4.0, lone_loads=row.get("block") == "256x1",
                     lines_per_request=32.0, instructions=instructions)
    if walk == "stencil":
        return Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=dram,
                     efficiency=efficiency, ld_sectors_per_req=sectors,
                     store_bytes_per_thread=4.0, lines_per_request=1.0,
                     instructions=instructions)
    return None


def array_shape(row, instructions: float | None) -> Shape | None:
    """The CUDA array's paths: fetches by columns and the stencil's (row order), one word
    stored per thread, as the plain loads' copy with the array's sectors and lines per
    request; the surface write by rows as the plain write. Every byte fetched is used (by the
    block's warps or the blocks beside them) and the bounds are rates: one DRAM byte per byte
    counted stands for the total."""
    op, walk = (str(row["variant"]).split("/", 1) + [""])[:2]
    if op == "write" and walk == "rows" and row.get("path") == "surface":
        return Shape(op="write", load_bytes_per_thread=4.0, grid="full", dram_bytes=1.0,
                     efficiency=1.0, ld_sectors_per_req=4.0, word_bytes=4.0,
                     instructions=instructions, spread_loads=True)
    if op != "read" or row.get("path") != "array" or walk.split("/")[0] not in ("cols", "stencil"):
        return None
    sectors, lines = COLUMN if walk.startswith("cols") else ROW
    return Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=1.0,
                 efficiency=1.0, ld_sectors_per_req=sectors, store_bytes_per_thread=4.0,
                 lines_per_request=lines, lines_per_load=lines, instructions=instructions)
