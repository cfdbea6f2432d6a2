#pragma once
// Cache levels: hot, repeated reads of a working set of n float4 elements. Block b reads
// `per_block` elements from element b*per_block on, wrapping around the working set: every
// block reads the same bytes whatever the set's size, a set that fits one SM's L1 is re-read
// there by all the SM's blocks, and a larger one is shared by blocks on every SM (L2).
// Each element is checked against the input pattern (wrong ones are counted), which keeps
// the loads alive. Bytes: blocks * per_block * 16 per launch (every load counts).
#include <cstddef>
#include <cstdint>

#include "gmb/cache_op.cuh"
#include "gmb/words.cuh"

namespace gmb {

inline constexpr unsigned kWorkingSetBlock = 256;
inline constexpr unsigned kWorkingSetIlp = 4;
/// per_block must be a whole number of these; n at least kWorkingSetBlock and below 2^29.
inline constexpr std::size_t kWorkingSetStep = std::size_t(kWorkingSetBlock) * kWorkingSetIlp;

template <cache_op Load>
__global__ void __launch_bounds__(kWorkingSetBlock)
    working_set_read(const float4* in, std::uint32_t n, std::size_t per_block,
                     word_pattern expected, unsigned long long* bad_elements) {
  // 32-bit indices: the wrap is one compare and subtract per load.
  std::uint32_t e = static_cast<std::uint32_t>((blockIdx.x * per_block + threadIdx.x) % n);
  unsigned bad = 0;
  for (std::size_t i = 0; i < per_block; i += kWorkingSetStep) {
    std::uint32_t at[kWorkingSetIlp];
    float4 v[kWorkingSetIlp];
#pragma unroll
    for (unsigned j = 0; j < kWorkingSetIlp; ++j) {
      at[j] = e;
      e += kWorkingSetBlock;
      if (e >= n) e -= n;
    }
#pragma unroll
    for (unsigned j = 0; j < kWorkingSetIlp; ++j) v[j] = load<Load>(in + at[j]);
#pragma unroll
    for (unsigned j = 0; j < kWorkingSetIlp; ++j) {
      bad += element_mismatch(v[j], expected, at[j]) != 0;
    }
  }
  if (bad != 0) atomicAdd(bad_elements, static_cast<unsigned long long>(bad));
}

}  // namespace gmb
