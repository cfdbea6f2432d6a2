// Cache levels (kernels/working_set.cuh): hot reads of working sets from 16 KiB to the first
// power of two at or above 8x the L2 (at most the arrays): doubling (quick), and also the
// midpoints 3*2^k (full). Nothing is flushed: the warm-up launch leaves the set wherever it
// fits, so the curve steps down at the L1 and the L2 sizes. Sets up to 1 MiB also run with a
// small L1 (/l1:small): where that curve steps down shows what the carve-out hint granted.
// (The driver's choice for these kernels, without shared memory, measured the same as a large
// L1: results/nvidia-h200/20261122-041333-caching-first-look.)
// Names: cache/read/ws:16384, cache/read/ws:16384/l1:small (ws in bytes).
// Bytes: every 16-B element read, blocks * 1 MiB per launch.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "gmb/carveout.cuh"
#include "gmb/naming.hpp"
#include "gmb/sizing.hpp"
#include "kernels/working_set.cuh"

namespace gmb {

namespace {

constexpr std::size_t kPerBlockElements = kMiB / sizeof(float4);
constexpr std::size_t kSmallestSet = 16 * 1024;
constexpr std::size_t kCarveoutSetsUpTo = kMiB;

/// Reads of element `e` in one launch: block b reads elements b*n/B .. b*n/B+P-1, modulo n.
std::size_t reads_of_element(std::size_t e, std::size_t n, std::size_t blocks) {
  std::size_t reads = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t first = b * n / blocks;
    const std::size_t r = (e + n - first) % n;  // position of e in block b's run
    if (r < kPerBlockElements) reads += (kPerBlockElements - 1 - r) / n + 1;
  }
  return reads;
}

/// Blocks of a launch: as many as are resident at once, so they all read at the same time.
std::size_t resident_blocks(const environment& env) {
  int per_sm = 0;
  GMB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, working_set_read<cache_op::kDefault>, kWorkingSetBlock, 0));
  return static_cast<std::size_t>(per_sm) * env.device().sms;
}

/// cache/read/ws:B (with its carve-out suffix), or model/read/ws:B for the model's calibration.
bench_case working_set_case(environment& env, std::size_t bytes, l1_carveout l1,
                            bool calibration = false) {
  auto* kernel = working_set_read<cache_op::kDefault>;
  const std::size_t blocks = resident_blocks(env);
  const std::size_t n = bytes / sizeof(float4);
  const std::size_t reads = blocks * kPerBlockElements;
  if (n < kWorkingSetBlock || n > reads || n >= (std::size_t(1) << 29)) {
    throw std::invalid_argument("cache/read: a working set of " + std::to_string(bytes) +
                                " bytes is not read whole by one launch");
  }

  bench_case c;
  const std::vector<name_param> params{{"ws", static_cast<long long>(bytes)}};
  c.name = calibration ? bench_name("model", "read", params)
                       : bench_name("cache", "read", params) + carveout_suffix(l1);
  c.prepare = [kernel, l1](environment& e) {
    prefer_carveout(kernel, l1);
    e.in().fill(kInputPattern, e.stream());
    e.reset_counter();
  };
  const checking_read_launch launch = [=](environment& e, word_pattern expected) {
    kernel<<<static_cast<unsigned>(blocks), kWorkingSetBlock, 0, e.stream()>>>(
        e.in().data<const float4>(), static_cast<std::uint32_t>(n), kPerBlockElements, expected,
        e.counter());
  };
  c.launch = [launch](environment& e) { launch(e, kInputPattern); };
  c.verify = [=](environment& e) {
    return verify_checking_read(
        e, e.in(), kInputPattern, reads, launch,
        [=](std::size_t word) { return reads_of_element(word / kWordsPer<float4>, n, blocks); },
        n * kWordsPer<float4>);
  };
  c.bytes_read = static_cast<double>(reads * sizeof(float4));
  c.cold_l2 = false;
  return c;
}

}  // namespace

std::vector<bench_case> working_set_calibration_cases(environment& env) {
  // Sets of no sweep's size: 40 KiB (read from the L1) and 1.25, 10 and 20 MiB (from the L2,
  // where it holds twice the set: its rate changes with the set), each where the input array
  // holds it; and one of 1.5 L2s (whole MiB, never a power of two): a set past the L2, which
  // keeps part of it all the same.
  std::vector<bench_case> cases;
  for (std::size_t set : {std::size_t(40) << 10, std::size_t(5) * kMiB / 4, std::size_t(10) * kMiB,
                          std::size_t(20) * kMiB}) {
    const bool l2_probe = set > kMiB;
    if (set > env.array_bytes() || (l2_probe && 2 * set > env.device().l2_bytes)) continue;
    cases.push_back(working_set_case(env, set, l1_carveout::kUnset, true));
  }
  std::size_t past = env.device().l2_bytes * 3 / 2 / kMiB * kMiB;
  if ((past & (past - 1)) == 0) past -= kMiB;  // a power of two is a sweep's set
  const std::size_t reads = resident_blocks(env) * kPerBlockElements * sizeof(float4);
  if (past > kMiB && past <= env.array_bytes() && past <= reads) {
    cases.push_back(working_set_case(env, past, l1_carveout::kUnset, true));
  }
  return cases;
}

std::vector<bench_case> working_set_cases(environment& env, sweep s) {
  std::vector<bench_case> cases;
  std::size_t top = kSmallestSet;
  while (top < 8 * env.device().l2_bytes) top *= 2;
  // At most the arrays, and at most what one launch reads (every element of the set, each
  // launch; 1 GiB on Hopper, less on GPUs with fewer resident blocks).
  top = std::min({top, env.array_bytes(), resident_blocks(env) * kMiB});
  for (std::size_t bytes = kSmallestSet; bytes <= top; bytes *= 2) {
    for (std::size_t set : {bytes, bytes / 2 * 3}) {
      if (set > top || (set != bytes && s == sweep::kQuick)) continue;
      cases.push_back(working_set_case(env, set, l1_carveout::kUnset));
    }
  }
  for (std::size_t bytes = kSmallestSet; bytes <= std::min(kCarveoutSetsUpTo, top); bytes *= 2) {
    cases.push_back(working_set_case(env, bytes, l1_carveout::kSmall));
  }
  return cases;
}

}  // namespace gmb
