#pragma once
// Re-use patterns for the caching study: each of n threads xors the Slots 4-B words a map
// gives it (all loads issued before the first use) and writes that one word, coalesced.
// Overlapping windows, AoS fields loaded one by one, and windowed gathers read lines that
// other loads of the warp or of nearby warps read too: where L1 caching shows.
// Bytes: read = the distinct words the threads read, times 4 (what a perfect cache fetches
// once); write n*4.
#include <cstddef>
#include <cstdint>

#include "gmb/cache_op.cuh"

namespace gmb {

inline constexpr unsigned kReuseBlock = 256;

template <unsigned Slots, class Map, cache_op Load, store_op Store>
__global__ void __launch_bounds__(kReuseBlock)
    xor_reads(const std::uint32_t* in, std::uint32_t* out, std::size_t n, Map map) {
  const std::size_t t = blockIdx.x * std::size_t(kReuseBlock) + threadIdx.x;
  if (t >= n) return;
  std::uint32_t v[Slots];
#pragma unroll
  for (unsigned j = 0; j < Slots; ++j) v[j] = load<Load>(in + map(t, j));
  std::uint32_t x = 0;
#pragma unroll
  for (unsigned j = 0; j < Slots; ++j) x ^= v[j];
  store<Store>(out + t, x);
}

}  // namespace gmb
