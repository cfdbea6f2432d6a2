#pragma once
// Cache levels: hot, repeated reads of a working set of n float4 elements. Each of the B
// blocks reads `per_block` elements from element b*n/B on, wrapping around the set. A set
// smaller than per_block is re-read whole by every block (where it fits one SM's L1, from
// there); in a larger one, the element a block reads was last read n elements earlier by all
// blocks together, so it is still cached exactly when the set fits the L2. Each element is
// checked against the input pattern (wrong ones are counted), which keeps the loads alive.
// Bytes: B * per_block * 16 per launch (every load counts).
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
  std::uint32_t e =
      static_cast<std::uint32_t>((std::size_t(blockIdx.x) * n / gridDim.x + threadIdx.x) % n);
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
      // The pattern's words of element e are base, base^1, base^2, base^3 (4e has its low two
      // bits clear): one base per element, not four word indices, keeps the check cheaper
      // than the load it checks, even at L1 speed.
      const std::uint32_t base = (at[j] << 2) ^ expected.seed;
      bad += ((__float_as_uint(v[j].x) ^ base) | (__float_as_uint(v[j].y) ^ base ^ 1u) |
              (__float_as_uint(v[j].z) ^ base ^ 2u) | (__float_as_uint(v[j].w) ^ base ^ 3u)) != 0;
    }
  }
  if (bad != 0) add_bad(bad_elements, bad);
}

}  // namespace gmb
