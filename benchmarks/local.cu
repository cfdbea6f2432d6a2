// local family (kernels/local.cuh): per-thread arrays in local memory indexed the same across
// the warp or per lane, beside the control that stays in registers; a spill forced by a
// 32-register bound beside the same kernel without it. Four waves of full SMs; hot (local
// memory lives in L1 and L2; no flush). Bytes: global 4 read + 4 written per thread, plus the
// array's words written and read (local_bytes); the spill pair counts the global words only.
// Counters: registers_per_thread, local_bytes_per_thread (the compiler's local frame),
// resident_blocks_per_sm, local_bytes; the model's model_warp_instructions and
// model_local_store_lines, their loop's trips counted. Names: local/array/index:I/size:S,
// local/spill/live:64/regs:R; the calibration's model/local/spill/live:64/regs:32/rounds:8.
#include <algorithm>
#include <string>
#include <vector>

#include "benchmarks/builders/residency.cuh"
#include "benchmarks/families.hpp"
#include "gmb/naming.hpp"
#include "kernels/local.cuh"

namespace gmb {

namespace {

/// Rounds of the spill kernel's loop (a run-time argument: the loop stays a loop).
constexpr unsigned kSpillRounds = 16;

/// What the compiler made of a kernel, as counters.
template <class Kernel>
measurements kernel_counters(Kernel* kernel) {
  cudaFuncAttributes attributes{};
  GMB_CUDA_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel)));
  return {{"registers_per_thread", attributes.numRegs},
          {"local_bytes_per_thread", double(attributes.localSizeBytes)},
          {"resident_blocks_per_sm", resident_blocks(kernel, kLocalBlock, 0)}};
}

/// Input filled, output poisoned, out checked against `expected`, hot, default flavor only;
/// the kernel's loop (its SASS's) runs `loop_trips` times.
template <class Words, class Kernel, class... Args>
bench_case local_case(std::string name, std::size_t n, Kernel* kernel, const Words& expected,
                      int loop_trips, Args... args) {
  const unsigned grid = static_cast<unsigned>(n / kLocalBlock);
  bench_case c;
  c.name = std::move(name);
  c.prepare = fill_input_poison_output;
  c.launch = [=](environment& e) {
    kernel<<<grid, kLocalBlock, 0, e.stream()>>>(e.in().data<const std::uint32_t>(),
                                                 e.out().data<std::uint32_t>(), n, args...);
  };
  c.kernel = kernel_id(kernel);
  c.loop_trips = loop_trips;
  c.verify = [=](environment& e) { return verify_words(e, e.out(), expected, "out"); };
  const measurements counters = kernel_counters(kernel);
  c.measured = [counters](environment&) { return counters; };
  c.bytes_read = c.bytes_written = 4.0 * n;
  c.cold_l2 = false;
  c.every_flavor = false;
  return c;
}

template <local_index Index, unsigned Size>
bench_case array_case(environment& env) {
  const std::size_t n = four_waves_of_threads(env, kLocalBlock);
  const local_walk walk{Index, Size, 0};
  bench_case c = local_case(bench_name("local", "array", {{"index", name(Index)}, {"size", Size}}),
                            n, built_once::local_array<Index, Size>,
                            local_array_words{kInputPattern, walk, n},
                            Index == local_index::kStatic ? 1 : kLocalReads / kLocalReadUnroll,
                            walk);
  const double local_bytes = 4.0 * n * (Size + kLocalReads);
  c.bytes_read += 4.0 * n * kLocalReads;
  c.bytes_written += 4.0 * n * Size;
  c.measured = [counters = c.measured, local_bytes](environment& e) {
    measurements m = counters(e);
    m.emplace_back("local_bytes", local_bytes);
    return m;
  };
  return c;
}

/// local/spill/live:64/regs:R, or for the model's calibration
/// model/local/spill/live:64/regs:R/rounds:K (K rounds where the family runs kSpillRounds).
template <unsigned MaxRegisters>
bench_case spill_case(environment& env, unsigned rounds = kSpillRounds) {
  const std::size_t n = four_waves_of_threads(env, kLocalBlock);
  const long long regs = MaxRegisters;
  std::vector<name_param> params{{"live", kSpillLive}, {"regs", regs}};
  if (rounds != kSpillRounds) params.emplace_back("rounds", rounds);
  const bool calibration = rounds != kSpillRounds;
  return local_case(calibration ? bench_name("model", "local/spill", params)
                                : bench_name("local", "spill", params),
                    n, built_once::local_spill<MaxRegisters>, spill_words{kInputPattern, rounds, n},
                    int(rounds), rounds);
}

template <unsigned Size>
void add_arrays(environment& env, std::vector<bench_case>& cases) {
  cases.push_back(array_case<local_index::kStatic, Size>(env));
  cases.push_back(array_case<local_index::kUniform, Size>(env));
  cases.push_back(array_case<local_index::kLane, Size>(env));
}

}  // namespace

std::vector<bench_case> local_calibration_cases(environment& env) {
  // The spilling kernel at half the family's rounds: the rate at which the L2 takes a warp's
  // local stores (each a 128-B line), for the family's arrays and spills (docs/model.md).
  if (four_waves_of_threads(env, kLocalBlock) == 0) return {};
  std::vector<bench_case> cases;
  cases.push_back(spill_case<kSpillRegisters>(env, kSpillRounds / 2));
  return cases;
}

std::vector<bench_case> local_cases(environment& env, sweep s) {
  std::vector<bench_case> cases;
  if (four_waves_of_threads(env, kLocalBlock) == 0) return cases;
  if (s == sweep::kFull) {
    add_arrays<8>(env, cases);
  } else {  // 8 words indexed at run time: small enough that the compiler keeps them in registers
    cases.push_back(array_case<local_index::kUniform, 8>(env));
  }
  add_arrays<32>(env, cases);
  if (s == sweep::kFull) add_arrays<128>(env, cases);
  cases.push_back(spill_case<kSpillRegisters>(env));
  cases.push_back(spill_case<kAllRegisters>(env));
  return cases;
}

}  // namespace gmb
