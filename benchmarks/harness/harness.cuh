#pragma once
// The one harness every benchmark runs through: cold L2 before each timed launch, CUDA-event
// manual time, logical bytes, % of peak, model counters, and verification of the outputs.
// Families only describe their cases (bench_case) and register them.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks/harness/console.hpp"
#include "gmb/arch_facts.hpp"
#include "gmb/device_buffer.cuh"
#include "gmb/device_info.hpp"
#include "gmb/event_timer.cuh"
#include "gmb/health_monitor.hpp"
#include "gmb/l2_flush.cuh"
#include "gmb/pattern.cuh"
#include "gmb/sass_paths.hpp"
#include "gmb/traffic_model.hpp"

namespace gmb {

/// What inputs hold and what write kernels write: distinct patterns, so a kernel that writes
/// its input's words (or nothing) fails verification.
inline constexpr word_pattern kInputPattern{0x1234ABCDu};
inline constexpr word_pattern kWritePattern{0x2468ACE0u};

/// Process-wide state shared by every benchmark: the device, a stream, two arrays (inputs and
/// outputs, each `array_bytes`), the L2 flush, a timer and a device counter for checking reads.
class environment {
 public:
  /// `launches_per_iteration` 0: chosen from the array and L2 sizes.
  environment(int device, std::size_t array_bytes, int launches_per_iteration = 0);
  ~environment();
  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;

  /// Device memory the environment will allocate for these arrays on this device.
  static std::size_t required_bytes(const device_info& device, std::size_t array_bytes);

  const device_info& device() const { return device_; }
  /// Launches timed back to back per benchmark iteration (sizing.hpp says why).
  int launches_per_iteration() const { return launches_per_iteration_; }
  cudaStream_t stream() const { return stream_; }
  std::size_t array_bytes() const { return in_.bytes(); }
  device_buffer& in() { return in_; }
  device_buffer& out() { return out_; }
  l2_flush& flush() { return flush_; }
  event_timer& timer() { return timer_; }

  /// A device table of the permutation's first 2^bits images (for gathers), made once.
  const std::uint32_t* index_table(const hash_permutation& perm);

  /// A device counter for kernels that count what they found wrong.
  unsigned long long* counter() { return counter_; }
  void reset_counter();
  unsigned long long read_counter();

  /// `kernel`'s straight path (gmb/sass_paths.hpp), empty (0 instructions) where the build
  /// wrote no SASS listing beside the binary or the listing lacks the kernel.
  sass_path kernel_path(const void* kernel);

  /// Progress and one-line messages on stderr.
  gmb::console& console() { return console_; }

  /// Run health: the NVML monitor (null where NVML cannot watch the GPU), and the flags each
  /// benchmark ran under (names with none are absent).
  void watch_health(std::unique_ptr<health::monitor> monitor) { monitor_ = std::move(monitor); }
  health::monitor* health() { return monitor_.get(); }
  const std::map<std::string, unsigned>& flagged() const { return flagged_; }
  /// Records one benchmark run's window; prints a line when the flags change.
  void record_health(const std::string& name, const health::window& w);

  /// A case's own buffers live from its first run until another case runs (Google Benchmark
  /// runs a case several times: repetitions and iteration sizing), then `release` frees them.
  /// hold() returns whether device memory is freed or allocated around now: an earlier case's
  /// buffers were freed, or this case (having a release) starts holding its own; release_held()
  /// whether it freed anything.
  bool hold(const std::string& name, const std::function<void(environment&)>& release);
  bool release_held();

  /// The case whose run ended last, verified ("" after a failure): a repetition that follows
  /// its own case's run needs no warm-up, the previous repetition was one.
  const std::string& last_verified() const { return last_verified_; }
  void set_last_verified(std::string name) { last_verified_ = std::move(name); }

  /// After large buffers were freed or made, the GPU runs slower for a while (up to 8% for
  /// tens of milliseconds on an H200): waits until a probe (memsets of a buffer of its own)
  /// runs within 2% of its quiet time again, at most kMaxSettleSeconds. Returns the seconds
  /// waited.
  double settle();
  static constexpr double kMaxSettleSeconds = 1.0;

