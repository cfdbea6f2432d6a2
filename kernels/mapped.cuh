#pragma once
// Mapped copies, the engine of the offset and stride families: out[W(t)] = in[R(t)] for every
// logical thread t < threads (the CUDA guides' offset and stride experiments). Ilp 1: one
// element per thread, one thread per element. Ilp > 1: each thread takes Ilp logical threads,
// a block's slots in turn (coalesced_map), so every warp instruction still has the pattern's 32
// consecutive logical threads, and issues all Ilp loads before its first store: the pattern's
// own cost once latency is hidden.
// Bytes: read threads*sizeof(T) + write threads*sizeof(T) (useful bytes; the traffic model
// says what the hardware moves).
#include <cstddef>

#include "gmb/cache_op.cuh"
#include "gmb/pattern.cuh"

namespace gmb {

inline constexpr unsigned kMappedBlock = 256;

template <class T, class ReadMap, class WriteMap, cache_op Load, unsigned Ilp = 1>
__global__ void __launch_bounds__(kMappedBlock)
    mapped_copy(const T* in, T* out, std::size_t threads, ReadMap read, WriteMap write) {
  const coalesced_map<kMappedBlock, Ilp> slots;
  const std::size_t thread = blockIdx.x * std::size_t(kMappedBlock) + threadIdx.x;
  T v[Ilp];
#pragma unroll
  for (unsigned j = 0; j < Ilp; ++j) {
    const std::size_t t = slots(thread, j);
    if (t < threads) v[j] = load<Load>(in + read(t, 0));
  }
#pragma unroll
  for (unsigned j = 0; j < Ilp; ++j) {
    const std::size_t t = slots(thread, j);
    if (t < threads) store<store_op::kDefault>(out + write(t, 0), v[j]);
  }
}

/// Blocks of mapped_copy<..., Ilp> for `threads` logical threads.
inline unsigned mapped_grid(std::size_t threads, unsigned ilp) {
  const std::size_t per_block = std::size_t(kMappedBlock) * ilp;
  return static_cast<unsigned>((threads + per_block - 1) / per_block);
}

}  // namespace gmb
