#pragma once
// The L2's partitions seen from each SM (the model's calibration: benchmarks/l2_partition.cu).
// A chain of lines (gmb/chase.hpp) is cut into one segment of `steps` lines per SM, ranked by
// SM id. After the L2 is flushed the block on the home SM (rank 0) loads every segment's lines
// once; then each SM in turn walks its own segment twice, one thread, loads that skip the L1
// (ld.global.cg): the first walk finds each line where the home SM's load left it, the second
// where this SM's first walk left it. An L2 that keeps a line near the SMs that read it (Hopper's
// two partitions, each caching for its half of the SMs) answers the home SM's half alike both
// times and the other half more slowly the first time. Built once (gmb_bench_once, namespace
// gmb::built_once): its loads name their operator, so -dlcm changes nothing.
#include <cstddef>
#include <cstdint>

#include "gmb/cache_op.cuh"
#include "gmb/chase.hpp"
#include "gmb/sm_id.cuh"
#include "kernels/latency.cuh"

namespace gmb::built_once {

/// One SM's walks, every launch's summed: SM cycles and %globaltimer ns of the first and the
/// second walk, and the launches that walked.
struct partition_record {
  unsigned long long first_cycles;
  unsigned long long first_ns;
  unsigned long long again_cycles;
  unsigned long long again_ns;
  unsigned long long walks;
};

inline constexpr unsigned kPartitionWarmBlock = 1024;
inline constexpr unsigned kPartitionWalkBlock = 32;

/// The block on the home SM (ranks[%smid] == 0) loads the first `lines` lines of the cycle
/// (their address words, skipping the L1) and counts its launch in warmed[0] (warmed[1] keeps
/// the loads); every other block returns. Launched with one block per SM.
static __global__ void __launch_bounds__(kPartitionWarmBlock, 1)
    partition_warm(const std::uint64_t* chain, hash_permutation perm, std::size_t n,
                   std::size_t lines, const unsigned* ranks, unsigned long long* warmed) {
  const unsigned id = sm_id();
  if (id >= kSmIdSlots || ranks[id] != 0) return;
  std::uint64_t folded = 0;
  for (std::size_t k = threadIdx.x; k < lines; k += blockDim.x) {
    folded ^= load<cache_op::kCg>(chain + std::size_t(chase_line(perm, n, k)) *
                                              (kChaseLineBytes / sizeof(std::uint64_t)));
  }
  if (folded == 1) warmed[1] = folded;  // never (the words are 128-B aligned addresses)
  if (threadIdx.x == 0) atomicAdd(warmed, 1ull);
}

/// Thread 0 of the block on the SM of rank `rank` walks that rank's segment (`steps` lines from
/// step rank * steps of the cycle) twice, timing each walk into records[rank]; a walk that does
/// not end on the line the chain says adds to `bad`. Every other block returns. Launched with
/// one block per SM.
static __global__ void __launch_bounds__(kPartitionWalkBlock, 1)
    partition_walk_twice(const std::uint64_t* chain, hash_permutation perm, std::size_t n,
                         unsigned steps, const unsigned* ranks, unsigned rank,
                         partition_record* records, unsigned long long* bad) {
  const unsigned id = sm_id();
  if (threadIdx.x != 0 || id >= kSmIdSlots || ranks[id] != rank) return;
  const std::size_t first = std::size_t(rank) * steps;
  const std::uint64_t start = chase_address(chain, chase_line(perm, n, first));
  const std::uint64_t end = chase_address(chain, chase_line(perm, n, first + steps));
  partition_record& r = records[rank];
  for (int pass = 0; pass < 2; ++pass) {
    auto p = reinterpret_cast<const std::uint64_t*>(start);
    const long long c0 = clock64();
    const unsigned long long t0 = global_ns();
    for (unsigned i = 0; i < steps; ++i) {
      p = reinterpret_cast<const std::uint64_t*>(load<cache_op::kCg>(p));
    }
    const long long c1 = clock64();
    const unsigned long long t1 = global_ns();
    if (reinterpret_cast<std::uint64_t>(p) != end) atomicAdd(bad, 1ull);
    (pass == 0 ? r.first_cycles : r.again_cycles) += static_cast<unsigned long long>(c1 - c0);
    (pass == 0 ? r.first_ns : r.again_ns) += t1 - t0;
  }
  ++r.walks;
}

}  // namespace gmb::built_once
