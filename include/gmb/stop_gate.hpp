#pragma once
// Which benchmarks a stop (stop_signal.hpp) skips, decided call by call: Google Benchmark calls
// a benchmark once while sizing it and once per repetition. The benchmark in progress runs all
// its repetitions (a second or so); every later one is skipped, and the output files leave the
// skipped ones out (kept_reporter asks skipped_by_stop).
#include <benchmark/benchmark.h>

#include <mutex>
#include <set>
#include <string>

#include "gmb/stop_signal.hpp"

namespace gmb {

namespace detail {
struct stop_gate_state {
  std::mutex mutex;
  std::set<std::string> skipped;
  std::string started;  // the benchmark whose calls are under way
};
inline stop_gate_state& stop_gate() {
  static stop_gate_state state;
  return state;
}
}  // namespace detail

/// Whether this call of the benchmark `name` is skipped for a stop; a skipped call has told
/// `state` so. With --benchmark_enable_random_interleaving, benchmarks that ran some
/// repetitions before the stop skip the rest: the skip happens inside the timing loop, so the
/// skipped repetition reports the iterations of the others, which Google Benchmark's
/// statistics check (a skip before the loop reports none and aborts the run).
inline bool skipped_for_stop(benchmark::State& state, const std::string& name) {
  auto& gate = detail::stop_gate();
  const std::lock_guard<std::mutex> lock(gate.mutex);
  if (name == gate.started) return false;
  if (!stop_requested() && gate.skipped.count(name) == 0) {
    gate.started = name;
    return false;
  }
  gate.skipped.insert(name);
  for (auto _ : state) {
    state.SkipWithError("skipped: the run was stopped");
    break;
  }
  return true;
}

/// Whether a stop skipped the benchmark of this name.
inline bool skipped_by_stop(const std::string& name) {
  auto& gate = detail::stop_gate();
  const std::lock_guard<std::mutex> lock(gate.mutex);
  return gate.skipped.count(name) != 0;
}

/// Forgets every skip (tests).
inline void reset_stop_gate() {
  auto& gate = detail::stop_gate();
  const std::lock_guard<std::mutex> lock(gate.mutex);
  gate.skipped.clear();
  gate.started.clear();
}

}  // namespace gmb
