// Offset family (kernels/mapped.cuh): a copy whose read, write or both are shifted by `off`
// elements from their natural alignment (CUDA guide's offsetCopy). A warp's 128-B request that
// straddles two lines costs 5 sectors instead of 4. Bytes: read + write n*sizeof(T) each, the
// same n for every offset. One element per thread (the guide's experiment), and four
// (.../ilp:4: every load of a thread in flight at once, so latency no longer sets the pace
// and what remains is the pattern's own cost; quick sweep: f32 copy).
// Names: offset/f32/read/off:3, offset/f32/copy/off:3/ilp:4 (off in elements of the type; f32
// up to 32 elements, f32x2 and f32x4 up to 128 bytes, keeping their natural alignment).
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/builders/mapped_case.cuh"
#include "gmb/element_types.cuh"
#include "gmb/naming.hpp"

namespace gmb {

namespace {

constexpr std::size_t kMaxOffsetBytes = 128;

std::vector<std::size_t> offsets(std::size_t element_bytes, sweep s) {
  const std::size_t max = element_bytes == 4 ? 32 : kMaxOffsetBytes / element_bytes;
  std::vector<std::size_t> list;
  for (std::size_t off = 0; off <= max; ++off) {
    const bool quick_point = off <= 2 || off == max || (off & (off - 1)) == 0 || off == max - 1;
    if (s == sweep::kFull || quick_point) list.push_back(off);
  }
  return list;
}

template <class T, unsigned Ilp>
void add_ops(environment& env, std::size_t threads, std::size_t off, bool all_ops,
             std::vector<bench_case>& cases) {
  const offset_map shifted{off}, aligned{0};
  const std::string type = element_traits<T>::kName;
  auto name = [&](const char* op) {
    const name_param shift("off", static_cast<long long>(off));
    return Ilp == 1 ? bench_name("offset", type + "/" + op, {shift})
                    : bench_name("offset", type + "/" + op, {shift, name_param("ilp", Ilp)});
  };
  if (all_ops) {
    cases.push_back(
        mapped_case<T, cache_op::kDefault, Ilp>(env, name("read"), threads, shifted, aligned));
    cases.push_back(
        mapped_case<T, cache_op::kDefault, Ilp>(env, name("write"), threads, aligned, shifted));
  }
  cases.push_back(
      mapped_case<T, cache_op::kDefault, Ilp>(env, name("copy"), threads, shifted, shifted));
}

/// Equal work at every offset: the array's elements of T less room for the largest shift, in
/// whole blocks.
template <class T>
std::size_t offset_threads(const environment& env) {
  const std::size_t n = env.array_bytes() / sizeof(T);
  return (n - kMaxOffsetBytes / sizeof(T)) / kMappedBlock * kMappedBlock;
}

template <class T>
void add_type(environment& env, sweep s, std::vector<bench_case>& cases) {
  const std::size_t threads = offset_threads<T>(env);
  for (std::size_t off : offsets(sizeof(T), s)) add_ops<T, 1>(env, threads, off, true, cases);
  // Four elements per thread: the pattern's cost with latency hidden. Quick: f32 copy (the
  // guide's experiment).
  if (s == sweep::kFull || sizeof(T) == 4) {
    for (std::size_t off : offsets(sizeof(T), s)) {
      add_ops<T, 4>(env, threads, off, s == sweep::kFull, cases);
    }
  }
}

}  // namespace

std::vector<bench_case> offset_calibration_cases(environment& env) {
  // model/offset/f32/copy/off:3/ilp:4: the family's copy at an offset the quick sweep does not
  // run, four per thread: loads and stores 12 B off their sectors (each warp store 5 sectors,
  // two of them in part) at the DRAM's pace: what such stores cost it
  std::vector<bench_case> cases;
  cases.push_back(mapped_case<float, cache_op::kDefault, 4>(
      env, bench_name("model", "offset/f32/copy", {{"off", 3}, {"ilp", 4}}),
      offset_threads<float>(env), offset_map{3}, offset_map{3}));
  return cases;
}

std::vector<bench_case> offset_cases(environment& env, sweep s) {
  std::vector<bench_case> cases;
  add_type<float>(env, s, cases);
  add_type<float2>(env, s, cases);
  add_type<float4>(env, s, cases);
  return cases;
}

}  // namespace gmb
