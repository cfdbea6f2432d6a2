#pragma once
// The transpose ladder's index math, one copy shared by the kernels (kernels/transpose.cuh),
// the traffic model and the host tests: for every rung, the block shape, the blocks, the
// elements each thread handles (slots), and for (block, thread, slot) the input element the
// thread loads from global memory and the input element whose transposed place it stores.
// Direct rungs store what they load; tiled rungs pass the tile through shared memory, so a
// thread stores another thread's element. The input is rows x cols, row by row; the output
// cols x rows. Elements outside the matrix (edge tiles of sizes that are not multiples of the
// tile) are invalid and not touched. The top rung moves pairs: a thread loads elements (r, c)
// and (r, c+1) as one word and stores the places of (r, c) and (r+1, c) as one; `loaded` and
// `stored` name the first of each pair.
#include <cstddef>

#include "gmb/host_device.hpp"

namespace gmb {

enum class transpose_rung : int {
  kCopy = 0,      // the same bytes as a plain 2-D copy (32x8 threads per 32x32 tile): the roof
  kThreadPerCol,  // one thread per input column, looping down it: too few threads
  kNaiveRows,     // one thread per element, warps along input rows: strided writes
  kNaiveCols,     // one thread per element, warps down input columns: strided reads
  kWarpPerCol,    // one 32-thread block per input column, lanes down it: strided reads
  kTile,          // 32x32 tile in shared memory, 32x32 threads: both sides coalesced
  kTilePadded,    // the tile padded to 33 columns: no shared-memory bank conflicts
  kTileRows8,     // 32x8 threads per padded tile, four elements each
  kTileDiagonal,  // kTileRows8 with tiles handed out along diagonals
  kTileAsync,     // kTileRows8 with the tile staged by cp.async
  kTileTma,       // a 32x32 tile copied in and out by the TMA (cp.async.bulk.tensor), sm_90+
  kBest,          // 64x64 padded tile, 32x8 threads moving pairs: 8-B (f32) or 16-B words
};
inline constexpr int kTransposeRungs = 12;

inline const char* transpose_rung_name(transpose_rung r) {
  constexpr const char* kNames[kTransposeRungs] = {
      "copy",        "thread_per_col", "naive_rows",    "naive_cols", "warp_per_col", "tile",
      "tile_padded", "tile_rows8",     "tile_diagonal", "tile_async", "tile_tma",     "best"};
  return kNames[static_cast<int>(r)];
}

inline constexpr unsigned kTransposeTile = 32;

struct matrix_element {
  std::size_t r, c;
  bool valid;
};

struct transpose_plan {
  transpose_rung rung;
  std::size_t rows, cols;  // of the input

  GMB_HD constexpr bool tiled() const {
    return rung >= transpose_rung::kTile || rung == transpose_rung::kCopy;
  }
  GMB_HD constexpr unsigned block_x() const {
    return rung == transpose_rung::kThreadPerCol ? 256 : 32;
  }
  GMB_HD constexpr unsigned block_y() const {
    switch (rung) {
      case transpose_rung::kThreadPerCol:
      case transpose_rung::kWarpPerCol:
        return 1;
      case transpose_rung::kTile:
      case transpose_rung::kTilePadded:
        return kTransposeTile;
      default:
        return 8;  // naive rungs: 32x8 elements; tiled: 32x8 threads per 32x32 tile
    }
  }
  GMB_HD constexpr unsigned threads_per_block() const { return block_x() * block_y(); }
  /// Elements one access moves along a row (tiled rungs): 2 for the top rung's pairs.
  GMB_HD constexpr unsigned pair_width() const { return rung == transpose_rung::kBest ? 2 : 1; }
  /// The side of a tile: 32 lanes x pair_width elements.
  GMB_HD constexpr unsigned tile_side() const { return kTransposeTile * pair_width(); }
  /// Rows of a tile one thread handles (tiled rungs).
  GMB_HD constexpr unsigned rows_per_thread() const { return tile_side() / block_y(); }
  GMB_HD std::size_t tiles_x() const { return (cols + tile_side() - 1) / tile_side(); }
  GMB_HD std::size_t tiles_y() const { return (rows + tile_side() - 1) / tile_side(); }

  GMB_HD std::size_t blocks() const {
    switch (rung) {
      case transpose_rung::kThreadPerCol:
        return (cols + block_x() - 1) / block_x();
      case transpose_rung::kWarpPerCol:
        return cols;
      case transpose_rung::kNaiveRows:
        return ((cols + 31) / 32) * ((rows + 7) / 8);
      case transpose_rung::kNaiveCols:
        return ((rows + 31) / 32) * ((cols + 7) / 8);
      default:
        return tiles_x() * tiles_y();
    }
  }
  GMB_HD std::size_t slots() const {
    switch (rung) {
      case transpose_rung::kThreadPerCol:
        return rows;
      case transpose_rung::kWarpPerCol:
        return (rows + 31) / 32;
      case transpose_rung::kNaiveRows:
      case transpose_rung::kNaiveCols:
        return 1;
      default:
        return rows_per_thread();
    }
  }

