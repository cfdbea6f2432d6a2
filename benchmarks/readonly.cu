// The read-only data path (CUDA guide, "Read-Only Data Cache"): the xor-of-reads kernel of
// kernels/reuse.cuh through three loads, on the patterns where they can differ:
//   ld:default   plain loads, what -dlcm changes (L1-cached by default and in ca, not in cg)
//   ld:ldg       __ldg: LDG.E.CONSTANT, cached in L1 in every build
//   ld:restrict  plain loads from `const __restrict__` pointers: the compiler's own choice
// Patterns: offset/off:1 (misaligned), stride/s:S, aos/bytes:12 (one field of a 12-B struct),
// gather/window:B (a fixed random order within B-byte windows), stencil/r:R (2R+1 overlapping
// reads). Names: readonly/stencil/r:2/ld:ldg. Bytes: the distinct words read, plus one word
// written per thread (kernels/reuse.cuh). Every flavor: the point is what ca and cg change.
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/builders/reuse_case.cuh"
#include "gmb/naming.hpp"

namespace gmb {

namespace {

constexpr std::uint32_t kGatherSeed = 0x2F6B1D37u;

/// The pattern (its name without the load) read three ways: ld:default, ld:ldg, ld:restrict.
template <unsigned Slots, class Map>
void add_loads(environment& env, const std::string& pattern, const Map& map, std::size_t multiple,
               std::vector<bench_case>& cases) {
  auto name = [&](const char* load) { return pattern + "/ld:" + load; };
  cases.push_back(reuse_case<Slots, cache_op::kDefault>(env, name("default"), map, multiple));
  cases.push_back(reuse_case<Slots, cache_op::kLdg>(env, name("ldg"), map, multiple));
  cases.push_back(xor_reads_case<Slots, Map>(restrict_xor_reads<Slots, Map>, env, name("restrict"),
                                             map, multiple));
}

template <unsigned Radius>
void add_stencil(environment& env, std::vector<bench_case>& cases) {
  add_loads<2 * Radius + 1>(env, bench_name("readonly", "stencil", {{"r", Radius}}),
                            window_map{2 * Radius + 1, 1}, 1, cases);
}

void add_gather(environment& env, unsigned window_bytes, std::vector<bench_case>& cases) {
  unsigned bits = 0;
  while ((4u << bits) < window_bytes) ++bits;
  add_loads<1>(env, bench_name("readonly", "gather", {{"window", window_bytes}}),
               window_permute_map{{bits, kGatherSeed}}, std::size_t(1) << bits, cases);
}

}  // namespace

std::vector<bench_case> readonly_cases(environment& env, sweep s) {
  const bool full = s == sweep::kFull;
  std::vector<bench_case> cases;
  if (full)
    add_loads<1>(env, bench_name("readonly", "offset", {{"off", 1}}), offset_map{1}, 1, cases);
  for (unsigned stride : {2u, 4u, 8u, 32u}) {
    if (!full) continue;
    add_loads<1>(env, bench_name("readonly", "stride", {{"s", stride}}), strided_map{stride}, 1,
                 cases);
  }
  if (full)
    add_loads<1>(env, bench_name("readonly", "aos", {{"bytes", 12}}), aos_map{3, 1}, 1, cases);
  add_gather(env, 1u << 20, cases);  // 1 MiB windows: no L1 holds one, the L2 does
  if (full) add_gather(env, 1u << 13, cases);
  add_stencil<2>(env, cases);
  if (full) {
    add_stencil<1>(env, cases);
    add_stencil<4>(env, cases);
  }
  return cases;
}

}  // namespace gmb
