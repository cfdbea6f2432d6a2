#pragma once
// Device tests skip (not pass) without a GPU.
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

namespace gmb::test {

inline bool has_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace gmb::test

#define GMB_REQUIRE_GPU() \
  if (!::gmb::test::has_gpu()) GTEST_SKIP() << "no CUDA device"