  /// Where a tiled block works: its tile (gx, gy), in row order, or along diagonals (gy = b mod
  /// tiles down, gx = (b / tiles down + gy) mod tiles across: a bijection for any grid, so
  /// partition camping, if any, would show).
  GMB_HD void tile_of(std::size_t block, std::size_t& gx, std::size_t& gy) const {
    // 32-bit division: grids have fewer than 2^32 blocks, and 64-bit division is a long
    // instruction sequence on the GPU.
    const auto b = static_cast<unsigned>(block);
    const auto across = static_cast<unsigned>(tiles_x()), down = static_cast<unsigned>(tiles_y());
    if (rung == transpose_rung::kTileDiagonal) {
      gy = b % down;
      gx = (b / down + gy) % across;
    } else {
      gx = b % across;
      gy = b / across;
    }
  }

  /// The input element thread (x, y) of `block` loads in `slot`.
  GMB_HD matrix_element loaded(std::size_t block, unsigned x, unsigned y, std::size_t slot) const {
    switch (rung) {
      case transpose_rung::kThreadPerCol:
        return element(slot, block * block_x() + x);
      case transpose_rung::kWarpPerCol:
        return element(slot * 32 + x, block);
      case transpose_rung::kNaiveRows: {
        const std::size_t across = (cols + 31) / 32;
        return element(block / across * 8 + y, block % across * 32 + x);
      }
      case transpose_rung::kNaiveCols: {
        const std::size_t across = (rows + 31) / 32;
        return element(block % across * 32 + x, block / across * 8 + y);
      }
      default: {
        std::size_t gx, gy;
        tile_of(block, gx, gy);
        return loaded_in_tile(gx, gy, x, y, slot);
      }
    }
  }

  /// The input element whose output place thread (x, y) of `block` writes in `slot`: for tiled
  /// rungs the transposed tile's, read back from shared memory at [x][y + ...].
  GMB_HD matrix_element stored(std::size_t block, unsigned x, unsigned y, std::size_t slot) const {
    if (!tiled() || rung == transpose_rung::kCopy) return loaded(block, x, y, slot);
    std::size_t gx, gy;
    tile_of(block, gx, gy);
    return stored_in_tile(gx, gy, x, y, slot);
  }

  /// Tiled rungs, with the tile (gx, gy) found once per thread (tile_of).
  GMB_HD matrix_element loaded_in_tile(std::size_t gx, std::size_t gy, unsigned x, unsigned y,
                                       std::size_t slot) const {
    const std::size_t in_tile = y + slot * block_y();
    return element(gy * tile_side() + in_tile, gx * tile_side() + x * pair_width());
  }
  GMB_HD matrix_element stored_in_tile(std::size_t gx, std::size_t gy, unsigned x, unsigned y,
                                       std::size_t slot) const {
    if (rung == transpose_rung::kCopy) return loaded_in_tile(gx, gy, x, y, slot);
    const std::size_t in_tile = y + slot * block_y();
    return element(gy * tile_side() + x * pair_width(), gx * tile_side() + in_tile);
  }

  GMB_HD std::size_t in_index(const matrix_element& e) const { return e.r * cols + e.c; }
  GMB_HD matrix_element element(std::size_t r, std::size_t c) const {
    return {r, c, r < rows && c < cols};
  }
  /// Where an input element lands: its transposed place (the copy rung: its own place).
  GMB_HD std::size_t out_index(const matrix_element& e) const {
    return rung == transpose_rung::kCopy ? e.r * cols + e.c : e.c * rows + e.r;
  }
};

/// The traffic model's view of one side of a rung (Map of traffic_model.hpp): global thread t,
/// slot s -> the index, in words of pair_width() elements, it loads or stores. Edge elements
/// outside the matrix are clamped to the last one, as matrix_map does.
struct transpose_side_map {
  transpose_plan plan;
  bool store;
  GMB_HD unsigned slots() const { return static_cast<unsigned>(plan.slots()); }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    const unsigned per_block = plan.threads_per_block();
    const std::size_t block = thread / per_block;
    const unsigned t = static_cast<unsigned>(thread % per_block);
    const unsigned x = t % plan.block_x(), y = t / plan.block_x();
    const matrix_element e =
        store ? plan.stored(block, x, y, slot) : plan.loaded(block, x, y, slot);
    if (!e.valid) return (plan.rows * plan.cols - 1) / plan.pair_width();
    return (store ? plan.out_index(e) : plan.in_index(e)) / plan.pair_width();
  }
};

}  // namespace gmb
