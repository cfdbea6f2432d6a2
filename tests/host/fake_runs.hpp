#pragma once
// Google Benchmark's report of a benchmark of two repetitions, as the reporters receive it.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace gmb::test {

inline benchmark::BenchmarkReporter::Run run_of(const std::string& name, int repetition) {
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = name;
  run.run_name.time_type = "manual_time";
  run.family_index = 0;
  run.per_family_instance_index = 0;
  run.repetition_index = repetition;
  run.repetitions = 2;
  run.iterations = 10;
  run.real_accumulated_time = 1e-3;
  run.cpu_accumulated_time = 1e-3;
  run.counters["bytes_per_second"] = 1e12;
  return run;
}

inline std::vector<benchmark::BenchmarkReporter::Run> benchmark_of(const std::string& name) {
  return {run_of(name, 0), run_of(name, 1)};
}

}  // namespace gmb::test
