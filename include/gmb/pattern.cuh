#pragma once
// Access patterns as index maps: (linear thread id, slot) -> element index. A thread issues one
// load or store per slot (its elements per thread, "ILP"). Kernels, the host traffic model and
// the tests all call these same functions.
#include <cstddef>
#include <cstdint>

#include "gmb/host_device.hpp"

namespace gmb {

/// Coalesced with Ilp elements per thread: in every slot the lanes of a warp take consecutive
/// elements (one contiguous run per warp instruction), and a block of Block threads covers
/// Block * Ilp consecutive elements.
template <unsigned Block, unsigned Ilp>
struct coalesced_map {
  GMB_HD unsigned slots() const { return Ilp; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    return thread / Block * (std::size_t(Block) * Ilp) + std::size_t(slot) * Block + thread % Block;
  }
};

/// Thread t takes element t * stride: lanes `stride` elements apart.
struct strided_map {
  GMB_HD unsigned slots() const { return 1; }
  std::size_t stride;
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const { return thread * stride; }
};

/// Thread t takes element t + offset: a coalesced run shifted off its natural alignment.
struct offset_map {
  GMB_HD unsigned slots() const { return 1; }
  std::size_t offset;
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const { return thread + offset; }
};

/// Every thread takes the same element.
struct broadcast_map {
  GMB_HD unsigned slots() const { return 1; }
  std::size_t element;
  GMB_HD std::size_t operator()(std::size_t, unsigned) const { return element; }
};

/// Structures of `stride` elements, `slots` of them loaded per thread: thread t's slot j is
/// element t * stride + j. With 4-B elements and one slot it is one field of an array of
/// structures; with the load width as the element it is a whole structure loaded in pieces.
struct aos_map {
  std::size_t stride;
  unsigned fields;
  GMB_HD unsigned slots() const { return fields; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    return thread * stride + slot;
  }
};

/// The same fields as a structure of arrays: field j of thread t is element j * n + t.
struct soa_map {
  std::size_t n;
  unsigned fields;
  GMB_HD unsigned slots() const { return fields; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    return std::size_t(slot) * n + thread;
  }
};

/// What output word u of a structure of arrays written to several outputs of n words reads:
/// output u / n xors its `fields` fields of thread u % n, the outputs' fields one after another.
struct soa_outputs_map {
  std::size_t n;
  unsigned fields;  // per output
  GMB_HD unsigned slots() const { return fields; }
  GMB_HD std::size_t operator()(std::size_t word, unsigned slot) const {
    return (word / n * fields + slot) * n + word % n;
  }
};

/// Each warp's 32 lanes read the warp's first element (one word broadcast to the warp).
struct warp_broadcast_map {
  GMB_HD unsigned slots() const { return 1; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const { return thread & ~31ull; }
};

/// Lanes permuted within their warp's 32 consecutive elements (lane -> 7 * lane + 3 mod 32):
/// the same sectors as a coalesced access, in another order.
struct lane_permute_map {
  GMB_HD unsigned slots() const { return 1; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const {
    return (thread & ~31ull) | ((7 * (thread & 31) + 3) & 31);
  }
};

/// Lanes spread over 32 segments: 32x32 tiles transposed, so lane l of warp w in a tile reads
/// element 32 * l + w. Each request touches 32 sectors; the tile's 32 warps use all of them.
struct tile_transpose_map {
  GMB_HD unsigned slots() const { return 1; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const {
    return (thread & ~1023ull) | ((thread & 31) << 5) | ((thread >> 5) & 31);
  }
};

/// Runs of `run` consecutive elements (1, 2, 4, 8, 16 or 32), one per 32-element segment: a
/// warp's lanes cover 32 / run segments, `run` elements of each, and the next 32 / run - 1 warps
/// take the rest of the same segments in turn. With 4-B elements, a request moves run * 4 B of
/// each of its 128-B lines and every byte it brings is used (tile_transpose_map is run 1, a
/// coalesced access run 32): what a link costs per line touched, apart from unused bytes.
struct run_map {
  unsigned run;
  GMB_HD unsigned slots() const { return 1; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const {
    const std::size_t segments = 32 / run;  // per warp, and warps per group
    const std::size_t warp = thread / 32, lane = thread % 32;
    const std::size_t group = warp / segments, turn = warp % segments;
    return (group * segments + lane / run) * 32 + turn * run + lane % run;
  }
};

/// Overlapping windows: thread t's slot j is element t + j * step. Taps 2r+1, step 1 is a 1-D
/// stencil of radius r (output t centred on element t + r); taps 2 re-reads the array shifted
/// by `step` elements. Neighbouring lanes and warps read the same lines: a cache can serve them.
struct window_map {
  unsigned taps;
  std::size_t step;
  GMB_HD unsigned slots() const { return taps; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    return thread + std::size_t(slot) * step;
  }
};

/// A height x width matrix stored row by row, `pitch` elements per row, traversed row-major (a
/// warp along a row) or column-major (a warp down a column) by blocks of 32 x 8 threads.
/// `element(along, across)` is the kernel's map from its 2-D thread position; the model's view,
/// operator(), numbers the threads of such a launch in order (x fastest, then the 8 warps of a
/// block, then blocks along the traversal); lanes past the matrix's edge are idle, modelled as
/// repeating the edge element (no new sectors).
struct matrix_map {
  static constexpr std::size_t kNone = ~std::size_t(0);
  static constexpr unsigned kBlockX = 32, kBlockY = 8;
  std::size_t width, height, pitch;
  bool column_major;

