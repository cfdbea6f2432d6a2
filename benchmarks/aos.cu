// Registration of the AoS/SoA family (kernels/aos.cuh): structures s8, p12 (packed 12 B),
// a12 (12 B padded to 16), s16, s32, s64; names aos/p12/fields:one, aos/p12/fields:all,
// soa/p12/fields:one, soa/p12/fields:all, aos_staged/p12/fields:all. The same input words
// serve both layouts: structure t is words t*W.. (AoS), field f of t is word f*n + t (SoA).
#include <functional>
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/builders/xor_case.cuh"
#include "gmb/mapped_check.cuh"
#include "gmb/naming.hpp"
#include "gmb/pattern.cuh"
#include "kernels/aos.cuh"

namespace gmb {

namespace {

/// The load width the compiler uses for a whole structure (its alignment, at most 16 B).
template <class S>
constexpr unsigned kLoadBytes = alignof(S) < 16 ? alignof(S) : 16;

template <class S>
void add_struct(environment& env, const char* name, std::vector<bench_case>& cases) {
  constexpr unsigned kW = kWordsPerStruct<S>, kF = kFields<S>, kLoad = kLoadBytes<S>;
  // Whole blocks of structures (the staged kernel needs them); the same n for every variant.
  const std::size_t n = env.array_bytes() / sizeof(S) / kAosBlock * kAosBlock;
  const unsigned grid = static_cast<unsigned>(n / kAosBlock);
  const double one = 4.0 * n, all = 4.0 * kF * n;
  auto out = [](environment& e) { return e.out().data<std::uint32_t>(); };
  auto structs = [](environment& e) { return e.in().data<const S>(); };
  auto fields = [](environment& e) { return e.in().data<const float>(); };
  const mapped_xor_words<aos_map> aos_one{kInputPattern, {kW, 1}, n};
  const mapped_xor_words<aos_map> aos_all{kInputPattern, {kW, kF}, n};
  const mapped_xor_words<soa_map> soa_one{kInputPattern, {n, 1}, n};
  const mapped_xor_words<soa_map> soa_all{kInputPattern, {n, kF}, n};
  // A whole structure arrives in loads of kLoad bytes: sizeof(S) / kLoad of them per thread.
  const aos_map whole{sizeof(S) / kLoad, static_cast<unsigned>(sizeof(S) / kLoad)};

  cases.push_back(xor_case(
      bench_name("aos", name, {{"fields", "one"}}),
      [=](environment& e) {
        aos_one_field<S, cache_op::kDefault>
            <<<grid, kAosBlock, 0, e.stream()>>>(structs(e), out(e), n);
      },
      aos_one, predict_traffic(aos_map{kW, 1}, n, 4, access_kind::kLoad), one,
      kernel_id(aos_one_field<S, cache_op::kDefault>)));
  cases.push_back(xor_case(
      bench_name("aos", name, {{"fields", "all"}}),
      [=](environment& e) {
        aos_all_fields<S><<<grid, kAosBlock, 0, e.stream()>>>(structs(e), out(e), n);
      },
      aos_all, predict_traffic(whole, n, kLoad, access_kind::kLoad), all,
      kernel_id(aos_all_fields<S>)));
  cases.push_back(xor_case(
      bench_name("aos_staged", name, {{"fields", "all"}}),
      [=](environment& e) {
        aos_staged<S><<<grid, kAosBlock, 0, e.stream()>>>(structs(e), out(e), n);
      },
      aos_all, predict_traffic(coalesced_map<kAosBlock, kW>{}, n, 4, access_kind::kLoad), all,
      kernel_id(aos_staged<S>)));
  cases.push_back(xor_case(
      bench_name("soa", name, {{"fields", "one"}}),
      [=](environment& e) {
        soa_fields<1, cache_op::kDefault><<<grid, kAosBlock, 0, e.stream()>>>(fields(e), out(e), n);
      },
      soa_one, predict_traffic(soa_map{n, 1}, n, 4, access_kind::kLoad), one,
      kernel_id(soa_fields<1, cache_op::kDefault>)));
  cases.push_back(xor_case(
      bench_name("soa", name, {{"fields", "all"}}),
      [=](environment& e) {
        soa_fields<kF, cache_op::kDefault>
            <<<grid, kAosBlock, 0, e.stream()>>>(fields(e), out(e), n);
      },
      soa_all, predict_traffic(soa_map{n, kF}, n, 4, access_kind::kLoad), all,
      kernel_id(soa_fields<kF, cache_op::kDefault>)));
}

/// model/mix/f32/reads:K[/writes:W]: K arrays of f32 read, W written (one unless named), each
/// coalesced (the SoA kernel over K fields, each output the xor of K / W of them): what DRAM
/// gives a stream of reads with a write share of W / (K + W).
template <unsigned K, unsigned W = 1>
bench_case mix_case(environment& env) {
  const std::size_t n = env.array_bytes() / (4 * K) / kAosBlock * kAosBlock;
  const unsigned grid = static_cast<unsigned>(n / kAosBlock);
  auto kernel = soa_fields<K, cache_op::kDefault, W>;
  std::vector<name_param> axes{{"reads", K}};
  if (W > 1) axes.emplace_back("writes", W);
  return xor_case(
      bench_name("model", "mix/f32", axes),
      [=](environment& e) {
        kernel<<<grid, kAosBlock, 0, e.stream()>>>(e.in().data<const float>(),
                                                   e.out().data<std::uint32_t>(), n);
      },
      mapped_xor_words<soa_outputs_map>{kInputPattern, {n, K / W}, W * n},
      predict_traffic(soa_map{n, K}, n, 4, access_kind::kLoad), 4.0 * K * n, kernel_id(kernel));
}

}  // namespace

std::vector<bench_case> mix_calibration_cases(environment& env) {
  // write shares of 1/6, 1/8 and 1/13 between the SoA family's (1/2 to 1/17, all its own);
  // 1/5, its s16's, from two outputs: twice its streams (larger shares from two outputs load
  // too few words per thread: latency, not DRAM, bounds them)
  return {mix_case<5>(env), mix_case<7>(env), mix_case<12>(env), mix_case<8, 2>(env)};
}

std::vector<bench_case> aos_cases(environment& env, sweep) {
  std::vector<bench_case> cases;
  add_struct<s8>(env, "s8", cases);
  add_struct<p12>(env, "p12", cases);
  add_struct<a12>(env, "a12", cases);
  add_struct<s16>(env, "s16", cases);
  add_struct<s32>(env, "s32", cases);
  add_struct<s64>(env, "s64", cases);
  return cases;
}

}  // namespace gmb
