// Reduction ladder (kernels/reduce.cuh, gmb/reduce_plan.hpp): reduce/f32/<rung> and
// reduce/i32/<rung>, the sum of the whole input array (32x the L2 by default), every pass until
// one value timed; and the library in the same run: reduce/<type>/cub (cub::DeviceReduce::Sum,
// its temporary storage made once for the family). The counter `rung` orders the ladder (CUB
// has none). Verified exactly on every run: the inputs are small integers (reduce_plan.hpp),
// so the f32 sum is exact too; the host's sum is computed once per process. Quick: seven rungs
// of f32 (in_quick_sweep), the top rung of i32 and CUB for both; full: every rung of both.
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks/cub_sum.hpp"
#include "benchmarks/builders/residency.cuh"
#include "benchmarks/families.hpp"
#include "gmb/naming.hpp"
#include "kernels/reduce.cuh"

namespace gmb {

namespace {

constexpr std::uint32_t kReduceSeed = 0x5EED5u;

template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "f32" : "i32";
}

/// The family's shared state: CUB's temporary storage and the host's sums, made once.
struct reduce_state {
  device_buffer cub_temp;
  std::map<std::size_t, long long> sums;
  long long expected(std::size_t n) {
    auto it = sums.find(n);
    if (it == sums.end()) it = sums.emplace(n, reduce_expected_sum(n, kReduceSeed)).first;
    return it->second;
  }
};

/// "" when out's result word holds the exact sum of the input.
template <class T>
std::string check_sum(environment& env, reduce_state& state) {
  const std::size_t n = env.array_bytes() / sizeof(T);
  const std::uint32_t word = env.out().copy_words_to_host(kReduceResultWord, 1, env.stream())[0];
  T got;
  std::memcpy(&got, &word, sizeof got);
  const long long expected = state.expected(n);
  if (static_cast<double>(got) == static_cast<double>(expected)) return "";
  std::ostringstream msg;
  msg << "sum is " << got << ", expected " << expected << " (exact: small integers)";
  return msg.str();
}

template <class T>
bench_case reduce_case(environment& env, const std::shared_ptr<reduce_state>& state,
                       const std::string& op, std::function<void(environment&)> launch, int rung) {
  bench_case c;
  c.name = bench_name("reduce", std::string(type_name<T>()) + "/" + op);
  c.prepare = [](environment& e) {
    e.in().fill(reduce_words{kReduceSeed, std::is_same_v<T, float>}, e.stream());
    e.out().poison(e.stream());
    GMB_CUDA_CHECK(cudaMemsetAsync(e.out().data<unsigned>() + kReduceTicketWord, 0,
                                   sizeof(unsigned), e.stream()));
  };
  c.launch = std::move(launch);
  c.verify = [state](environment& e) { return check_sum<T>(e, *state); };
  c.bytes_read = static_cast<double>(env.array_bytes());
  if (rung >= 0) {
    c.measured = [rung](environment&) { return measurements{{"rung", rung}}; };
  }
  return c;
}

/// The quick sweep's rungs (the default run's time budget): one per lesson; the bank-conflict
/// rung, the complete unroll and the shuffles (each within 1% of its predecessor on an H200)
/// only in the full sweep.
bool in_quick_sweep(reduce_rung r) {
  return r != reduce_rung::kInterleavedBank && r != reduce_rung::kUnrollComplete &&
         r != reduce_rung::kShuffle;
}

template <class T>
void add_ladder(std::vector<bench_case>& cases, environment& env,
                const std::shared_ptr<reduce_state>& state, bool every_rung, bool quick) {
  const std::size_t n = env.array_bytes() / sizeof(T);
  const std::size_t resident = std::size_t(env.device().sms) * (2048 / kReduceBlock);
  for (int r = every_rung ? 0 : kReduceRungs - 1; r < kReduceRungs; ++r) {
    const auto rung = static_cast<reduce_rung>(r);
    if (quick && !in_quick_sweep(rung)) continue;
    const std::vector<reduce_pass> passes = reduce_passes(rung, n, resident);
    cases.push_back(reduce_case<T>(
        env, state, reduce_rung_name(rung),
        [rung, passes](environment& e) {
          for (const reduce_pass& p : passes) {
            launch_reduce_pass<T>(rung, p, e.in().data<const T>(), e.out().data<T>(),
                                  e.out().data<unsigned>() + kReduceTicketWord, e.stream());
          }
        },
        r));
  }
  // CUB's temporary storage: sized here (a host-side query), made in prepare, so the timed
  // launch is the reduction alone.
  std::size_t temp_bytes = 0;
  GMB_CUDA_CHECK(cub_sum<T>(nullptr, temp_bytes, static_cast<const T*>(nullptr),
                            static_cast<T*>(nullptr), n, env.stream()));
  bench_case cub = reduce_case<T>(
      env, state, "cub",
      [state, n, temp_bytes](environment& e) {
        std::size_t bytes = temp_bytes;
        GMB_CUDA_CHECK(cub_sum<T>(state->cub_temp.data<void>(), bytes, e.in().data<const T>(),
                                  e.out().data<T>() + kReduceResultWord, n, e.stream()));
      },
      -1);
  cub.prepare = [fill = cub.prepare, state, temp_bytes](environment& e) {
    fill(e);
    if (state->cub_temp.bytes() < temp_bytes) {
      state->cub_temp = device_buffer((temp_bytes + 15) / 16 * 16);
    }
  };
  cases.push_back(std::move(cub));
}

/// Words of the output after a tree probe: the block sum `bits` in the first `blocks`, the
/// poison after them.
struct block_sums {
  std::uint32_t bits;
  std::size_t blocks;
  GMB_HD std::uint32_t operator()(std::size_t w) const { return w < blocks ? bits : kPoisonWord; }
};

/// model/reduce/f32/<rung>/loads:none/bpsm:K: the rung's tree alone (kernels/reduce.cuh:
/// reduce_tree_alone), K blocks per SM at a time (dynamic shared memory no thread touches
/// limits them): with all the SM holds (`per_sm` 0), as many blocks as the rung's first pass,
/// so the SM's trees share its issue slots as the rung's do; at 1, 256 blocks per SM, so each
/// tree runs alone: its own time. Each thread's partial is one element of 1 (two for the rungs
/// that add two during the load); every block's sum verified.
template <reduce_rung R>
std::optional<bench_case> tree_probe(environment& env, unsigned per_sm) {
  constexpr bool kPairs = R >= reduce_rung::kFirstAdd;
  auto kernel = reduce_tree_alone<float, R>;
  if (per_sm == 0) per_sm = unsigned(resident_blocks(kernel, kReduceBlock, 0));  // all it holds
  const std::optional<std::size_t> smem = residency_smem(kernel, kReduceBlock, per_sm);
  if (!smem) return std::nullopt;
  const std::size_t first_pass =
      env.array_bytes() / sizeof(float) / (kReduceBlock * (kPairs ? 2 : 1));
  const std::size_t blocks =
      per_sm == 1 ? std::size_t(env.device().sms) * kReduceBlock : first_pass;
  const float value = kPairs ? 2.0f : 1.0f;
  const float sum = value * kReduceBlock;
  std::uint32_t bits;
  std::memcpy(&bits, &sum, sizeof bits);
  const std::size_t bytes = *smem;
  bench_case c;
  c.name = "model/" + bench_name("reduce", std::string("f32/") + reduce_rung_name(R),
                                 {{"loads", "none"}, {"bpsm", per_sm}});
  c.prepare = [](environment& e) { e.out().poison(e.stream()); };
  c.launch = [=](environment& e) {
    kernel<<<static_cast<unsigned>(blocks), kReduceBlock, bytes, e.stream()>>>(
        e.out().data<float>(), value);
  };
  c.verify = [bits, blocks](environment& e) {
    return verify_words(e, e.out(), block_sums{bits, blocks}, "out");
  };
  c.bytes_written = static_cast<double>(blocks * sizeof(float));
  c.cold_l2 = false;
  return c;
}

}  // namespace

std::vector<bench_case> reduce_calibration_cases(environment& env) {
  std::vector<bench_case> cases;
  for (unsigned per_sm : {0u, 1u}) {  // all the SM holds (8 of 256 threads on Hopper), one
    for (auto c : {tree_probe<reduce_rung::kInterleavedDivergent>(env, per_sm),
                   tree_probe<reduce_rung::kInterleavedBank>(env, per_sm),
                   tree_probe<reduce_rung::kSequential>(env, per_sm),
                   tree_probe<reduce_rung::kFirstAdd>(env, per_sm),
                   tree_probe<reduce_rung::kUnrollLastWarp>(env, per_sm),
                   tree_probe<reduce_rung::kUnrollComplete>(env, per_sm)}) {
      if (c) cases.push_back(std::move(*c));
    }
  }
  return cases;
}

std::vector<bench_case> reduce_cases(environment& env, sweep s) {
  auto state = std::make_shared<reduce_state>();
  std::vector<bench_case> cases;
  const bool full = s == sweep::kFull;
  add_ladder<float>(cases, env, state, true, !full);
  add_ladder<int>(cases, env, state, full, !full);
  return cases;
}

}  // namespace gmb
