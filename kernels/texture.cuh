#pragma once
// texture family: a width x height f32 matrix read through texture objects (tex1Dfetch over
// linear memory, tex2D over pitched memory and over a CUDA array) beside plain and __ldg loads of
// the same walks, and written through a surface beside plain stores. Bytes: read 4 per element
// (each element once, however many taps read it), write 4 per output word.
// Names: texture/read/rows/path:array, texture/read/cols/block:256x1/path:global,
// texture/read/gather/tile:32/path:tex2d, texture/write/rows/path:surface.
#include <cstddef>
#include <cstdint>

#include "gmb/host_device.hpp"
#include "gmb/pattern.cuh"
#include "gmb/sizing.hpp"

namespace gmb {

/// Where a texture-family kernel reads or writes the matrix: plain loads (kGlobal), __ldg,
/// tex1Dfetch on the linear array, tex2D on the same memory as a pitched 2-D texture, tex2D on a
/// CUDA array (block-linear layout), surf2Dwrite on a CUDA array.
enum class texture_path { kGlobal, kLdg, kTex1d, kTex2d, kArray, kSurface };

constexpr const char* name(texture_path p) {
  switch (p) {
    case texture_path::kGlobal:
      return "global";
    case texture_path::kLdg:
      return "ldg";
    case texture_path::kTex1d:
      return "tex1d";
    case texture_path::kTex2d:
      return "tex2d";
    case texture_path::kArray:
      return "array";
    case texture_path::kSurface:
      return "surface";
  }
  return "?";
}

inline constexpr unsigned kTextureBlock = 256;
inline constexpr unsigned kTextureWarpsPerBlock = kTextureBlock / 32;
/// Matrix width: 2^12 elements (16-KiB rows); heights are multiples of kTextureRowMultiple so
/// that every walk below tiles the matrix exactly. Walks compute in 32-bit words with shifts
/// (widths, tiles and block shapes are powers of two; at most 2^28 elements): the fetch, not
/// index arithmetic, should set the pace.
inline constexpr std::uint32_t kTextureWidthLog2 = 12;
inline constexpr std::uint32_t kTextureWidth = 1u << kTextureWidthLog2;
inline constexpr std::uint32_t kTextureRowMultiple = 256;

struct matrix_cell {
  std::uint32_t row, col;
};

/// A 2^width_log2 x height matrix stored row by row without padding: element (row, col) is word
/// row * width + col of the input pattern in every path (the CUDA array holds the same words).
struct matrix_shape {
  std::uint32_t width_log2, height;
  GMB_HD std::uint32_t width() const { return 1u << width_log2; }
  GMB_HD std::size_t elements() const { return std::size_t(height) << width_log2; }
  GMB_HD std::size_t index(matrix_cell c) const {
    return (std::size_t(c.row) << width_log2) + c.col;
  }
};

/// The matrix the texture family uses: kTextureWidth wide, 8 L2s of rows (DRAM-sized like the
/// other families, timed as they are: sizing.hpp; rounded up to whole multiples of
/// kTextureRowMultiple rows), or fewer: as many as the environment's arrays hold, at most
/// `max_rows` (the texture and surface height limits) and `max_elements` (the 1-D linear
/// texture limit; at most 2^28 elements), rounded down. 0 rows when not even 256 fit.
inline matrix_shape plan_texture_matrix(std::size_t array_bytes, std::size_t l2_bytes,
                                        std::size_t max_rows, std::size_t max_elements) {
  constexpr std::size_t kRowBytes = std::size_t(kTextureWidth) * sizeof(float);
  constexpr std::size_t kMostElements = std::size_t(1) << 28;
  if (max_elements > kMostElements) max_elements = kMostElements;
  std::size_t rows =
      round_up(round_up(kL2Multiple * l2_bytes, kRowBytes) / kRowBytes, kTextureRowMultiple);
  if (rows > array_bytes / kRowBytes) rows = array_bytes / kRowBytes;
  if (rows > max_rows) rows = max_rows;
  if (rows > max_elements / kTextureWidth) rows = max_elements / kTextureWidth;
  rows = rows / kTextureRowMultiple * kTextureRowMultiple;
  return {kTextureWidthLog2, static_cast<std::uint32_t>(rows)};
}

/// Thread t of a launch of elements() threads in blocks of kTextureBlock: each walk says which
/// cell(s) it reads (at) and, as an index map (operator()), which input words: the traffic
/// model and the checks (mapped_xor_words) use the same functions as the kernels.

/// Rows: thread t takes element t (a warp takes 32 neighbours of a row: coalesced).
struct row_walk {
  static constexpr unsigned kSlots = 1;
  matrix_shape m;
  GMB_HD unsigned slots() const { return kSlots; }
  GMB_HD matrix_cell at(std::size_t thread, unsigned) const {
    const std::uint32_t t = static_cast<std::uint32_t>(thread);
    return {t >> m.width_log2, t & (m.width() - 1)};
  }
  GMB_HD std::size_t operator()(std::size_t t, unsigned j) const { return m.index(at(t, j)); }
};

/// Columns: each warp reads 32 consecutive rows of one column. A block's 8 warps take
/// 2^cols_log2 adjacent columns (8: a 32 x 8 tile, matrix/cols' blocks, so the block itself
/// uses every word of the sectors it touches; 1: the block goes 256 rows down one column, and
/// the other words of its sectors are read by 7 other blocks). Consecutive blocks take the
/// next columns of the same rows.
struct column_walk {
  static constexpr unsigned kSlots = 1;
  matrix_shape m;
  std::uint32_t cols_log2;  // 0 .. 3
  GMB_HD unsigned slots() const { return kSlots; }
  GMB_HD std::uint32_t block_cols() const { return 1u << cols_log2; }
  GMB_HD std::uint32_t block_rows() const { return kTextureBlock >> cols_log2; }
  GMB_HD matrix_cell at(std::size_t thread, unsigned) const {
    const std::uint32_t t = static_cast<std::uint32_t>(thread);
    const std::uint32_t lane = t & 31, warp = t >> 5;
    const std::uint32_t block = warp / kTextureWarpsPerBlock;
    const std::uint32_t in_block = warp % kTextureWarpsPerBlock;
    const std::uint32_t across_log2 = m.width_log2 - cols_log2;  // blocks across a band
    const std::uint32_t col =
        ((block & ((1u << across_log2) - 1)) << cols_log2) + (in_block & (block_cols() - 1));
    const std::uint32_t row =
        (block >> across_log2) * block_rows() + (in_block >> cols_log2) * 32 + lane;
    return {row, col};
  }
  GMB_HD std::size_t operator()(std::size_t t, unsigned j) const { return m.index(at(t, j)); }
};

/// A 5-point stencil in row order: thread t's centre is element t, then the cells above, below,
/// left and right of it, clamped at the matrix's edges (as a clamping texture would).
struct stencil_walk {
  static constexpr unsigned kSlots = 5;
  matrix_shape m;
  GMB_HD unsigned slots() const { return kSlots; }
  GMB_HD matrix_cell at(std::size_t thread, unsigned j) const {
    const std::uint32_t t = static_cast<std::uint32_t>(thread);
    const std::uint32_t row = t >> m.width_log2, col = t & (m.width() - 1);
    switch (j) {
      case 1:
        return {row > 0 ? row - 1 : row, col};
      case 2:
        return {row + 1 < m.height ? row + 1 : row, col};
      case 3:
        return {row, col > 0 ? col - 1 : col};
      case 4:
        return {row, col + 1 < m.width() ? col + 1 : col};
      default:
        return {row, col};
    }
  }
  GMB_HD std::size_t operator()(std::size_t t, unsigned j) const { return m.index(at(t, j)); }
};

/// A gather inside squares of tile x tile cells (tile = 2^tile_log2): the square's tile^2
/// consecutive threads read its cells in a fixed pseudo-random order (perm, of 2 tile_log2
/// bits); squares are numbered row by row. A warp scatters over the square's rows; the
/// square's other warps (its own block for tile 16, four blocks for tile 32) read the rest of
/// the same sectors.
struct tile_gather_walk {
  static constexpr unsigned kSlots = 1;
  matrix_shape m;
  std::uint32_t tile_log2;
  hash_permutation perm;  // bits == 2 * tile_log2
  GMB_HD unsigned slots() const { return kSlots; }
  GMB_HD std::uint32_t tile() const { return 1u << tile_log2; }
  GMB_HD matrix_cell at(std::size_t thread, unsigned) const {
    const std::uint32_t t = static_cast<std::uint32_t>(thread);
    const std::uint32_t square = t >> (2 * tile_log2);
    const std::uint32_t p = perm(t & ((1u << (2 * tile_log2)) - 1));
    const std::uint32_t across_log2 = m.width_log2 - tile_log2;  // squares across
    return {((square >> across_log2) << tile_log2) + (p >> tile_log2),
            ((square & ((1u << across_log2) - 1)) << tile_log2) + (p & (tile() - 1))};
  }
  GMB_HD std::size_t operator()(std::size_t t, unsigned j) const { return m.index(at(t, j)); }
};

}  // namespace gmb

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "gmb/cache_op.cuh"
#include "gmb/words.cuh"

