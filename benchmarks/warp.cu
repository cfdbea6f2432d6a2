// Warp patterns (kernels/mapped.cuh), f32, one element per thread, coalesced writes:
// warp/broadcast (a warp's 32 lanes read one word), warp/permute_segment (lanes permuted
// within their 128-B segment), warp/permute_across (32x32 tiles transposed: a request spans
// 32 segments), and gather/random, scatter/random through an index table holding a fixed
// pseudo-random permutation of 2^k elements (built once, untimed; its reads are counted).
// Bytes: read + write threads*4, plus threads*4 of indices for gather and scatter.
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/builders/mapped_case.cuh"
#include "gmb/naming.hpp"

namespace gmb {

namespace {
constexpr std::uint32_t kPermutationSeed = 0x2545F491u;
}  // namespace

std::vector<bench_case> warp_cases(environment& env, sweep) {
  std::vector<bench_case> cases;
  const std::size_t n = env.array_bytes() / sizeof(float) / 1024 * 1024;  // whole 32x32 tiles
  const offset_map same{0};
  cases.push_back(mapped_case<float, cache_op::kDefault>(env, bench_name("warp", "broadcast"), n,
                                                         warp_broadcast_map{}, same));
  cases.push_back(mapped_case<float, cache_op::kDefault>(env, bench_name("warp", "permute_segment"),
                                                         n, lane_permute_map{}, same));
  cases.push_back(mapped_case<float, cache_op::kDefault>(env, bench_name("warp", "permute_across"),
                                                         n, tile_transpose_map{}, same));

  // The largest power of two of elements that fits the arrays; its index table, once.
  unsigned bits = 2;
  while ((std::size_t(2) << bits) <= n && bits < 31) ++bits;
  const std::size_t elements = std::size_t(1) << bits;
  const hash_permutation permutation{bits, kPermutationSeed};
  const table_map random{env.index_table(permutation), permutation};
  const auto index_reads = predict_traffic(same, elements, 4, access_kind::kLoad);
  for (bool gather : {true, false}) {
    bench_case c = gather ? mapped_case<float, cache_op::kDefault>(
                                env, bench_name("gather", "random"), elements, random, same)
                          : mapped_case<float, cache_op::kDefault>(
                                env, bench_name("scatter", "random"), elements, same, random);
    c.bytes_read += 4.0 * elements;
    c.model = *c.model + index_reads;
    cases.push_back(std::move(c));
  }
  return cases;
}

/// The calibration's translation probe (model_probes.cu): 2^17 lines 16 KiB apart over 2 GiB,
/// read by 2^24 threads: past the first pass every load finds its line in the L2, on one of
/// 1,024 pages, so the loads wait for the address translation, not DRAM. DRAM reads the set
/// once (the windows of the traffic model would see every load miss).
std::vector<bench_case> translation_calibration_cases(environment& env) {
  constexpr unsigned kBits = 17;
  constexpr std::size_t kSpacing = 4096;  // elements
  constexpr std::size_t kThreads = std::size_t(1) << 24;
  const spread_lines_map spread{{kBits, kPermutationSeed}, kSpacing};
  const long long span = static_cast<long long>(kSpacing * sizeof(float)) << kBits;
  bench_case c = mapped_case<float, cache_op::kDefault>(
      env, bench_name("model", "translation", {{"lines", 1LL << kBits}, {"span", span}}), kThreads,
      spread, offset_map{0});
  traffic_prediction loads = predict_traffic(spread, kThreads, sizeof(float), access_kind::kLoad);
  loads.dram_bytes = double(std::size_t(1) << kBits) * kDramChunkBytes;
  c.model = loads + predict_traffic(offset_map{0}, kThreads, sizeof(float), access_kind::kStore);
  std::vector<bench_case> cases;
  cases.push_back(std::move(c));
  return cases;
}

}  // namespace gmb
