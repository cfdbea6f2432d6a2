#include "benchmarks/harness/harness.cuh"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <set>

#include "gmb/sass_paths.hpp"
#include "gmb/sizing.hpp"
#include "gmb/stop_gate.hpp"
#include "gmb/stop_signal.hpp"

namespace gmb {

namespace {

/// Names, not calls: Google Benchmark calls a benchmark once per repetition and while sizing.
std::set<std::string>& failed_names() {
  static std::set<std::string> names;
  return names;
}
std::mutex g_failed_mutex;

void record_failure(benchmark::State& state, const std::string& name, const std::string& why) {
  {
    const std::lock_guard<std::mutex> lock(g_failed_mutex);
    failed_names().insert(name);
  }
  state.SkipWithError(why.c_str());
}

device_info select_device(int device) {
  GMB_CUDA_CHECK(cudaSetDevice(device));
  return query_device(device);
}
}  // namespace

environment::environment(int device, std::size_t array_bytes, int launches_per_iteration)
    : device_(select_device(device)),
      launches_per_iteration_(launches_per_iteration > 0
                                  ? launches_per_iteration
                                  : gmb::launches_per_iteration(array_bytes, device_.l2_bytes)),
      in_(array_bytes),
      out_(array_bytes),
      flush_(device_.l2_bytes),
      probe_(kProbeBytes) {
  GMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  GMB_CUDA_CHECK(cudaMalloc(&counter_, sizeof(*counter_)));
  quiet_probe_seconds_ = probe_seconds();
  for (int i = 0; i < 8; ++i)
    quiet_probe_seconds_ = std::min(quiet_probe_seconds_, probe_seconds());
}

double environment::probe_seconds() {
  timer_.start(stream_);
  for (int i = 0; i < 4; ++i) probe_.poison(stream_);
  timer_.stop(stream_);
  return timer_.seconds();
}

double environment::settle() {
  constexpr double kTolerance = 1.02;  // within 2% of the quiet time
  const auto start = std::chrono::steady_clock::now();
  double waited = 0;
  while (probe_seconds() > kTolerance * quiet_probe_seconds_ && waited < kMaxSettleSeconds) {
    waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return waited;
}

environment::~environment() {
  try {
    release_held();
  } catch (const std::exception&) {  // a destructor must not throw; the process is ending
  }
  cudaFree(counter_);
  cudaStreamDestroy(stream_);
}

std::size_t environment::required_bytes(const device_info& device, std::size_t array_bytes) {
  // in, out, the flush buffer, an index table of at most one array (warp.cu), the probe.
  return 3 * array_bytes + l2_flush::bytes_for(device.l2_bytes) + kProbeBytes;
}

const std::uint32_t* environment::index_table(const hash_permutation& perm) {
  if (index_table_.bytes() == 0 || index_perm_.bits != perm.bits || index_perm_.seed != perm.seed) {
    index_table_ = device_buffer((std::size_t(1) << perm.bits) * sizeof(std::uint32_t));
    index_table_.fill(perm, stream_);
    GMB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    index_perm_ = perm;
  }
  return index_table_.data<const std::uint32_t>();
}

void environment::reset_counter() {
  GMB_CUDA_CHECK(cudaMemsetAsync(counter_, 0, sizeof(*counter_), stream_));
}

unsigned long long environment::read_counter() {
  unsigned long long value = 0;
  GMB_CUDA_CHECK(cudaMemcpyAsync(&value, counter_, sizeof(value), cudaMemcpyDeviceToHost, stream_));
  GMB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return value;
}

void environment::record_health(const std::string& name, const health::window& w) {
  if (w.flags != 0) flagged_[name] |= w.flags;
  const std::string line =
      health::transition_message(last_health_flags_, w.flags, device_.ordinal, name, w.other_pids);
  if (!line.empty()) console_.message(line);
  last_health_flags_ = w.flags;
}

bool environment::hold(const std::string& name, const std::function<void(environment&)>& release) {
  if (name == held_name_) return false;
  const bool released = release_held();
  if (release) {
    held_name_ = name;
    held_release_ = release;
  }
  return released || static_cast<bool>(release);
}

sass_path environment::kernel_path(const void* kernel) {
  if (kernel == nullptr) return {};
  if (!sass_paths_) {
    sass_paths_.emplace();  // no counter, never a failed run, where the listing cannot be read
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    try {
      const int sm = device_.cc_major * 10 + device_.cc_minor;
      if (!error) *sass_paths_ = sass_paths_beside(self.string(), sm);
    } catch (const std::exception&) {
      sass_paths_->clear();
    }
  }
  const char* name = nullptr;
  if (cudaFuncGetName(&name, kernel) != cudaSuccess || name == nullptr) {
    cudaGetLastError();  // leave no sticky error for the case's own checks
    return {};
  }
  const auto found = sass_paths_->find(name);
  return found == sass_paths_->end() ? sass_path{} : found->second;
}

bool environment::release_held() {
  auto release = std::move(held_release_);
  held_release_ = nullptr;
  held_name_.clear();
  if (!release) return false;
  release(*this);
  return true;
}

namespace {

/// Logical bytes (all launches of all iterations), % of peak, and the model's prediction.
void set_counters(benchmark::State& state, environment& env, const bench_case& c, int launches) {
  const double bytes = (c.bytes_read + c.bytes_written) * launches;
  const double iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes * iterations));
  const double peak =
      c.peak_bytes_per_second > 0 ? c.peak_bytes_per_second : env.device().peak_bytes_per_second();
  state.counters["pct_peak"] =
      benchmark::Counter(100.0 * bytes * iterations / peak, benchmark::Counter::kIsRate);
  if (c.model) {
    state.counters["model_sectors_per_req"] = c.model->sectors_per_request();
    // Apart, to sit beside Nsight Compute's load and store counters (scripts/gmb ncu).
    if (c.model->loads.requests > 0) {
      state.counters["model_ld_sectors_per_req"] = c.model->loads.per_request();
    }
    if (c.model->stores.requests > 0) {
      state.counters["model_st_sectors_per_req"] = c.model->stores.per_request();
    }
    state.counters["model_dram_bytes"] = c.model->dram_bytes;
    state.counters["model_efficiency"] = c.model->efficiency();
  }
  const sass_path path = env.kernel_path(c.kernel);
  if (const int instructions = path.executed(c.loop_trips); instructions > 0) {
    state.counters["model_warp_instructions"] = instructions;
  }
  if (const int lines = path.local_store_lines(c.loop_trips); lines > 0) {
    state.counters["model_local_store_lines"] = lines;
  }
}

/// The GPU's state while the benchmark ran (counters exist only where NVML watches it).
void set_health_counters(benchmark::State& state, const health::window& w) {
  state.counters["health_flags"] = w.flags;
  state.counters["health_sm_mhz_min"] = w.sm_mhz_min;
  state.counters["health_mem_mhz_min"] = w.mem_mhz_min;
  state.counters["health_temp_c_max"] = w.temp_c_max;
  state.counters["health_power_w_max"] = w.power_w_max;
}

/// One timed iteration: the flush (DRAM benchmarks, untimed) and the case's own untimed
/// preparation, then `launches` launches between the timer's events; returns their seconds.
double timed_iteration(environment& env, const bench_case& c, int launches) {
  if (c.cold_l2) env.flush().flush(env.stream());
  if (c.before_iteration) c.before_iteration(env);
  env.timer().start(env.stream());
  for (int i = 0; i < launches; ++i) c.launch(env);
  env.timer().stop(env.stream());
  return env.timer().seconds();
}

/// Before timing, launches as the timed loop does until they have taken 2 ms of GPU time (at
/// most 64 launches): module load, first touch of the pages, TLB and clocks settle even for
/// kernels of a few microseconds, whose results otherwise depended on the minimum time.
void warm_up(environment& env, const bench_case& c) {
  constexpr double kWarmUpSeconds = 2e-3;
  constexpr int kMaxLaunches = 64;
  double spent = 0;
  for (int i = 0; i < kMaxLaunches && spent < kWarmUpSeconds; ++i) {
    spent += timed_iteration(env, c, 1);
  }
}

/// Calls the case's release when the run ends, however it ends.
class release_guard {
 public:
  release_guard(environment& env, const bench_case& c) : env_(env), c_(c) {}
  ~release_guard() {
    if (c_.release) c_.release(env_);
  }
  release_guard(const release_guard&) = delete;
  release_guard& operator=(const release_guard&) = delete;

