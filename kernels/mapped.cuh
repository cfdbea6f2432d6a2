#pragma once
// Mapped copies, the engine of the offset and stride families: out[W(t)] = in[R(t)], one
// element per thread, one thread per element (the CUDA guides' offset and stride experiments).
// Bytes: read threads*sizeof(T) + write threads*sizeof(T) (useful bytes; the traffic model
// says what the hardware moves).
#include <cstddef>

#include "gmb/cache_op.cuh"

namespace gmb {

inline constexpr unsigned kMappedBlock = 256;

template <class T, class ReadMap, class WriteMap, cache_op Load>
__global__ void __launch_bounds__(kMappedBlock)
    mapped_copy(const T* in, T* out, std::size_t threads, ReadMap read, WriteMap write) {
  const std::size_t t = blockIdx.x * std::size_t(kMappedBlock) + threadIdx.x;
  if (t < threads) store<store_op::kDefault>(out + write(t, 0), load<Load>(in + read(t, 0)));
}

}  // namespace gmb
