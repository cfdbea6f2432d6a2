#pragma once
// The reduction ladder's plan (kernels/reduce.cuh): the rungs of Mark Harris's "Optimizing
// Parallel Reduction in CUDA" (0-6), then warp shuffles, 16-B loads and a one-pass grid
// reduction; how many blocks each pass launches and where its partial sums go. The inputs are
// small integers (-3..3, from a hash of the index), so every partial sum stays far below 2^24
// and a float sum is exact in any order: f32 and i32 results are checked for equality with
// the host's sum.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "gmb/hash64.hpp"
#include "gmb/host_device.hpp"

namespace gmb {

enum class reduce_rung : int {
  kInterleavedDivergent = 0,  // reduce0: tid % (2s) == 0 adds: divergent warps
  kInterleavedBank,           // reduce1: index 2*s*tid: no divergence, bank conflicts
  kSequential,                // reduce2: halves from the top: no conflicts, idle half
  kFirstAdd,                  // reduce3: two elements added during the load
  kUnrollLastWarp,            // reduce4: the last 32 lanes without __syncthreads
  kUnrollComplete,            // reduce5: the block size known at compile time, no loop
  kManyPerThread,             // reduce6: a resident grid, each thread sums many elements
  kShuffle,                   // warp shuffles instead of shared memory
  kVector,                    // 16-B loads, two in flight, a contiguous share per block
  kOnePass,                   // resident blocks over tiles, their loads all in flight; the last
                              // block to finish sums the partials: one launch
};
inline constexpr int kReduceRungs = 10;
inline constexpr unsigned kReduceBlock = 256;
/// Words of the output buffer: the result at 0, the one-pass ticket at 32, partials from 1024.
inline constexpr std::size_t kReduceResultWord = 0, kReduceTicketWord = 32,
                             kReducePartialsWord = 1024;
/// The one-pass rung's tile: every thread's 16-B loads, all issued before the first add (as
/// the best persistent read, `read/f32x4/ilp:4/grid:persistent`), so 256 x 4 x 16 B = 16 KiB.
/// Measured on an H200: 8 loads per thread 0.2-0.3% slower, 2 loads 0.8%; a block per tile
/// instead of the resident blocks, 10% slower (presumably each block's fence and ticket,
/// which a resident block pays once).
inline constexpr unsigned kOnePassVectors = 4;
inline constexpr std::size_t kOnePassTile = std::size_t(kReduceBlock) * kOnePassVectors * 4;

inline const char* reduce_rung_name(reduce_rung r) {
  constexpr const char* kNames[kReduceRungs] = {
      "interleaved_divergent", "interleaved_bank", "sequential", "first_add", "unroll_last_warp",
      "unroll_complete",       "many_per_thread",  "shuffle",    "vector",    "one_pass"};
  return kNames[static_cast<int>(r)];
}

/// Blocks one pass over `count` elements launches: one per 256 (rungs 0-2) or 512 (3-5)
/// elements; the resident rungs at most `resident_blocks`, fewer where the count is small.
inline std::size_t reduce_blocks(reduce_rung r, std::size_t count, std::size_t resident_blocks) {
  const int i = static_cast<int>(r);
  const std::size_t per_block = i <= 2 ? kReduceBlock : 2 * kReduceBlock;
  const std::size_t blocks = (count + per_block - 1) / per_block;
  return i <= 5 ? blocks : std::min(blocks, resident_blocks);
}

/// One pass: `count` elements at word `from` (or the input, from == npos) summed by `blocks`
/// blocks into word `to` onwards (kReduceResultWord when blocks == 1).
struct reduce_pass {
  std::size_t count, from, blocks, to;
};
inline constexpr std::size_t kReduceInput = ~std::size_t(0);

/// The passes that take `n` elements to one sum (one pass for the one-pass rung).
inline std::vector<reduce_pass> reduce_passes(reduce_rung r, std::size_t n,
                                              std::size_t resident_blocks) {
  std::vector<reduce_pass> passes;
  std::size_t count = n, from = kReduceInput, next = kReducePartialsWord;
  while (true) {
    const std::size_t tile_vectors = kOnePassTile / 4;  // a block per tile of 16-B vectors
    const std::size_t blocks =
        r == reduce_rung::kOnePass
            ? std::clamp<std::size_t>((count / 4 + tile_vectors - 1) / tile_vectors, 1,
                                      resident_blocks)
            : reduce_blocks(r, count, resident_blocks);
    const bool last = blocks == 1 || r == reduce_rung::kOnePass;
    passes.push_back({count, from, blocks, last ? kReduceResultWord : next});
    if (last) return passes;
    from = next;
    count = blocks;
    next += (blocks + 1023) / 1024 * 1024;  // keeps every level 16-B aligned for rung 8
  }
}

/// Element w of the input: -3..3 from a hash of w and the seed.
GMB_HD int reduce_value(std::size_t w, std::uint32_t seed) {
  const std::uint64_t x = mix64(std::uint64_t(w) ^ (std::uint64_t(seed) << 32));
  return static_cast<int>(x % 7) - 3;
}

/// The input's words as i32 or as f32.
struct reduce_words {
  std::uint32_t seed;
  bool as_float;
  GMB_HD std::uint32_t operator()(std::size_t w) const {
    const int v = reduce_value(w, seed);
    if (!as_float) return static_cast<std::uint32_t>(v);
    const float f = static_cast<float>(v);
    std::uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
  }
};

/// The exact sum of the first n elements, on every host core.
inline long long reduce_expected_sum(std::size_t n, std::uint32_t seed) {
  const unsigned workers = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<long long> sums(workers, 0);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < workers; ++t) {
    threads.emplace_back([&, t] {
      long long s = 0;
      for (std::size_t w = n * t / workers; w < n * (t + 1) / workers; ++w) {
        s += reduce_value(w, seed);
      }
      sums[t] = s;
    });
  }
  for (auto& th : threads) th.join();
  long long total = 0;
  for (long long s : sums) total += s;
  return total;
}

}  // namespace gmb