namespace gmb::built_once {

/// One fetch of cell c through the path (texture objects point-sample unnormalized coordinates:
/// the cell's centre is (col + 0.5, row + 0.5)).
template <texture_path Path>
__device__ __forceinline__ float texture_fetch(const float* in, cudaTextureObject_t tex,
                                               const matrix_shape& m, matrix_cell c) {
  if constexpr (Path == texture_path::kGlobal) {
    return load<cache_op::kDefault>(in + m.index(c));
  } else if constexpr (Path == texture_path::kLdg) {
    return load<cache_op::kLdg>(in + m.index(c));
  } else if constexpr (Path == texture_path::kTex1d) {
    return tex1Dfetch<float>(tex, static_cast<int>(m.index(c)));
  } else {
    static_assert(Path == texture_path::kTex2d || Path == texture_path::kArray, "a read path");
    return tex2D<float>(tex, c.col + 0.5f, c.row + 0.5f);
  }
}

/// Thread t (of n) fetches its walk's cells, all before the first use, and writes the xor of
/// their words to out[t] (coalesced).
template <class Walk, texture_path Path>
__global__ void __launch_bounds__(kTextureBlock)
    texture_read(const float* in, cudaTextureObject_t tex, std::uint32_t* out, std::size_t n,
                 Walk walk) {
  const std::size_t t = blockIdx.x * std::size_t(kTextureBlock) + threadIdx.x;
  if (t >= n) return;
  float v[Walk::kSlots];
#pragma unroll
  for (unsigned j = 0; j < Walk::kSlots; ++j) {
    v[j] = texture_fetch<Path>(in, tex, walk.m, walk.at(t, j));
  }
  std::uint32_t x = 0;
#pragma unroll
  for (unsigned j = 0; j < Walk::kSlots; ++j) x ^= __float_as_uint(v[j]);
  out[t] = x;
}

/// Thread t (of n) writes the pattern's word for its cell, with a plain store into the linear
/// matrix (kGlobal) or surf2Dwrite into the CUDA array (kSurface; x in bytes).
template <class Walk, texture_path Path>
__global__ void __launch_bounds__(kTextureBlock)
    texture_write(float* out, cudaSurfaceObject_t surface, std::size_t n, Walk walk,
                  word_pattern pattern) {
  const std::size_t t = blockIdx.x * std::size_t(kTextureBlock) + threadIdx.x;
  if (t >= n) return;
  const matrix_cell c = walk.at(t, 0);
  const std::size_t i = walk.m.index(c);
  const float value = __uint_as_float(pattern(i));
  if constexpr (Path == texture_path::kGlobal) {
    out[i] = value;
  } else {
    static_assert(Path == texture_path::kSurface, "a write path");
    surf2Dwrite(value, surface, static_cast<int>(c.col * sizeof(float)), static_cast<int>(c.row));
  }
}

}  // namespace gmb::built_once
#endif