 private:
  device_info device_;
  int launches_per_iteration_ = 1;
  cudaStream_t stream_ = nullptr;
  device_buffer in_;
  device_buffer out_;
  l2_flush flush_;
  static constexpr std::size_t kProbeBytes = std::size_t(256) << 20;
  device_buffer probe_;  // settle()'s, its own so no case's data is touched
  event_timer timer_;
  unsigned long long* counter_ = nullptr;
  device_buffer index_table_;
  hash_permutation index_perm_{0, 0};
  gmb::console console_;
  std::unique_ptr<health::monitor> monitor_;
  unsigned last_health_flags_ = 0;
  std::map<std::string, unsigned> flagged_;
  std::string held_name_;
  std::function<void(environment&)> held_release_;
  std::string last_verified_;
  std::optional<std::map<std::string, sass_path>> sass_paths_;  // read on first use
  double quiet_probe_seconds_ = 0;
  double probe_seconds();
};

/// One benchmark: what to set up, what to time, how to check it, and what it moves.
struct bench_case {
  std::string name;
  std::function<void(environment&)> prepare;        // fill inputs, poison outputs (untimed)
  std::function<void(environment&)> launch;         // the timed work, on env.stream()
  const void* kernel = nullptr;  // the kernel `launch` runs, for model_warp_instructions
  int loop_trips = 1;            // times its SASS loop runs (gmb/sass_paths.hpp): one pass
  std::function<std::string(environment&)> verify;  // "" when every output is right
  double bytes_read = 0;                            // logical bytes per launch
  double bytes_written = 0;
  std::optional<traffic_prediction> model;
  bool cold_l2 = true;             // DRAM benchmarks: flush the L2 before every timed iteration;
                                   // false: cache benchmarks, which run hot (warmed before timing)
  int launches_per_iteration = 0;  // 0: the environment's choice
  std::function<void(environment&)> release;  // frees what prepare allocated (may be empty)
  /// Numbers the case measures itself (in-kernel clocks, say), read after a verified run and
  /// reported as counters (may be empty).
  std::function<std::vector<std::pair<std::string, double>>(environment&)> measured;
  /// Untimed work before every timed iteration, after the flush (managed pages sent back to
  /// the host, say); may be empty. Cases with one should time one launch per iteration.
  std::function<void(environment&)> before_iteration;
  /// false: the kernels compile alike in every build (texture, constant, local, host-mapped,
  /// managed: built once, gmb_bench_once); the ca and cg binaries skip the case unless
  /// --gmb_every_flavor, and say so (docs/design.md, "Time budget").
  bool every_flavor = true;
  /// A feature of newer GPUs the kernels need (gmb/arch_facts.hpp): on a GPU without it the
  /// case is not registered, and the binary says why (docs/gpus.md).
  gpu_feature needs = gpu_feature::kNone;
  /// What pct_peak is a percentage of: 0, the GPU memory's theoretical peak; a path with a
  /// limit of its own (the host link, a peer link) gives that link's theoretical rate.
  double peak_bytes_per_second = 0;
};

/// A kernel as bench_case::kernel holds it.
template <class... Args>
const void* kernel_id(void (*kernel)(Args...)) {
  return reinterpret_cast<const void*>(kernel);
}

/// The usual prepare: the input holds kInputPattern, the output is poisoned.
inline void fill_input_poison_output(environment& e) {
  e.in().fill(kInputPattern, e.stream());
  e.out().poison(e.stream());
}

/// Threads for four waves of full SMs, within the output array, in whole blocks of `block`
/// (families that run hot on a fixed amount of work: constant, local).
inline std::size_t four_waves_of_threads(environment& env, unsigned block) {
  int per_sm = 0;
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                        env.device().ordinal));
  const std::size_t waves = std::size_t(4) * env.device().sms * per_sm;
  const std::size_t words = env.array_bytes() / sizeof(std::uint32_t);
  return std::min(waves, words) / block * block;
}

/// Which sweeps families register: the quick default suite or every point of every sweep.
enum class sweep { kQuick, kFull };

