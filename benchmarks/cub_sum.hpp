#pragma once
// CUB's device-wide sum, compiled once for every flavor (benchmarks/cub_sum.cu): its loads are
// ld.global.nc (CUB's reduce tuning asks for LOAD_LDG: LDG.E.CONSTANT), which -dlcm does not
// change (docs/design.md), so three copies would only triple the build's slowest file.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace gmb {

/// cub::DeviceReduce::Sum of n elements into *out; temp null: sets temp_bytes only.
template <class T>
cudaError_t cub_sum(void* temp, std::size_t& temp_bytes, const T* in, T* out, std::size_t n,
                    cudaStream_t stream);

}  // namespace gmb
