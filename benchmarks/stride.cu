// Stride family (kernels/mapped.cuh): lanes `s` elements apart, for s = 1..32 and powers of two
// to 1024; variants read (strided read, coalesced write), write (coalesced read, strided write)
// and both. Bytes: read + write 64 MiB each at every s (useful bytes constant), so the strided
// span is 64 MiB * s: up to 64 GiB at s = 1024, which also measures TLB reach. Strides whose
// buffers do not fit in the GPU's free memory are not registered. Every launch gets its own
// L2 flush: at small s the span is about one L2. Also with four elements per thread
// (.../ilp:4, all four loads in flight: the pattern's cost with latency hidden; quick: f32
// read at s = 1 ... 32 in powers of two, 128 and 1024). Names: stride/f32/read/s:8,
// stride/f32/read/s:8/ilp:4. The model family's strided probes are made here:
// model/stride/f32/read/s:12.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/builders/mapped_case.cuh"
#include "gmb/element_types.cuh"
#include "gmb/naming.hpp"

namespace gmb {

namespace {

constexpr std::size_t kUsefulBytes = 64 * kMiB;
constexpr std::size_t kMemoryReserve = 1024 * kMiB;  // left free for the driver and checks
constexpr std::size_t kLongestProbeSpan = 48 * 1024 * kMiB;  // the widest probe's strided bytes
constexpr std::size_t kPastPage = 384;  // probes from this stride (1.5 KiB) on: one side only

std::vector<std::size_t> strides(sweep s) {
  std::vector<std::size_t> list;
  for (std::size_t st = 1; st <= 32; ++st) {
    if (s == sweep::kFull || st <= 4 || (st & (st - 1)) == 0) list.push_back(st);
  }
  for (std::size_t st = 64; st <= 1024; st *= 2) list.push_back(st);
  return list;
}

/// Bytes the strided buffers of a case may take: what the GPU has free, less the reserve.
std::size_t stride_budget() {
  std::size_t free_bytes = 0, total_bytes = 0;
  GMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes > kMemoryReserve ? free_bytes - kMemoryReserve : 0;
}

template <class T>
void add_type(environment& env, sweep s, std::vector<bench_case>& cases) {
  const std::size_t budget = stride_budget();
  const std::size_t threads = kUsefulBytes / sizeof(T);
  const char* type = element_traits<T>::kName;
  const strided_map unit{1};
  for (std::size_t st : strides(s)) {
    const strided_map spread{st};
    const std::size_t span = threads * st * sizeof(T);
    const auto param = {name_param("s", static_cast<long long>(st))};
    auto add = [&](const char* op, const strided_map& read, const strided_map& write,
                   std::size_t strided_arrays, auto ilp) {
      constexpr unsigned kIlp = decltype(ilp)::value;
      // Buffers beyond the environment's arrays are allocated per case; they must fit.
      if (span > env.array_bytes() && strided_arrays * span > budget) return;
      const std::string variant = std::string(type) + "/" + op;
      bench_case c = mapped_case<T, cache_op::kDefault, kIlp>(
          env,
          kIlp == 1 ? bench_name("stride", variant, param)
                    : bench_name("stride", variant, {param.begin()[0], {"ilp", kIlp}}),
          threads, read, write);
      c.launches_per_iteration = 1;
      cases.push_back(std::move(c));
    };
    const std::integral_constant<unsigned, 1> one;
    const std::integral_constant<unsigned, 4> four;
    add("read", spread, unit, 1, one);
    add("write", unit, spread, 1, one);
    add("both", spread, spread, 2, one);
    // Four elements per thread: the pattern's cost with latency hidden. Quick: f32 read at
    // s = 1, 2, 4, 8, 16, 32, 128, 1024.
    const bool quick_ilp =
        sizeof(T) == 4 && (st <= 32 ? (st & (st - 1)) == 0 : st == 128 || st == 1024);
    if (s == sweep::kFull || quick_ilp) add("read", spread, unit, 1, four);
    if (s == sweep::kFull) {
      add("write", unit, spread, 1, four);
      add("both", spread, spread, 2, four);
    }
  }
}

}  // namespace

std::vector<bench_case> stride_calibration_cases(environment& env) {
  // f32 reads, writes and both at steps of 40 B to 768 B that the quick sweep does not run:
  // the DRAM's cost of a step between the ones it runs (its powers of two); reads and writes
  // also at 1.5, 3 and 6 KiB, past a page, where a step costs more than a random access. Those
  // read fewer elements, so that no span passes 48 GiB.
  const std::size_t budget = stride_budget();
  const strided_map unit{1};
  std::vector<bench_case> cases;
  for (std::size_t st : {10, 12, 20, 24, 48, 96, 192, 384, 768, 1536}) {
    const std::size_t threads =
        std::min(kUsefulBytes / sizeof(float), kLongestProbeSpan / (st * sizeof(float)));
    const strided_map spread{st};
    const std::size_t span = threads * st * sizeof(float);
    if (span > env.array_bytes() && span > budget) continue;
    for (const char* op : {"read", "write", "both"}) {
      const std::string side = op;
      const bool both_fits = 2 * span <= env.array_bytes() || 2 * span <= budget;
      if (side == "both" && (st >= kPastPage || !both_fits)) continue;
      bench_case c = mapped_case<float, cache_op::kDefault, 1>(
          env, bench_name("model", "stride/f32/" + side, {{"s", static_cast<long long>(st)}}),
          threads, side == "write" ? unit : spread, side == "read" ? unit : spread);
      c.launches_per_iteration = 1;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::vector<bench_case> stride_cases(environment& env, sweep s) {
  std::vector<bench_case> cases;
  add_type<float>(env, s, cases);
  add_type<double>(env, s, cases);
  return cases;
}

}  // namespace gmb
