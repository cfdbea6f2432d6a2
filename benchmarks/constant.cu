// constant family (kernels/constant.cuh): the serialization curve (lanes of a warp touching 1,
// 2, 4, ... 32 distinct words per load of a 1-KiB working set) from a __constant__ table, the
// same loads from global memory, plain and __ldg, and a 64-KiB working set (past the constant
// cache's first level). Hot (the table is on chip: no flush). Bytes: read 4 per lane per load,
// write 4 per thread; counter warp_loads_per_ns. Names: constant/read/distinct:D/ws:B/path:P.
#include <algorithm>
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "gmb/naming.hpp"
#include "kernels/constant.cuh"

namespace gmb {

namespace {

/// The module's __constant__ table (its whole 64-KiB bank), holding the input pattern's first
/// words, and the kernels' way to read it.
__constant__ std::uint32_t g_constant_table[kConstantTableWords];

struct constant_bank {
  __device__ __forceinline__ static std::uint32_t read(std::uint32_t i) {
    return g_constant_table[i];
  }
};

/// The table's contents on the host: made once, alive while asynchronous copies read it.
const std::vector<std::uint32_t>& host_table() {
  static const std::vector<std::uint32_t> table = [] {
    std::vector<std::uint32_t> words(kConstantTableWords);
    for (std::uint32_t w = 0; w < kConstantTableWords; ++w) words[w] = kInputPattern(w);
    return words;
  }();
  return table;
}

/// Launches timed apart for the warp-load rate (after the timed run: the rate beside the bytes).
constexpr int kRateLaunches = 4;

/// constant/read/distinct:D/ws:B/path:P, or model/constant/... for the model's calibration.
template <constant_path Path>
bench_case constant_case(environment& env, std::uint32_t distinct, std::uint32_t ws_bytes,
                         bool calibration = false) {
  const std::size_t n = four_waves_of_threads(env, kConstantBlock);
  const constant_walk walk{distinct, ws_bytes / 4};
  const unsigned grid = static_cast<unsigned>(n / kConstantBlock);
  bench_case c;
  const std::vector<name_param> params{
      {"distinct", distinct}, {"ws", ws_bytes}, {"path", name(Path)}};
  c.name = calibration ? bench_name("model", "constant", params)
                       : bench_name("constant", "read", params);
  c.prepare = [](environment& e) {
    if (Path == constant_path::kConstant) {
      GMB_CUDA_CHECK(cudaMemcpyToSymbolAsync(g_constant_table, host_table().data(),
                                             kConstantTableWords * sizeof(std::uint32_t), 0,
                                             cudaMemcpyHostToDevice, e.stream()));
    } else {
      e.in().fill(kInputPattern, e.stream());
    }
    e.out().poison(e.stream());
  };
  auto launch = [=](environment& e) {
    built_once::constant_read<Path, constant_bank><<<grid, kConstantBlock, 0, e.stream()>>>(
        e.in().data<const std::uint32_t>(), e.out().data<std::uint32_t>(), n, walk);
  };
  c.launch = launch;
  c.verify = [=](environment& e) {
    return verify_words(e, e.out(), constant_words{kInputPattern, walk, n}, "out");
  };
  const double warp_loads = double(n / 32) * kConstantLoads;
  c.measured = [=](environment& e) -> measurements {
    e.timer().start(e.stream());
    for (int i = 0; i < kRateLaunches; ++i) launch(e);
    e.timer().stop(e.stream());
    const double seconds = e.timer().seconds() / kRateLaunches;
    return {{"warp_loads_per_ns", warp_loads / (seconds * 1e9)}};
  };
  c.bytes_read = 4.0 * n * kConstantLoads;
  c.bytes_written = 4.0 * n;
  c.cold_l2 = false;  // the table is on chip (or in the L2: 64 KiB at most)
  c.every_flavor = false;
  return c;
}

constexpr std::uint32_t kCurveWs = 1024;                       // the curve's table
constexpr std::uint32_t kLargestWs = kConstantTableWords * 4;  // the whole bank
constexpr std::uint32_t kDistinct[] = {1, 2, 4, 8, 16, 32};

}  // namespace

std::vector<bench_case> constant_calibration_cases(environment& env) {
  // A table of no sweep's size (512 B: within the first level like the curve's 1 KiB), one
  // and 32 distinct words: the serialization's fixed and per-word costs; and the same loop's
  // loads through the L1 (path:global), one line per warp load.
  std::vector<bench_case> cases;
  if (four_waves_of_threads(env, kConstantBlock) == 0) return cases;
  for (std::uint32_t d : {1u, 32u}) {
    cases.push_back(constant_case<constant_path::kConstant>(env, d, kCurveWs / 2, true));
  }
  cases.push_back(constant_case<constant_path::kGlobal>(env, 1, kCurveWs / 2, true));
  // Tables past the SM's constant cache (16 and 32 KiB: the quick sweep runs the whole 64-KiB
  // bank), one word per warp load: how the share of loads sent on to the GPC's constant cache,
  // and their time, grow with the table (docs/model.md).
  for (std::uint32_t ws : {kLargestWs / 4, kLargestWs / 2}) {
    cases.push_back(constant_case<constant_path::kConstant>(env, 1, ws, true));
  }
  return cases;
}

std::vector<bench_case> constant_cases(environment& env, sweep s) {
  std::vector<bench_case> cases;
  if (four_waves_of_threads(env, kConstantBlock) == 0) return cases;
  const bool full = s == sweep::kFull;
  for (std::uint32_t d : kDistinct)
    cases.push_back(constant_case<constant_path::kConstant>(env, d, kCurveWs));
  // The same loads from global memory (coalesced: one sector whatever the distinct count);
  // quick: the broadcast and 32 words.
  for (std::uint32_t d : kDistinct) {
    if (!full && d != 1 && d != 32) continue;
    cases.push_back(constant_case<constant_path::kGlobal>(env, d, kCurveWs));
    cases.push_back(constant_case<constant_path::kLdg>(env, d, kCurveWs));
  }
  // Working sets past the constant cache's first level; quick: the whole bank, uniform loads.
  for (std::uint32_t ws = 2 * kCurveWs; ws <= kLargestWs; ws *= 2) {
    if (!full && ws != kLargestWs) continue;
    cases.push_back(constant_case<constant_path::kConstant>(env, 1, ws));
    if (full) cases.push_back(constant_case<constant_path::kConstant>(env, 32, ws));
  }
  return cases;
}

}  // namespace gmb
