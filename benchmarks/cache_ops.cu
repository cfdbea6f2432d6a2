// Per-instruction cache operators (include/gmb/cache_op.cuh) compared in one binary, through
// kernels/reuse.cuh: a streaming copy (one word per thread), a re-use pattern (stencil of
// radius 2) and a strided gather (every 4th word), each with every load operator and plain
// stores, and with every store operator and plain loads. Explicit operators compile to the
// same SASS in every flavor (the SASS test checks it); only ld:default follows -dlcm.
// Names: cache_op/copy/ld:cg/st:default, cache_op/stencil/ld:default/st:cs.
// Bytes: the distinct words read plus one word written per thread.
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/builders/reuse_case.cuh"
#include "gmb/naming.hpp"

namespace gmb {

namespace {

template <unsigned Slots, class Map, cache_op... Loads>
void add_loads(environment& env, const char* pattern, const Map& map,
               std::vector<bench_case>& cases) {
  (cases.push_back(reuse_case<Slots, Loads, store_op::kDefault>(
       env, bench_name("cache_op", pattern, {{"ld", name(Loads)}, {"st", "default"}}), map, 1)),
   ...);
}

template <unsigned Slots, class Map, store_op... Stores>
void add_stores(environment& env, const char* pattern, const Map& map,
                std::vector<bench_case>& cases) {
  (cases.push_back(reuse_case<Slots, cache_op::kDefault, Stores>(
       env, bench_name("cache_op", pattern, {{"ld", "default"}, {"st", name(Stores)}}), map, 1)),
   ...);
}

template <unsigned Slots, class Map>
void add_pattern(environment& env, const char* pattern, const Map& map,
                 std::vector<bench_case>& cases) {
  add_loads<Slots, Map, cache_op::kDefault, cache_op::kLdg, cache_op::kCa, cache_op::kCg,
            cache_op::kCs, cache_op::kLu, cache_op::kCv>(env, pattern, map, cases);
  add_stores<Slots, Map, store_op::kCg, store_op::kCs, store_op::kWt>(env, pattern, map, cases);
}

}  // namespace

std::vector<bench_case> cache_op_cases(environment& env, sweep) {
  std::vector<bench_case> cases;
  add_pattern<1>(env, "copy", window_map{1, 1}, cases);
  add_pattern<5>(env, "stencil", window_map{5, 1}, cases);
  add_pattern<1>(env, "gather", strided_map{4}, cases);
  return cases;
}

}  // namespace gmb
