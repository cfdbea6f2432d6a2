#include "benchmarks/harness.cuh"

#include <atomic>
#include <exception>

#include "gmb/sizing.hpp"

namespace gmb {

namespace {
std::atomic<int> g_failed{0};

device_info select_device(int device) {
  GMB_CUDA_CHECK(cudaSetDevice(device));
  return query_device(device);
}
}  // namespace

environment::environment(int device, std::size_t array_bytes)
    : device_(select_device(device)),
      in_(array_bytes),
      out_(array_bytes),
      flush_(device_.l2_bytes) {
  GMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  GMB_CUDA_CHECK(cudaMalloc(&counter_, sizeof(*counter_)));
}

environment::~environment() {
  cudaFree(counter_);
  cudaStreamDestroy(stream_);
}

std::size_t environment::required_bytes(const device_info& device, std::size_t array_bytes) {
  return 2 * array_bytes + round_up(2 * device.l2_bytes, kMiB);
}

void environment::reset_counter() {
  GMB_CUDA_CHECK(cudaMemsetAsync(counter_, 0, sizeof(*counter_), stream_));
}

unsigned long long environment::read_counter() {
  unsigned long long value = 0;
  GMB_CUDA_CHECK(
      cudaMemcpyAsync(&value, counter_, sizeof(value), cudaMemcpyDeviceToHost, stream_));
  GMB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  return value;
}

std::string run_untimed(environment& env, const bench_case& c, int launches) {
  c.prepare(env);
  for (int i = 0; i < launches; ++i) {
    if (c.cold_l2) env.flush().flush(env.stream());
    c.launch(env);
  }
  GMB_CUDA_CHECK(cudaGetLastError());
  GMB_CUDA_CHECK(cudaStreamSynchronize(env.stream()));
  return c.verify(env);
}

void run_benchmark(benchmark::State& state, environment& env, const bench_case& c) {
  try {
    c.prepare(env);
    c.launch(env);  // warm-up: module load, first-touch, clocks
    GMB_CUDA_CHECK(cudaGetLastError());
    for (auto _ : state) {
      if (c.cold_l2) env.flush().flush(env.stream());
      env.timer().start(env.stream());
      c.launch(env);
      env.timer().stop(env.stream());
      state.SetIterationTime(env.timer().seconds());
    }
    GMB_CUDA_CHECK(cudaGetLastError());
    GMB_CUDA_CHECK(cudaStreamSynchronize(env.stream()));
    const std::string error = c.verify(env);
    if (!error.empty()) {
      ++g_failed;
      state.SkipWithError(("wrong result: " + error).c_str());
      return;
    }
  } catch (const std::exception& e) {
    ++g_failed;
    state.SkipWithError(e.what());
    return;
  }

  const double bytes = c.bytes_read + c.bytes_written;
  const double iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes * iterations));
  state.counters["pct_peak"] = benchmark::Counter(
      100.0 * bytes * iterations / env.device().peak_bytes_per_second(),
      benchmark::Counter::kIsRate);
  if (c.model) {
    state.counters["model_sectors_per_req"] = c.model->sectors_per_request();
    state.counters["model_dram_bytes"] = c.model->dram_bytes;
    state.counters["model_efficiency"] = c.model->efficiency();
  }
}

void register_case(environment& env, bench_case c, const registration_options& options) {
  const std::string name = c.name;
  auto* b = benchmark::RegisterBenchmark(
      name.c_str(), [&env, c = std::move(c)](benchmark::State& s) { run_benchmark(s, env, c); });
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  if (options.min_time_seconds) b->MinTime(*options.min_time_seconds);
}

int failed_benchmarks() { return g_failed.load(); }

std::string verify_checking_read(environment& env, device_buffer& input, const word_pattern& gen,
                                 const std::function<void(environment&)>& launch) {
  const unsigned long long seen = env.read_counter();
  if (seen != 0) {
    return std::to_string(seen) + " thread(s) read a wrong word during the timed launches";
  }
  const std::size_t words = input.words();
  const std::size_t planted[] = {0, words - 1, std::mt19937_64(words)() % words};
  for (std::size_t w : planted) {
    env.reset_counter();
    input.write_word(w, ~gen(w));
    launch(env);
    const unsigned long long found = env.read_counter();
    input.write_word(w, gen(w));
    if (found != 1) {
      return "a wrong word planted at word " + std::to_string(w) + " was seen by " +
             std::to_string(found) + " thread(s), expected exactly 1 (not every word is read)";
    }
  }
  return "";
}

}  // namespace gmb
