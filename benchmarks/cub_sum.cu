// CUB's sum for the reduce family (benchmarks/cub_sum.hpp says why it is built once).
#include <cub/device/device_reduce.cuh>

#include "benchmarks/cub_sum.hpp"

namespace gmb {

template <class T>
cudaError_t cub_sum(void* temp, std::size_t& temp_bytes, const T* in, T* out, std::size_t n,
                    cudaStream_t stream) {
  return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream);
}

template cudaError_t cub_sum<float>(void*, std::size_t&, const float*, float*, std::size_t,
                                    cudaStream_t);
template cudaError_t cub_sum<int>(void*, std::size_t&, const int*, int*, std::size_t, cudaStream_t);

}  // namespace gmb
