// A second process that streams device memory for the given seconds: the competitor the run
// health tests start beside gmembench. Prints "streaming" once its first copy has finished.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void stream_copy(const float4* in, float4* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    out[i] = in[i];
  }
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 30.0;
  const std::size_t n = (std::size_t(1) << 30) / sizeof(float4);  // 1 GiB per array
  float4 *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, n * sizeof(float4)) != cudaSuccess ||
      cudaMalloc(&out, n * sizeof(float4)) != cudaSuccess) {
    std::fprintf(stderr, "gmb_stream_hog: cannot allocate 2 GiB\n");
    return 1;
  }
  cudaMemset(in, 1, n * sizeof(float4));
  const auto start = std::chrono::steady_clock::now();
  bool told = false;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    for (int i = 0; i < 16; ++i) stream_copy<<<1024, 256>>>(in, out, n);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    if (!told) {
      std::printf("streaming\n");
      std::fflush(stdout);
      told = true;
    }
  }
  return 0;
}
