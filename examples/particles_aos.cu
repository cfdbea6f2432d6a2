// A particle update on an array of structures: each thread moves one particle of 32 bytes, so
// neighbouring lanes load each field 32 bytes apart (eight sectors per request where one would
// do). `gmb advise` names the field loads and stores, and the structure of arrays as the fix.
#include "example.cuh"

constexpr std::size_t kParticles = std::size_t(1) << 24;
constexpr float kDt = 0.5f;

struct Particle {
  float x, y, z, vx, vy, vz, mass, charge;
};

__global__ void move_particles(Particle* p, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  p[i].x += p[i].vx * kDt;
  p[i].y += p[i].vy * kDt;
  p[i].z += p[i].vz * kDt;
}

int main() {
  float* raw = example::filled(kParticles * 8);  // field f of particle i: value_of(8 i + f)
  Particle* p = reinterpret_cast<Particle*>(raw);
  const unsigned block = 256, grid = unsigned(kParticles / block);
  // Moved bytes: the six fields read and the three written.
  example::timed("particles_aos", 9.0 * 4 * kParticles,
                 [&] { move_particles<<<grid, block>>>(p, kParticles); });
  example::verify("particles_aos", raw, kParticles * 8, [](std::size_t e) {
    const std::size_t f = e % 8;
    const float start = example::value_of(e);
    return f < 3 ? start + 2 * example::value_of(e + 3) * kDt : start;  // moved twice
  });
  return 0;
}
