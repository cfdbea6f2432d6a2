// Column sums of a row-major matrix, one thread per column walking down the rows. It looks like
// the strided walk of a textbook, but neighbouring lanes take neighbouring columns, so every
// request is one coalesced row segment: `gmb advise` calls the load coalesced.
#include "example.cuh"

constexpr std::size_t kRows = 4096, kCols = 16384;

__global__ void column_sum(const float* a, float* sums) {
  const std::size_t c = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  float sum = 0;
  for (std::size_t r = 0; r < kRows; ++r) sum += a[r * kCols + c];
  sums[c] = sum;
}

int main() {
  const float* a = example::filled(kRows * kCols);
  float* sums = example::zeros(kCols);
  example::timed("column_sum", 4.0 * kRows * kCols,
                 [&] { column_sum<<<kCols / 128, 128>>>(a, sums); });
  // value_of(r kCols + c) = c % 1024 for every r (kCols is a multiple of 1024)
  example::verify("column_sum", sums, kCols,
                  [](std::size_t c) { return float(kRows) * example::value_of(c); });
  return 0;
}
