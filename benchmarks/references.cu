// In-process references on the same arrays as every other benchmark, measured side by side:
// ref/memcpy_d2d (cudaMemcpyAsync device to device; bytes: read n + write n) and
// ref/memset (cudaMemsetAsync; bytes: write n).
#include "benchmarks/families.hpp"
#include "gmb/naming.hpp"

namespace gmb {

std::vector<bench_case> reference_cases(environment& env, sweep) {
  const double bytes = static_cast<double>(env.array_bytes());
  bench_case memcpy_case;
  memcpy_case.name = bench_name("ref", "memcpy_d2d");
  memcpy_case.prepare = [](environment& e) {
    e.in().fill(kInputPattern, e.stream());
    e.out().poison(e.stream());
  };
  memcpy_case.launch = [](environment& e) {
    GMB_CUDA_CHECK(cudaMemcpyAsync(e.out().data(), e.in().data(), e.array_bytes(),
                                   cudaMemcpyDeviceToDevice, e.stream()));
  };
  memcpy_case.verify = [](environment& e) {
    return verify_words(e, e.out(), kInputPattern, "out");
  };
  memcpy_case.bytes_read = bytes;
  memcpy_case.bytes_written = bytes;

  bench_case memset_case;
  memset_case.name = bench_name("ref", "memset");
  memset_case.prepare = [](environment& e) { e.out().poison(e.stream()); };
  memset_case.launch = [](environment& e) {
    GMB_CUDA_CHECK(cudaMemsetAsync(e.out().data(), kMemsetByte, e.array_bytes(), e.stream()));
  };
  memset_case.verify = [](environment& e) { return verify_words(e, e.out(), kMemsetWords, "out"); };
  memset_case.bytes_written = bytes;

  return {memcpy_case, memset_case};
}

}  // namespace gmb
