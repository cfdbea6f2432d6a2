// A gather through a hash: each thread reads the element a multiplicative hash of its index
// names, anywhere in 256 MiB. Every lane lands in its own sector: `gmb advise` calls the load
// scattered, like gather/random.
#include "example.cuh"

constexpr std::size_t kElements = std::size_t(1) << 26;

__host__ __device__ inline std::size_t hashed(std::size_t i) {
  return (i * 2654435761u) & (kElements - 1);  // odd multiplier: a permutation of 2^26
}

__global__ void hashed_gather(const float* in, float* out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  out[i] = in[hashed(i)];
}

int main() {
  const float* in = example::filled(kElements);
  float* out = example::zeros(kElements);
  example::timed("hashed_gather", 8.0 * kElements,
                 [&] { hashed_gather<<<kElements / 256, 256>>>(in, out); });
  example::verify("hashed_gather", out, kElements,
                  [](std::size_t i) { return example::value_of(hashed(i)); });
  return 0;
}
