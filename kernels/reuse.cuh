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

/// One thread's work: xor of its Slots words under `map`, stored at out[t].
template <unsigned Slots, cache_op Load, store_op Store, class Map>
__device__ __forceinline__ void xor_reads_of(const std::uint32_t* in, std::uint32_t* out,
                                             std::size_t t, const Map& map) {
  std::uint32_t v[Slots];
#pragma unroll
  for (unsigned j = 0; j < Slots; ++j) v[j] = load<Load>(in + map(t, j));
  std::uint32_t x = 0;
#pragma unroll
  for (unsigned j = 0; j < Slots; ++j) x ^= v[j];
  store<Store>(out + t, x);
}

template <unsigned Slots, class Map, cache_op Load, store_op Store>
__global__ void __launch_bounds__(kReuseBlock)
    xor_reads(const std::uint32_t* in, std::uint32_t* out, std::size_t n, Map map) {
  const std::size_t t = blockIdx.x * std::size_t(kReuseBlock) + threadIdx.x;
  if (t < n) xor_reads_of<Slots, Load, Store>(in, out, t, map);
}

/// The same with `const __restrict__` pointers and plain loads: the compiler may then take the
/// read-only path itself (LDG.E.CONSTANT), as __ldg does explicitly (the readonly/ family).
template <unsigned Slots, class Map>
__global__ void __launch_bounds__(kReuseBlock)
    restrict_xor_reads(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out,
                       std::size_t n, Map map) {
  const std::size_t t = blockIdx.x * std::size_t(kReuseBlock) + threadIdx.x;
  if (t < n) xor_reads_of<Slots, cache_op::kDefault, store_op::kDefault>(in, out, t, map);
}

}  // namespace gmb
