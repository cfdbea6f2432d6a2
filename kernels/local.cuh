#pragma once
// local family: per-thread arrays in local memory. (a) A thread fills an array of Size words
// from its input word, then reads kLocalReads of them at run-time indices, the same across the
// warp (uniform: one coalesced access, local memory interleaves threads' words) or a different
// one per lane (lane: 32 lines per access); the control indexes at compile time, so the array
// stays in registers. (b) kSpillLive values kept live through rounds of updates, with a
// 32-register bound (spilled to local memory) and without one. Each thread reads one input word
// and writes one output word, coalesced.
// Bytes: global read 4 and write 4 per thread, plus for (a) the array's words written (Size)
// and read (kLocalReads), 4 B each (counter local_bytes); (b) counts the global words only.
// Names: local/array/index:uniform/size:32, local/spill/live:64/regs:32.
#include <cstddef>
#include <cstdint>

#include "gmb/host_device.hpp"
#include "gmb/words.cuh"
#include "kernels/constant.cuh"  // fold_word

namespace gmb {

/// How (a) indexes its array: at compile time (registers), at run time with the same index in
/// every lane, or with an index that depends on the lane.
enum class local_index { kStatic, kUniform, kLane };

constexpr const char* name(local_index i) {
  switch (i) {
    case local_index::kStatic:
      return "static";
    case local_index::kUniform:
      return "uniform";
    case local_index::kLane:
      return "lane";
  }
  return "?";
}

inline constexpr unsigned kLocalBlock = 256;
inline constexpr unsigned kLocalReads = 64;  // indexed reads per thread
/// The run-time indexed reads' unrolling: their loop runs kLocalReads / kLocalReadUnroll times
/// (bench_case::loop_trips, for the executed instructions).
inline constexpr unsigned kLocalReadUnroll = 16;
inline constexpr unsigned kSpillLive = 64;   // values the spill kernel keeps live
/// Registers the spilling kernel may use: half of kSpillLive. The other kernel may use every
/// register a thread can have (255).
inline constexpr unsigned kSpillRegisters = 32;
inline constexpr unsigned kAllRegisters = 255;

/// How a kernel is held to `regs` registers per thread: where an SM holds 2048 threads (sm_80,
/// sm_90, sm_100), as a bound of 64 Ki / (256 x regs) blocks of kLocalBlock per SM (8 for 32
/// registers), the SASS the Hopper results were measured with; elsewhere (1024 or 1536 threads
/// per SM: 8 such blocks cannot fit and ptxas would ignore the bound) as a register cap.
/// (__maxnreg__ is CUDA 12.4's: older compilers keep the blocks-per-SM bound everywhere.)
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || \
    __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030 ||                             \
    (__CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ < 1204)
#define GMB_REGISTER_BOUND(regs) __launch_bounds__(kLocalBlock, 65536 / (kLocalBlock * (regs)))
#else
#define GMB_REGISTER_BOUND(regs) __maxnreg__(regs)
#endif

/// Word i of a thread's array, made from its input word: every element differs.
GMB_HD std::uint32_t local_element(std::uint32_t v, unsigned i) {
  return (v ^ (i * 0x9E3779B9u)) * 0x85EBCA6Bu;
}

/// Read r of thread t takes element at(t, r) of its array of `size` words (a power of two):
/// r * 5 (odd: every element in turn) plus `salt` (a kernel argument, 0, which the compiler
/// cannot see: the index is a run-time value), plus lane * 7 for kLane (32 different elements
/// across a warp of a size >= 32 array). kStatic reads the same elements with salt left out.
struct local_walk {
  local_index index;
  std::uint32_t size;
  std::uint32_t salt;
  GMB_HD std::uint32_t at(std::size_t t, unsigned r) const {
    const std::uint32_t lane = static_cast<std::uint32_t>(t % 32);
    const std::uint32_t base = index == local_index::kStatic ? r * 5u : r * 5u + salt;
    return (base + (index == local_index::kLane ? lane * 7u : 0u)) & (size - 1);
  }
};

/// What the array kernel writes: out[t] folds elements walk.at(t, r) of the array made from
/// input word t; the poison past n.
struct local_array_words {
  word_pattern in;
  local_walk walk;
  std::size_t n;
  GMB_HD std::uint32_t operator()(std::size_t t) const {
    if (t >= n) return kPoisonWord;
    std::uint32_t x = 0;
    for (unsigned r = 0; r < kLocalReads; ++r) {
      x = fold_word(x, local_element(in(t), walk.at(t, r)));
    }
    return x;
  }
};

/// kSpillLive values from v0, updated `rounds` times each from its neighbour (value i from i+1,
/// the last from the first's old value), then folded: every value is live across the loop, so
/// with fewer registers than values the compiler must spill. The spill kernel and its check.
GMB_HD std::uint32_t spill_chain(std::uint32_t v0, unsigned rounds) {
  std::uint32_t v[kSpillLive];
#pragma unroll
  for (unsigned i = 0; i < kSpillLive; ++i) v[i] = local_element(v0, i);
  for (unsigned r = 0; r < rounds; ++r) {
    const std::uint32_t first = v[0];
#pragma unroll
    for (unsigned i = 0; i + 1 < kSpillLive; ++i) v[i] = fold_word(v[i], v[i + 1] ^ r);
    v[kSpillLive - 1] = fold_word(v[kSpillLive - 1], first ^ r);
  }
  std::uint32_t x = 0;
#pragma unroll
  for (unsigned i = 0; i < kSpillLive; ++i) x = fold_word(x, v[i]);
  return x;
}

/// What the spill kernel writes: spill_chain of input word t; the poison past n.
struct spill_words {
  word_pattern in;
  unsigned rounds;
  std::size_t n;
  GMB_HD std::uint32_t operator()(std::size_t t) const {
    return t < n ? spill_chain(in(t), rounds) : kPoisonWord;
  }
};

}  // namespace gmb