  GMB_HD std::size_t along_extent() const { return column_major ? height : width; }
  GMB_HD std::size_t across_extent() const { return column_major ? width : height; }
  /// Threads of the model's launch: whole blocks covering the matrix.
  GMB_HD std::size_t threads() const {
    return (along_extent() + kBlockX - 1) / kBlockX * kBlockX *
           ((across_extent() + kBlockY - 1) / kBlockY * kBlockY);
  }
  GMB_HD std::size_t element(std::size_t along, std::size_t across) const {
    const std::size_t row = column_major ? along : across, col = column_major ? across : along;
    return row < height && col < width ? row * pitch + col : kNone;
  }
  GMB_HD unsigned slots() const { return 1; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const {
    const std::size_t blocks_along = (along_extent() + kBlockX - 1) / kBlockX;
    const std::size_t block = thread / (kBlockX * kBlockY);
    std::size_t along = block % blocks_along * kBlockX + thread % kBlockX;
    std::size_t across = block / blocks_along * kBlockY + thread / kBlockX % kBlockY;
    if (along >= along_extent()) along = along_extent() - 1;
    if (across >= across_extent()) across = across_extent() - 1;
    return element(along, across);
  }
};

/// Elements a buffer must hold for `threads` threads under a map whose largest index is the last
/// thread's last slot (offsets, strides, windows, structures) or below `threads` (permutations,
/// broadcasts, windowed gathers). Host side: sizes buffers and thread counts.
template <class Map>
std::size_t elements_spanned(const Map& map, std::size_t threads) {
  if (threads == 0) return 0;
  const std::size_t last = map(threads - 1, map.slots() - 1) + 1;
  return last > threads ? last : threads;
}

/// A fixed pseudo-random permutation of [0, 2^bits) (bits 2..32): odd multiplications and
/// xor-shifts, each a bijection modulo 2^bits; `seed` picks one. As a generator it fills index
/// tables (word w holds the image of w).
struct hash_permutation {
  unsigned bits;
  std::uint32_t seed;
  GMB_HD std::uint32_t operator()(std::size_t w) const {
    const std::uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
    const unsigned shift = bits / 2 + 1;
    std::uint32_t x = (static_cast<std::uint32_t>(w) ^ seed) & mask;
    x = (x * 0x9E3779B1u) & mask;
    x ^= x >> shift;
    x = (x * 0x85EBCA6Bu) & mask;
    x ^= x >> shift;
    return x;
  }
};

/// A set of 2^bits lines `spacing` elements apart, each thread reading the first word of line
/// perm(thread mod 2^bits): past the first 2^bits threads every load finds its line in the L2,
/// yet the lines lie on as many pages as the span holds, so each load needs an address
/// translation of its own (model/translation: the translation's rate, not DRAM's).
struct spread_lines_map {
  hash_permutation perm;  // of [0, 2^bits)
  std::size_t spacing;    // elements from one line to the next
  GMB_HD unsigned slots() const { return 1; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const {
    return std::size_t(perm(thread & ((std::size_t(1) << perm.bits) - 1))) * spacing;
  }
};

/// Its lines span 2^bits x spacing elements, whichever thread reads the last (not thread order).
inline std::size_t elements_spanned(const spread_lines_map& map, std::size_t threads) {
  const std::size_t last = ((std::size_t(1) << map.perm.bits) - 1) * map.spacing + 1;
  return threads > last ? threads : last;
}

/// A gather confined to windows of 2^bits elements: each window's threads read its elements in
/// a fixed pseudo-random order. Warps scatter their requests over the window's lines, and the
/// other warps reading the same window use the rest of those lines: re-use by nearby warps.
struct window_permute_map {
  hash_permutation perm;  // of [0, 2^bits)
  GMB_HD unsigned slots() const { return 1; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const {
    const std::size_t window = (std::size_t(1) << perm.bits) - 1;
    return (thread & ~window) | perm(thread & window);
  }
};

/// Indices read from a table in device memory (a gather or scatter); on the host, where the
/// model and the checks run, the same permutation is computed instead of read.
struct table_map {
  const std::uint32_t* table;  // device memory, filled from `perm`
  hash_permutation perm;
  GMB_HD unsigned slots() const { return 1; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const {
#if defined(__CUDA_ARCH__)
    return table[thread];
#else
    return perm(thread);
#endif
  }
};

}  // namespace gmb