/// Runs a case the way the benchmark does (prepare, warm-up, launches, verify), untimed.
/// The device tests use it; returns the verification message, and the case's own
/// measurements in `measured` when asked.
using measurements = std::vector<std::pair<std::string, double>>;
std::string run_untimed(environment& env, const bench_case& c, int launches = 2,
                        measurements* measured = nullptr);

/// The body of every registered benchmark.
void run_benchmark(benchmark::State& state, environment& env, const bench_case& c);
/// The body in profile mode (registration_options::profile).
void run_profiled(benchmark::State& state, environment& env, const bench_case& c);

struct registration_options {
  /// For Nsight Compute: each benchmark launches its kernel exactly once (one iteration, one
  /// launch, after a flush, no warm-up, no verification), so profiled kernels pair with the
  /// benchmarks in run order. Its times are not results.
  bool profile = false;
};
void register_case(environment& env, bench_case c, const registration_options& options);

/// Number of benchmarks whose verification failed or that hit a CUDA error (main's exit status).
int failed_benchmarks();

/// What memset writes in ref/memset, as bytes and as words.
inline constexpr unsigned char kMemsetByte = 0x5A;
inline constexpr word_constant kMemsetWords{0x5A5A5A5Au};

/// Checks every word of `buffer` against `gen` on the device, then spot-checks sampled ranges
/// on the host against the same generator. Returns "" or a message naming the first bad word.
template <class Gen>
std::string verify_words(environment& env, const device_buffer& buffer, const Gen& gen,
                         const char* label) {
  auto describe = [&](std::size_t word, std::uint32_t got) {
    std::ostringstream msg;
    msg << label << ": word " << word << " is 0x" << std::hex << got << ", expected 0x"
        << gen(word);
    return msg.str();
  };
  const mismatch_report report = buffer.check(gen, env.stream());
  if (report.count != 0) {
    const std::uint32_t got = buffer.copy_words_to_host(report.first, 1, env.stream())[0];
    return describe(report.first, got) + " (" + std::to_string(report.count) + " of " +
           std::to_string(buffer.words()) + " words wrong)";
  }
  constexpr std::size_t kRange = 256, kRanges = 16;
  std::mt19937_64 rng(buffer.words());
  for (std::size_t r = 0; r < kRanges && buffer.words() >= kRange; ++r) {
    const std::size_t first = r == 0   ? 0
                              : r == 1 ? buffer.words() - kRange
                                       : rng() % (buffer.words() - kRange + 1);
    const std::vector<std::uint32_t> host = buffer.copy_words_to_host(first, kRange, env.stream());
    for (std::size_t i = 0; i < kRange; ++i) {
      if (host[i] != gen(first + i)) return describe(first + i, host[i]) + " (host check)";
    }
  }
  return "";
}

/// Launches a checking read that expects `expected` in its input and counts wrong elements.
using checking_read_launch = std::function<void(environment&, word_pattern expected)>;

/// How many element reads of one launch see input word w (kernels that re-read their input).
using reads_of_word_fn = std::function<std::size_t(std::size_t word)>;

/// Verifies a kernel that checks what it reads: no wrong element was seen during the run;
/// told to expect another pattern it reports exactly `reads` elements (each element read
/// once, unless the kernel re-reads); and one wrong word planted at a random position among the
/// first `planted_within` words (0: anywhere in `input`) is reported by exactly the reads that
/// see it: one, or `reads_of_word` of it.
std::string verify_checking_read(environment& env, std::uint32_t* input, std::size_t input_words,
                                 const word_pattern& gen, std::size_t reads,
                                 const checking_read_launch& launch,
                                 const reads_of_word_fn& reads_of_word = {},
                                 std::size_t planted_within = 0);
/// The same for an input in a device_buffer.
inline std::string verify_checking_read(environment& env, device_buffer& input,
                                        const word_pattern& gen, std::size_t reads,
                                        const checking_read_launch& launch,
                                        const reads_of_word_fn& reads_of_word = {},
                                        std::size_t planted_within = 0) {
  return verify_checking_read(env, input.data<std::uint32_t>(), input.words(), gen, reads, launch,
                              reads_of_word, planted_within);
}

}  // namespace gmb