 private:
  environment& env_;
  const bench_case& c_;
};

}  // namespace

std::string run_untimed(environment& env, const bench_case& c, int launches,
                        measurements* measured) {
  const release_guard guard(env, c);
  c.prepare(env);
  for (int i = 0; i < launches; ++i) {
    if (c.cold_l2) env.flush().flush(env.stream());
    if (c.before_iteration) c.before_iteration(env);
    c.launch(env);
  }
  GMB_CUDA_CHECK(cudaGetLastError());
  GMB_CUDA_CHECK(cudaStreamSynchronize(env.stream()));
  const std::string error = c.verify(env);
  if (measured && c.measured && error.empty()) *measured = c.measured(env);
  return error;
}

/// An iteration is one flush (DRAM benchmarks) and then `launches_per_iteration` launches
/// timed together: the iteration time covers all of them, and so do the bytes.
void run_benchmark(benchmark::State& state, environment& env, const bench_case& c) {
  if (skipped_for_stop(state, c.name)) return;
  const int launches =
      c.launches_per_iteration > 0 ? c.launches_per_iteration : env.launches_per_iteration();
  env.console().started(c.name);
  std::optional<health::window> health;
  std::vector<std::pair<std::string, double>> measured;
  try {
    const bool memory_changes = env.hold(c.name, c.release);
    // Google Benchmark calls a case back to back (sizing, then each repetition): the run just
    // before, of the same case on the same memory, warmed it; only the first call warms up.
    const bool warm = !memory_changes && env.last_verified() == c.name;
    env.set_last_verified("");
    c.prepare(env);
    if (memory_changes && env.settle() >= environment::kMaxSettleSeconds) {
      env.console().message("gmembench: warning: " + c.name + ": the GPU did not settle within " +
                            std::to_string(int(environment::kMaxSettleSeconds)) +
                            " s after memory was freed or allocated");
    }
    if (!warm) {
      warm_up(env, c);
      GMB_CUDA_CHECK(cudaGetLastError());
      c.prepare(env);  // poison again: verification must see the timed launches' writes
    }
    if (!c.cold_l2) c.launch(env);  // hot benchmarks start hot, not with what prepare left
    if (env.health()) env.health()->begin();
    for (auto _ : state) state.SetIterationTime(timed_iteration(env, c, launches));
    GMB_CUDA_CHECK(cudaGetLastError());
    GMB_CUDA_CHECK(cudaStreamSynchronize(env.stream()));
    if (env.health()) {
      health = env.health()->end();
      env.record_health(c.name, *health);
    }
    if (c.measured) measured = c.measured(env);
    const std::string error = c.verify(env);
    if (!error.empty()) {
      record_failure(state, c.name, "wrong result: " + error);
      return;
    }
    env.set_last_verified(c.name);
  } catch (const std::exception& e) {
    env.release_held();  // a failed case keeps nothing the next one could trip over
    record_failure(state, c.name, e.what());
    return;
  }
  set_counters(state, env, c, launches);
  if (health) set_health_counters(state, *health);
  for (const auto& [key, value] : measured) state.counters[key] = value;
}

