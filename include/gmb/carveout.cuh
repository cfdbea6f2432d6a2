#pragma once
// The L1/shared-memory split a kernel asks for
// (cudaFuncAttributePreferredSharedMemoryCarveout).
// It is a hint: the driver may grant another split, and no API reports the one it granted, so
// the working-set sweep measures it (the L1 plateau's edge).
#include <cuda_runtime.h>

#include <string>

#include "gmb/cuda_check.hpp"

namespace gmb {

enum class l1_carveout {
  kUnset,  // the driver's choice (cudaSharedmemCarveoutDefault)
  kSmall,  // most of the unified memory to shared memory, the least to L1
};

constexpr const char* name(l1_carveout c) {
  return c == l1_carveout::kSmall ? "small" : "unset";
}

/// What a benchmark name says of the carve-out: nothing for the driver's choice, else
/// "/l1:small" (the naming contract's key:value).
inline std::string carveout_suffix(l1_carveout c) {
  return c == l1_carveout::kUnset ? "" : std::string("/l1:") + name(c);
}

/// Sets the kernel's preferred carve-out. Attributes stay with the kernel, so every benchmark of
/// a kernel sets its own, kUnset included, before it launches.
template <class Kernel>
void prefer_carveout(Kernel* kernel, l1_carveout c) {
  // No "large L1" value: for kernels without shared memory the driver's choice measured the
  // same as cudaSharedmemCarveoutMaxL1 (results/nvidia-h200/20261122-041333-caching-first-look).
  const int percent_shared =
      c == l1_carveout::kSmall ? cudaSharedmemCarveoutMaxShared : cudaSharedmemCarveoutDefault;
  GMB_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                      cudaFuncAttributePreferredSharedMemoryCarveout,
                                      percent_shared));
}

}  // namespace gmb
