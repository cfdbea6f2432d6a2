// TLB family (benchmarks/builders/chase_chain.cuh, kernels/latency.cuh): one thread chases one line per
// `step` bytes (4 KiB, 64 KiB, 2 MiB: a page of each size the GPU might map with) in a
// pseudo-random page order over `span` bytes, from 2 MiB to the largest that fits. The lines
// stay in the L2 (at most a quarter of it; the chain is written just before and the runs are
// hot) and are loaded with ld.global.cg, past the L1: every load is an L2 hit, so what grows
// with the span is the address translation, the TLBs' reach ending level by level. Counters:
// latency_ns, latency_cycles, sm_clock_mhz per load (as latency/chase). Quick: a few spans per
// step; full: every power of two. Verified like every chase: the walk must end where the host
// says. Names: tlb/chase/step:4096/span:2097152 (bytes).
#include <algorithm>
#include <memory>
#include <vector>

#include "benchmarks/builders/chase_chain.cuh"
#include "benchmarks/families.hpp"
#include "gmb/naming.hpp"

namespace gmb {

namespace {

constexpr std::size_t kMemoryReserve = 1024 * kMiB;
constexpr std::size_t kLargestSpan = std::size_t(64) << 30;
constexpr std::size_t kLeastSlots = 32;

bench_case tlb_case(std::size_t step, std::size_t span) {
  const auto spacing = static_cast<std::uint32_t>(step / kChaseLineBytes);
  auto s = std::make_shared<chase_chain>(span / step, spacing, 1);
  bench_case c;
  c.name =
      bench_name("tlb", "chase",
                 {{"step", static_cast<long long>(step)}, {"span", static_cast<long long>(span)}});
  chase_chain::describe(s, c);
  c.launch = [s](environment& e) { s->launch<cache_op::kCg>(e, 0); };
  c.cold_l2 = false;
  return c;
}

/// The quick sweep's spans (MiB) per step: the smallest, and the ends of the flat stretches
/// the full sweep shows on an H200 (translation adds at most a few ns up to 64 GiB).
bool quick_point(std::size_t step, std::size_t span) {
  const std::size_t mib = span / kMiB;
  if (step == (std::size_t(4) << 10)) return mib == 2 || mib == 128;
  if (step == (std::size_t(64) << 10)) return mib == 2 || mib == 2048;
  return mib == 128 || mib == 2048 || mib == 32768;
}

}  // namespace

std::vector<bench_case> tlb_cases(environment& env, sweep s) {
  std::size_t free_bytes = 0, total_bytes = 0;
  GMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t budget = free_bytes > kMemoryReserve ? free_bytes - kMemoryReserve : 0;
  // The chain's lines (a 32-B sector each is what the L2 holds) in a quarter of the L2.
  const std::size_t most_slots = env.device().l2_bytes / 4 / kChaseLineBytes;
  std::vector<bench_case> cases;
  for (std::size_t step : {std::size_t(4) << 10, std::size_t(64) << 10, std::size_t(2) << 20}) {
    for (std::size_t span = 2 * kMiB; span <= std::min(kLargestSpan, budget); span *= 2) {
      const std::size_t slots = span / step;
      if (slots < kLeastSlots || slots > most_slots) continue;
      if (s == sweep::kQuick && !quick_point(step, span)) continue;
      cases.push_back(tlb_case(step, span));
    }
  }
  return cases;
}

}  // namespace gmb
