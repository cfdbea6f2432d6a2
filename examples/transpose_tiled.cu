// The naive transpose's fixed twin: a 32 x 32 tile goes through shared memory (one padding
// column: no bank conflicts), so both the read and the write are along rows.
#include "example.cuh"

constexpr std::size_t N = 8192;
constexpr unsigned kTile = 32, kRows = 8;

__global__ void transpose_tiled(const float* in, float* out) {
  __shared__ float tile[kTile][kTile + 1];
  const std::size_t x = blockIdx.x * std::size_t(kTile) + threadIdx.x;
  const std::size_t y = blockIdx.y * std::size_t(kTile) + threadIdx.y;
  for (unsigned r = 0; r < kTile; r += kRows) tile[threadIdx.y + r][threadIdx.x] = in[(y + r) * N + x];
  __syncthreads();
  const std::size_t tx = blockIdx.y * std::size_t(kTile) + threadIdx.x;
  const std::size_t ty = blockIdx.x * std::size_t(kTile) + threadIdx.y;
  for (unsigned r = 0; r < kTile; r += kRows) out[(ty + r) * N + tx] = tile[threadIdx.x][threadIdx.y + r];
}

int main() {
  const float* in = example::filled(N * N);
  float* out = example::zeros(N * N);
  const dim3 block(kTile, kRows), grid(N / kTile, N / kTile);
  example::timed("transpose_tiled", 2.0 * N * N * sizeof(float),
                 [&] { transpose_tiled<<<grid, block>>>(in, out); });
  example::verify("transpose_tiled", out, N * N,
                  [](std::size_t i) { return example::value_of((i % N) * N + i / N); });
  return 0;
}
