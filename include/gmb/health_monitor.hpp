#pragma once
// Watches one GPU through NVML while benchmarks run: a thread takes a reading every 50 ms (clocks, clock-event reasons, temperature, power, other compute processes; ECC
// and retirement state less often) and folds it into the window of the benchmark running.
// Host only; health.hpp holds the rules.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmb/cuda_check.hpp"
#include "gmb/health.hpp"
#include "gmb/nvml.hpp"

namespace gmb::health {

/// State that changes rarely, read at the start and the end of a run.
struct snapshot {
  std::string nvidia_driver;
  std::string uuid;
  reading now;
  unsigned max_sm_mhz = 0;
  unsigned max_mem_mhz = 0;
  long long ecc_corrected = -1;    // volatile counts; -1: not supported (e.g. ECC off)
  long long ecc_uncorrected = -1;
  long long retired_pages = -1;    // single- plus double-bit retirements; -1: not supported
  long long remapped_rows = -1;    // correctable plus uncorrectable; -1: not supported
  bool retirement_pending = false; // a remapping waits for a reset, or one failed

  /// Context entries (strings, as Google Benchmark's context holds them) under `prefix`.
  std::vector<std::pair<std::string, std::string>> entries(const std::string& prefix) const {
    auto count = [](long long v) { return v < 0 ? std::string("n/a") : std::to_string(v); };
    std::string pids;
    for (unsigned pid : now.other_pids) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
    return {
        {prefix + "sm_mhz", std::to_string(now.sm_mhz)},
        {prefix + "mem_mhz", std::to_string(now.mem_mhz)},
        {prefix + "max_sm_mhz", std::to_string(max_sm_mhz)},
        {prefix + "max_mem_mhz", std::to_string(max_mem_mhz)},
        {prefix + "temp_c", std::to_string(now.temp_c)},
        {prefix + "power_w", std::to_string(static_cast<int>(now.power_w + 0.5))},
        {prefix + "clock_event_reasons", std::to_string(now.clock_event_reasons)},
        {prefix + "other_pids", pids.empty() ? "none" : pids},
        {prefix + "ecc_corrected", count(ecc_corrected)},
        {prefix + "ecc_uncorrected", count(ecc_uncorrected)},
        {prefix + "retired_pages", count(retired_pages)},
        {prefix + "remapped_rows", count(remapped_rows)},
        {prefix + "retirement_pending", retirement_pending ? "yes" : "no"},
    };
  }
};

class monitor {
 public:
  /// Starts watching CUDA device `cuda_device`; null, with the reason, where NVML cannot.
  static std::unique_ptr<monitor> start(int cuda_device, std::string* why_not,
                                        std::chrono::milliseconds period =
                                            std::chrono::milliseconds(50)) {
    auto api = nvml::api::open(why_not);
    if (!api) return nullptr;
    char bus_id[32] = {};
    GMB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device));
    nvml::device dev = nullptr;
    const nvml::result r = api->handle_by_pci_bus_id(bus_id, &dev);
    if (r != nvml::kSuccess) {
      *why_not = std::string("NVML does not know the GPU at ") + bus_id + ": " + api->describe(r);
      return nullptr;
    }
    return std::unique_ptr<monitor>(new monitor(std::move(api), dev, period));
  }

  ~monitor() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  monitor(const monitor&) = delete;
  monitor& operator=(const monitor&) = delete;

  /// The state when the monitor started.
  const snapshot& at_start() const { return start_; }

  snapshot read_snapshot() {
    snapshot s;
    char text[96] = {};
    if (api_->driver_version && api_->driver_version(text, sizeof(text)) == nvml::kSuccess) {
      s.nvidia_driver = text;
    }
    if (api_->uuid && api_->uuid(dev_, text, sizeof(text)) == nvml::kSuccess) s.uuid = text;
    s.now = read();
    s.max_sm_mhz = max_sm_mhz_;
    s.max_mem_mhz = max_mem_mhz_;
    unsigned long long v = 0;
    if (api_->ecc_errors) {
      if (api_->ecc_errors(dev_, nvml::kEccCorrected, nvml::kEccVolatile, &v) == nvml::kSuccess) {
        s.ecc_corrected = static_cast<long long>(v);
      }
      if (api_->ecc_errors(dev_, nvml::kEccUncorrected, nvml::kEccVolatile, &v) ==
          nvml::kSuccess) {
        s.ecc_uncorrected = static_cast<long long>(v);
      }
    }
    if (api_->retired_pages) {
      long long total = 0;
      bool supported = true;
      for (int cause : {nvml::kRetiredMultipleSbe, nvml::kRetiredDbe}) {
        unsigned n = 0;  // count only: no address array
        const nvml::result r = api_->retired_pages(dev_, cause, &n, nullptr);
        if (r == nvml::kSuccess || r == nvml::kInsufficientSize) {
          total += n;
        } else {
          supported = false;
        }
      }
      if (supported) s.retired_pages = total;
    }
    unsigned corrected = 0, uncorrected = 0, pending = 0, failed = 0;
    if (api_->remapped_rows &&
        api_->remapped_rows(dev_, &corrected, &uncorrected, &pending, &failed) ==
            nvml::kSuccess) {
      s.remapped_rows = corrected + uncorrected;
      s.retirement_pending = pending != 0 || failed != 0;
    }
    return s;
  }

  /// A benchmark starts: readings from now on belong to its window.
  void begin() {
    const std::lock_guard<std::mutex> lock(mutex_);
    window_ = window{};
    open_ = true;
  }

  /// The benchmark ended: its window, with at least one reading taken while it was open.
  window end() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (window_.readings == 0) {
      lock.unlock();
      const reading r = read();
      lock.lock();
      window_.add(r, flags_of(r, expected_mem_mhz_) | sticky_flags_);
    }
    open_ = false;
    return window_;
  }

 private:
  monitor(std::unique_ptr<nvml::api> api, nvml::device dev, std::chrono::milliseconds period)
      : api_(std::move(api)), dev_(dev), period_(period), self_(static_cast<unsigned>(getpid())) {
    if (api_->max_clock) {
      api_->max_clock(dev_, nvml::kClockSm, &max_sm_mhz_);
      api_->max_clock(dev_, nvml::kClockMem, &max_mem_mhz_);
    }
    // The memory clock the GPU is set to run compute at: on data-center GPUs the applications
    // clock (= the maximum); GeForce boards have none and run CUDA below their maximum by
    // design, so there no memory-clock verdict is given (0).
    if (!api_->applications_clock ||
        api_->applications_clock(dev_, nvml::kClockMem, &expected_mem_mhz_) != nvml::kSuccess) {
      expected_mem_mhz_ = 0;
    }
    start_ = read_snapshot();
    thread_ = std::thread([this] { watch(); });
  }

  reading read() {
    reading r;
    if (api_->clock) {
      api_->clock(dev_, nvml::kClockSm, &r.sm_mhz);
      api_->clock(dev_, nvml::kClockMem, &r.mem_mhz);
    }
    if (api_->clock_event_reasons) api_->clock_event_reasons(dev_, &r.clock_event_reasons);
    if (api_->temperature) api_->temperature(dev_, nvml::kTemperatureGpu, &r.temp_c);
    unsigned mw = 0;
    if (api_->power_mw && api_->power_mw(dev_, &mw) == nvml::kSuccess) r.power_w = mw / 1000.0;
    if (api_->compute_processes) {
      std::vector<nvml::process_info> infos(64);
      auto n = static_cast<unsigned>(infos.size());
      if (api_->compute_processes(dev_, &n, infos.data()) == nvml::kSuccess) {
        std::vector<unsigned> pids;
        for (unsigned i = 0; i < n && i < infos.size(); ++i) pids.push_back(infos[i].pid);
        r.other_pids = other_processes(std::move(pids), self_);
      }
    }
    return r;
  }

  /// ECC errors and pending retirements stay raised once seen: memory that has failed once is
  /// suspect for the rest of the run.
  unsigned rare_flags() {
    const snapshot s = read_snapshot();
    unsigned flags = 0;
    if (s.ecc_uncorrected > start_.ecc_uncorrected && start_.ecc_uncorrected >= 0) {
      flags |= kEccErrors;
    }
    if (s.retirement_pending) flags |= kPendingRetirement;
    return flags;
  }

  void watch() {
    constexpr int kRareEvery = 20;  // ECC and retirement state: every 20 readings (1 s)
    for (int n = 0;; ++n) {
      const unsigned rare = n % kRareEvery == 0 ? rare_flags() : 0;
      const reading r = read();
      std::unique_lock<std::mutex> lock(mutex_);
      sticky_flags_ |= rare;
      if (open_) window_.add(r, flags_of(r, expected_mem_mhz_) | sticky_flags_);
      if (wake_.wait_for(lock, period_, [this] { return stop_; })) return;
    }
  }

  std::unique_ptr<nvml::api> api_;
  nvml::device dev_;
  std::chrono::milliseconds period_;
  unsigned self_;
  unsigned max_sm_mhz_ = 0;
  unsigned max_mem_mhz_ = 0;
  unsigned expected_mem_mhz_ = 0;  // the memory clock below which a benchmark is flagged
  snapshot start_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool open_ = false;
  unsigned sticky_flags_ = 0;
  window window_;
  std::thread thread_;
};

}  // namespace gmb::health