#if defined(__CUDACC__)
namespace gmb::built_once {

/// (a): the array lives in local memory unless Index is kStatic (all indices then compile-time
/// constants, the loop fully unrolled: registers).
template <local_index Index, unsigned Size>
__global__ void __launch_bounds__(kLocalBlock)
    local_array(const std::uint32_t* in, std::uint32_t* out, std::size_t n, local_walk walk) {
  static_assert((Size & (Size - 1)) == 0, "array sizes are powers of two");
  const std::size_t t = blockIdx.x * std::size_t(kLocalBlock) + threadIdx.x;
  if (t >= n) return;
  const std::uint32_t v = in[t];
  std::uint32_t a[Size];
#pragma unroll
  for (unsigned i = 0; i < Size; ++i) a[i] = local_element(v, i);
  std::uint32_t x = 0;
  if constexpr (Index == local_index::kStatic) {
#pragma unroll
    for (unsigned r = 0; r < kLocalReads; ++r) x = fold_word(x, a[(r * 5u) & (Size - 1)]);
  } else {
    const local_walk known{Index, Size, walk.salt};  // index kind and size: compile-time
#pragma unroll kLocalReadUnroll
    for (unsigned r = 0; r < kLocalReads; ++r) x = fold_word(x, a[known.at(t, r)]);
  }
  out[t] = x;
}

/// (b): spill_chain with at most MaxRegisters registers per thread (kSpillRegisters:
/// spilling; kAllRegisters: as many as the compiler wants). Launched with kLocalBlock threads.
template <unsigned MaxRegisters>
__global__ void GMB_REGISTER_BOUND(MaxRegisters)
    local_spill(const std::uint32_t* in, std::uint32_t* out, std::size_t n, unsigned rounds) {
  const std::size_t t = blockIdx.x * std::size_t(kLocalBlock) + threadIdx.x;
  if (t >= n) return;
  out[t] = spill_chain(in[t], rounds);
}

}  // namespace gmb::built_once
#endif
