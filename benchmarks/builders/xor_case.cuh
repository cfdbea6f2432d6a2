#pragma once
// One helper builds every benchmark whose kernel writes, for each of n threads, the xor of the
// input words it reads (aos/soa, reuse, cache_op): input filled, output poisoned, every output
// word checked against the same map, one coalesced 4-B store per thread in the model.
#include <cstddef>
#include <functional>
#include <string>

#include "benchmarks/harness/harness.cuh"
#include "gmb/mapped_check.cuh"
#include "gmb/pattern.cuh"

namespace gmb {

template <class Map>
bench_case xor_case(std::string name, std::function<void(environment&)> launch,
                    const mapped_xor_words<Map>& expected, const traffic_prediction& load_model,
                    double read_bytes, const void* kernel = nullptr) {
  bench_case c;
  c.name = std::move(name);
  c.prepare = fill_input_poison_output;
  c.launch = std::move(launch);
  c.kernel = kernel;
  c.verify = [expected](environment& e) { return verify_words(e, e.out(), expected, "out"); };
  c.bytes_read = read_bytes;
  c.bytes_written = 4.0 * expected.n;
  c.model = load_model + predict_traffic(offset_map{0}, expected.n, 4, access_kind::kStore);
  return c;
}

}  // namespace gmb
