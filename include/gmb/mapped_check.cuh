#pragma once
// Checks a mapped copy out[W(t)] = in[R(t)] on the device: every destination element must hold
// the source element's words (the input is a word_pattern). Reports the first bad thread.
// And what a kernel that xors the words a map reads writes (mapped_xor_words).
#include <cuda_runtime.h>

#include <cstddef>

#include "gmb/device_buffer.cuh"

namespace gmb {

/// Output word t of a kernel writing the xor of the input words map(t, 0 .. slots-1) for each
/// of n threads, and the poison past them (nothing may be written there).
template <class Map>
struct mapped_xor_words {
  word_pattern in;
  Map map;
  std::size_t n;
  GMB_HD std::uint32_t operator()(std::size_t t) const {
    if (t >= n) return kPoisonWord;
    std::uint32_t x = 0;
    for (unsigned j = 0; j < map.slots(); ++j) x ^= in(map(t, j));
    return x;
  }
};

namespace detail {
template <class T, class ReadMap, class WriteMap>
__global__ void check_mapped_kernel(const T* out, std::size_t threads, ReadMap read,
                                    WriteMap write, word_pattern source,
                                    mismatch_report* report) {
  for (std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; t < threads;
       t += std::size_t(gridDim.x) * blockDim.x) {
    if (element_mismatch(out[write(t, 0)], source, read(t, 0)) != 0) {
      atomicAdd(&report->count, 1ull);
      atomicMin(&report->first, static_cast<unsigned long long>(t));
    }
  }
}
}  // namespace detail

/// `count` threads whose destination is wrong, `first` the lowest such thread; synchronizes.
template <class T, class ReadMap, class WriteMap>
mismatch_report check_mapped(const T* out, std::size_t threads, const ReadMap& read,
                             const WriteMap& write, const word_pattern& source,
                             cudaStream_t stream) {
  return run_check(stream, [&](mismatch_report* report) {
    detail::check_mapped_kernel<<<detail::utility_grid(threads), detail::kUtilityBlock, 0,
                                  stream>>>(out, threads, read, write, source, report);
    GMB_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace gmb
