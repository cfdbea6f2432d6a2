// The AoS particle update's fixed twin: one array per field, so every load and store of a warp
// is 128 contiguous bytes and the unused fields are never read.
#include "example.cuh"

constexpr std::size_t kParticles = std::size_t(1) << 24;
constexpr float kDt = 0.5f;

struct Particles {
  float *x, *y, *z;
  const float *vx, *vy, *vz;
};

__global__ void move_particles(Particles p, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  p.x[i] += p.vx[i] * kDt;
  p.y[i] += p.vy[i] * kDt;
  p.z[i] += p.vz[i] * kDt;
}

int main() {
  float* raw = example::filled(kParticles * 6);  // field f of particle i: value_of(f n + i)
  const Particles p{raw, raw + kParticles, raw + 2 * kParticles,
                    raw + 3 * kParticles, raw + 4 * kParticles, raw + 5 * kParticles};
  const unsigned block = 256, grid = unsigned(kParticles / block);
  example::timed("particles_soa", 9.0 * 4 * kParticles,
                 [&] { move_particles<<<grid, block>>>(p, kParticles); });
  example::verify("particles_soa", raw, kParticles * 6, [](std::size_t e) {
    const float start = example::value_of(e);
    return e < 3 * kParticles ? start + 2 * example::value_of(e + 3 * kParticles) * kDt : start;
  });
  return 0;
}
