// Registration of the re-use family (kernels/reuse.cuh), the patterns where L1 caching of
// plain loads matters, each with the driver's carve-out and with a small L1 (/l1:small; the
// driver's choice measured the same as a large L1:
// results/nvidia-h200/20261122-041333-caching-first-look):
//   reuse/stream                 each thread copies one word: the streaming control
//   reuse/stencil/r:R            1-D stencil of radius 1, 2, 4: 2R+1 overlapping reads
//   reuse/reread/d:D             each word read twice, the second read shifted by D words
//                                (1: misaligned by 4 B; 32: the next warp's words)
//   reuse/aos/bytes:B            all fields of 16-, 32-, 64-B structures, one 4-B load each
//   reuse/gather/window:B        a fixed random permutation within windows of B bytes (1 KiB:
//                                one block re-uses the lines; 8 KiB: eight blocks)
// Bytes: the distinct words read, plus one word written per thread.
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/builders/reuse_case.cuh"
#include "gmb/naming.hpp"

namespace gmb {

namespace {

constexpr std::uint32_t kWindowSeed = 0x6C8E9CF5u;

template <unsigned Radius>
void add_stencil(environment& env, l1_carveout l1, std::vector<bench_case>& cases) {
  cases.push_back(reuse_case<2 * Radius + 1>(
      env, bench_name("reuse", "stencil", {{"r", Radius}}) + carveout_suffix(l1),
      window_map{2 * Radius + 1, 1}, 1, l1));
}

template <unsigned Bytes>
void add_aos(environment& env, l1_carveout l1, std::vector<bench_case>& cases) {
  constexpr unsigned kWords = Bytes / 4;
  cases.push_back(
      reuse_case<kWords>(env, bench_name("reuse", "aos", {{"bytes", Bytes}}) + carveout_suffix(l1),
                         aos_map{kWords, kWords}, 1, l1));
}

void add_gather(environment& env, unsigned window_bytes, l1_carveout l1,
                std::vector<bench_case>& cases) {
  unsigned bits = 0;
  while ((4u << bits) < window_bytes) ++bits;
  cases.push_back(reuse_case<1>(
      env, bench_name("reuse", "gather", {{"window", window_bytes}}) + carveout_suffix(l1),
      window_permute_map{{bits, kWindowSeed}}, std::size_t(1) << bits, l1));
}

}  // namespace

std::vector<bench_case> reuse_cases(environment& env, sweep) {
  std::vector<bench_case> cases;
  for (l1_carveout l1 : {l1_carveout::kUnset, l1_carveout::kSmall}) {
    const std::string suffix = carveout_suffix(l1);
    cases.push_back(
        reuse_case<1>(env, bench_name("reuse", "stream") + suffix, window_map{1, 1}, 1, l1));
    add_stencil<1>(env, l1, cases);
    add_stencil<2>(env, l1, cases);
    add_stencil<4>(env, l1, cases);
    for (unsigned d : {1u, 32u}) {
      cases.push_back(reuse_case<2>(env, bench_name("reuse", "reread", {{"d", d}}) + suffix,
                                    window_map{2, d}, 1, l1));
    }
    add_aos<16>(env, l1, cases);
    add_aos<32>(env, l1, cases);
    add_aos<64>(env, l1, cases);
    add_gather(env, 1024, l1, cases);
    add_gather(env, 8192, l1, cases);
  }
  return cases;
}

}  // namespace gmb