void run_profiled(benchmark::State& state, environment& env, const bench_case& c) {
  if (skipped_for_stop(state, c.name)) return;
  try {
    const release_guard guard(env, c);
    c.prepare(env);
    for (auto _ : state) state.SetIterationTime(timed_iteration(env, c, 1));
    GMB_CUDA_CHECK(cudaGetLastError());
  } catch (const std::exception& e) {
    record_failure(state, c.name, e.what());
    return;
  }
  set_counters(state, env, c, 1);
}

void register_case(environment& env, bench_case c, const registration_options& options) {
  const std::string name = c.name;
  auto body = options.profile ? run_profiled : run_benchmark;
  auto* b = benchmark::RegisterBenchmark(
      name.c_str(), [&env, c = std::move(c), body](benchmark::State& s) { body(s, env, c); });
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  // Nothing else per benchmark: Google Benchmark would append it to the name.
  if (options.profile) b->Iterations(1)->Repetitions(1);
}

int failed_benchmarks() {
  const std::lock_guard<std::mutex> lock(g_failed_mutex);
  return static_cast<int>(failed_names().size());
}

std::string verify_checking_read(environment& env, std::uint32_t* input, std::size_t input_words,
                                 const word_pattern& gen, std::size_t reads,
                                 const checking_read_launch& launch,
                                 const reads_of_word_fn& reads_of_word,
                                 std::size_t planted_within) {
  const unsigned long long seen = env.read_counter();
  if (seen != 0) {
    return std::to_string(seen) + " element(s) read wrong during the timed launches";
  }
  env.reset_counter();
  launch(env, word_pattern{gen.seed ^ 0x40000000u});  // every word now differs from expected
  const unsigned long long all = env.read_counter();
  if (all != reads) {
    return "expecting another pattern, " + std::to_string(all) + " of " + std::to_string(reads) +
           " element reads were reported (elements skipped or read twice)";
  }
  const std::size_t words = planted_within != 0 ? planted_within : input_words;
  const std::size_t w = std::mt19937_64(reads)() % words;
  const std::size_t expected = reads_of_word ? reads_of_word(w) : 1;
  env.reset_counter();
  write_word(input, w, ~gen(w), env.stream());
  launch(env, gen);
  const unsigned long long found = env.read_counter();
  write_word(input, w, gen(w), env.stream());
  if (found != expected) {
    return "a wrong word planted at word " + std::to_string(w) + " was reported in " +
           std::to_string(found) + " element reads, expected " + std::to_string(expected);
  }
  return "";
}

}  // namespace gmb
