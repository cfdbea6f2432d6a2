// What every example shares: error checks, a timed launch and a one-line verdict. The examples
// are small programs of the kind a user brings to `gmb advise` (docs/advise.md): each kernel
// is written as a newcomer would, and each is checked, so a profile of a wrong kernel is never
// advised on.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <vector>

#define EXAMPLE_CHECK(call)                                                            \
  do {                                                                                 \
    const cudaError_t err_ = (call);                                                   \
    if (err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

namespace example {

/// Runs `launch` once untimed (warm-up) and once timed; prints and returns its milliseconds.
template <class Launch>
float timed(const char* what, double bytes, Launch&& launch) {
  launch();
  EXAMPLE_CHECK(cudaGetLastError());
  cudaEvent_t start, stop;
  EXAMPLE_CHECK(cudaEventCreate(&start));
  EXAMPLE_CHECK(cudaEventCreate(&stop));
  EXAMPLE_CHECK(cudaEventRecord(start));
  launch();
  EXAMPLE_CHECK(cudaEventRecord(stop));
  EXAMPLE_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  EXAMPLE_CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("%s: %.3f ms, %.1f GB/s\n", what, ms, bytes / (ms * 1e6));
  return ms;
}

/// Copies `n` floats back and counts those `expected(i)` disagrees with; exits 1 on any.
template <class Expected>
void verify(const char* what, const float* device, std::size_t n, Expected&& expected) {
  std::vector<float> host(n);
  EXAMPLE_CHECK(cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += host[i] != expected(i);
  if (bad != 0) {
    std::fprintf(stderr, "%s: %zu of %zu results wrong\n", what, bad, n);
    std::exit(1);
  }
}

/// A float that is exact in every sum the examples make: small integers.
__host__ __device__ inline float value_of(std::size_t i) { return float(i % 1024); }

__global__ void fill(float* a, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    a[i] = value_of(i);
  }
}

inline float* filled(std::size_t n) {
  float* a = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&a, n * sizeof(float)));
  fill<<<1024, 256>>>(a, n);
  EXAMPLE_CHECK(cudaGetLastError());
  return a;
}

inline float* zeros(std::size_t n) {
  float* a = nullptr;
  EXAMPLE_CHECK(cudaMalloc(&a, n * sizeof(float)));
  EXAMPLE_CHECK(cudaMemset(a, 0, n * sizeof(float)));
  return a;
}

}  // namespace example
