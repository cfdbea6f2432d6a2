// A three-point stencil: out[i] = in[i-1] + in[i] + in[i+1]. The loads one word left and right
// of a warp's 128 bytes touch five sectors where four would do: `gmb advise` calls them
// misaligned by one word, like offset/f32/read/off:1, and cached in L1 they cost little.
#include "example.cuh"

constexpr std::size_t kElements = std::size_t(1) << 26;

__global__ void stencil(const float* in, float* out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i == 0 || i + 1 >= kElements) return;
  out[i] = in[i - 1] + in[i] + in[i + 1];
}

int main() {
  const float* in = example::filled(kElements);
  float* out = example::zeros(kElements);
  example::timed("stencil", 8.0 * kElements,
                 [&] { stencil<<<kElements / 256, 256>>>(in, out); });
  example::verify("stencil", out, kElements, [](std::size_t i) {
    if (i == 0 || i + 1 >= kElements) return 0.0f;
    return example::value_of(i - 1) + example::value_of(i) + example::value_of(i + 1);
  });
  return 0;
}
