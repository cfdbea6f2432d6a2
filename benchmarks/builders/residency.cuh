#pragma once
// Limiting how many blocks of a kernel an SM holds at once: dynamic shared memory that no
// thread touches, sized with the occupancy API (the inflight family, the loaded chase).
#include <cuda_runtime.h>

#include <cstddef>
#include <optional>

#include "gmb/cuda_check.hpp"

namespace gmb {

/// Blocks of `block` threads of `kernel` an SM holds with `smem` bytes of dynamic shared memory
/// per block (the occupancy API's answer).
template <class Kernel>
int resident_blocks(Kernel kernel, unsigned block, std::size_t smem) {
  int blocks = 0;
  GMB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, smem));
  return blocks;
}

/// The least dynamic shared memory per block with which an SM holds exactly `per_sm` blocks;
/// nullopt where it cannot hold that many (threads, registers or block slots run out first).
template <class Kernel>
std::optional<std::size_t> residency_smem(Kernel kernel, unsigned block, unsigned per_sm) {
  const int unlimited = resident_blocks(kernel, block, 0);
  if (unlimited < int(per_sm)) return std::nullopt;
  if (unlimited == int(per_sm)) return std::size_t(0);
  int device = 0, most = 0;
  GMB_CUDA_CHECK(cudaGetDevice(&device));
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes{};  // the kernel's static shared memory counts against the most
  GMB_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  most -= int(attributes.sharedSizeBytes);
  GMB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
  constexpr std::size_t kGranule = 256;
  std::size_t fits = 0, limits = std::size_t(most) / kGranule * kGranule;  // too many / few enough
  if (resident_blocks(kernel, block, limits) > int(per_sm)) return std::nullopt;
  while (limits - fits > kGranule) {
    const std::size_t mid = (fits + limits) / 2 / kGranule * kGranule;
    (resident_blocks(kernel, block, mid) > int(per_sm) ? fits : limits) = mid;
  }
  if (resident_blocks(kernel, block, limits) != int(per_sm)) return std::nullopt;
  return limits;
}

}  // namespace gmb
