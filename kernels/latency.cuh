#pragma once
// Latency: dependent loads (a pointer chase). The working set is 2^bits lines of kChaseLineBytes;
// the chain visits them in the order of a hash permutation (line perm(k) points to perm(k+1)),
// one cycle through every line, so each load's address comes from the previous load and no
// coalescing, prefetch or nearby line helps. Each lane of the launching warp chases its own
// place on the cycle; a launch continues where the previous one stopped, so a timed window
// touches lines no earlier window touched until the whole cycle has been walked.
// Bytes: 4 per load (the index word), lanes * steps per launch; the result is the time per step.
#include <cstddef>
#include <cstdint>

#include "gmb/cache_op.cuh"
#include "gmb/chase.hpp"

namespace gmb {

/// In-kernel time of the last launch: SM cycles (clock64) and nanoseconds (%globaltimer).
struct chase_record {
  unsigned long long cycles;
  unsigned long long ns;
};

/// Writes the chain: the line visited k-th points to the line visited next.
__global__ void build_chase(std::uint32_t* lines, hash_permutation perm, std::size_t n) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x) {
    lines[std::size_t(chase_line(perm, n, k)) * kChaseLineWords] = chase_line(perm, n, k + 1);
  }
}

/// Puts every lane at its start: line perm(chase_start(lane)).
__global__ void reset_chase(std::uint32_t* position, hash_permutation perm, std::size_t n) {
  position[threadIdx.x] = chase_line(perm, n, chase_start(threadIdx.x, blockDim.x, n));
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// One warp (or one thread): `warm_steps` untimed, then `steps` timed dependent loads per lane
/// from the lane's position. The L1 keeps no global data from one launch to the next, so a set
/// that fits it is walked once untimed (otherwise the first pass, from the L2, is in the
/// time). Plain loads (Load = kDefault) are what the ca/cg builds change: there the L1 hit
/// must vanish.
template <cache_op Load>
__global__ void chase(std::uint32_t* lines, std::uint32_t* position, unsigned warm_steps,
                      unsigned steps, chase_record* record) {
  std::uint32_t p = position[threadIdx.x];
  for (unsigned i = 0; i < warm_steps; ++i) {
    p = load<Load>(lines + std::size_t(p) * kChaseLineWords);
  }
  __syncwarp();
  const long long c0 = clock64();
  const unsigned long long t0 = global_ns();
  for (unsigned i = 0; i < steps; ++i) p = load<Load>(lines + std::size_t(p) * kChaseLineWords);
  __syncwarp();
  const long long c1 = clock64();
  const unsigned long long t1 = global_ns();
  position[threadIdx.x] = p;
  if (threadIdx.x == 0) *record = {static_cast<unsigned long long>(c1 - c0), t1 - t0};
}

}  // namespace gmb
