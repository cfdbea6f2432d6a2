#pragma once
// constant family: warps read a table whose lanes touch `distinct` consecutive words per load
// (1 .. 32: the constant cache serializes a warp by its distinct addresses), from a
// __constant__ table, through plain global loads and through __ldg, in a working set of ws
// bytes. Each thread folds kConstantLoads independent loads into one word it writes.
// Bytes: read 4 per lane per load (the warp-load rate times 128), write 4 per thread.
// Names: constant/read/distinct:8/ws:1024/path:constant, .../path:global, .../path:ldg.
#include <cstddef>
#include <cstdint>

#include "gmb/host_device.hpp"
#include "gmb/words.cuh"

namespace gmb {

/// Where the table lives: a __constant__ array (LDC), global memory with plain loads, or with
/// __ldg (the read-only path).
enum class constant_path { kConstant, kGlobal, kLdg };

constexpr const char* name(constant_path p) {
  switch (p) {
    case constant_path::kConstant:
      return "constant";
    case constant_path::kGlobal:
      return "global";
    case constant_path::kLdg:
      return "ldg";
  }
  return "?";
}

inline constexpr unsigned kConstantBlock = 256;
/// The whole 64-KiB bank a module may declare, as 4-B words.
inline constexpr std::uint32_t kConstantTableWords = 16384;
inline constexpr std::uint32_t kConstantLoads = 128;  // per thread
/// Consecutive loads of a warp are 256 B apart (a new line whatever the caches' line sizes);
/// warps start 37 such steps apart, so an SM's warps spread over the whole working set.
inline constexpr std::uint32_t kConstantStepWords = 64;
inline constexpr std::uint32_t kConstantWarpStepWords = 37 * kConstantStepWords;

/// An order-dependent fold of the words a thread reads (x * 3 + v): unlike xor, a word read an
/// even number of times does not cancel, and any single wrong word changes the result. Also the
/// local family's.
GMB_HD std::uint32_t fold_word(std::uint32_t x, std::uint32_t v) {
  return x * 3u + v;
}

/// Load j of thread t reads table word operator()(t, j): the warp's base (a 256-B line) plus the
/// lane's word among `distinct` consecutive ones, wrapped into the first ws_words words. So
/// every warp load touches exactly `distinct` addresses in one line. distinct and ws_words are
/// powers of two (1..32 and 32..kConstantTableWords). An index map: the checks use it too.
struct constant_walk {
  std::uint32_t distinct;
  std::uint32_t ws_words;
  GMB_HD unsigned slots() const { return kConstantLoads; }
  GMB_HD std::uint32_t word(std::size_t t, unsigned j) const {
    const std::uint32_t warp = static_cast<std::uint32_t>(t / 32);
    const std::uint32_t lane = static_cast<std::uint32_t>(t % 32);
    return (warp * kConstantWarpStepWords + j * kConstantStepWords + (lane & (distinct - 1))) &
           (ws_words - 1);
  }
  GMB_HD std::size_t operator()(std::size_t t, unsigned j) const { return word(t, j); }
};

/// What the constant kernel writes: out[t] is the fold of the table words the walk reads (the
/// table holds the input pattern's first words), the poison past n.
struct constant_words {
  word_pattern table;
  constant_walk walk;
  std::size_t n;
  GMB_HD std::uint32_t operator()(std::size_t t) const {
    if (t >= n) return kPoisonWord;
    std::uint32_t x = 0;
    for (unsigned j = 0; j < walk.slots(); ++j) x = fold_word(x, table(walk.word(t, j)));
    return x;
  }
};

}  // namespace gmb

#if defined(__CUDACC__)
#include "gmb/cache_op.cuh"

namespace gmb::built_once {

/// Each of n threads folds its kConstantLoads table words (addresses independent of the data:
/// the loads pipeline) and writes the result, coalesced. The distinct count is a run-time value,
/// so every point of the curve runs the same instructions (LDC with a per-thread register
/// index for kConstant). `Bank` reads the __constant__ table (Bank::read(i)); the table is
/// defined beside the registration (benchmarks/constant.cu), since a module has one 64-KiB bank.
template <constant_path Path, class Bank>
__global__ void __launch_bounds__(kConstantBlock)
    constant_read(const std::uint32_t* table, std::uint32_t* out, std::size_t n,
                  constant_walk walk) {
  const std::size_t t = blockIdx.x * std::size_t(kConstantBlock) + threadIdx.x;
  if (t >= n) return;
  std::uint32_t x = 0;
#pragma unroll 16
  for (unsigned j = 0; j < kConstantLoads; ++j) {
    const std::uint32_t i = walk.word(t, j);
    std::uint32_t v;
    if constexpr (Path == constant_path::kConstant) {
      v = Bank::read(i);
    } else if constexpr (Path == constant_path::kGlobal) {
      v = load<cache_op::kDefault>(table + i);
    } else {
      v = load<cache_op::kLdg>(table + i);
    }
    x = fold_word(x, v);
  }
  out[t] = x;
}

}  // namespace gmb::built_once
#endif
