// A naive transpose of an N x N row-major matrix: each thread reads one element along a row
// (neighbouring lanes, neighbouring words) and writes it down a column (neighbouring lanes,
// words N apart). `gmb advise` names the store.
#include "example.cuh"

constexpr std::size_t N = 8192;

__global__ void transpose_naive(const float* in, float* out) {
  const std::size_t x = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t y = blockIdx.y * std::size_t(blockDim.y) + threadIdx.y;
  out[x * N + y] = in[y * N + x];
}

int main() {
  const float* in = example::filled(N * N);
  float* out = example::zeros(N * N);
  const dim3 block(32, 8), grid(N / 32, N / 8);
  example::timed("transpose_naive", 2.0 * N * N * sizeof(float),
                 [&] { transpose_naive<<<grid, block>>>(in, out); });
  example::verify("transpose_naive", out, N * N,
                  [](std::size_t i) { return example::value_of((i % N) * N + i / N); });
  return 0;
}
