#pragma once
// The run's output as Google Benchmark writes it, made to survive a stop:
// - kept_reporter wraps a reporter (the file's, the console's) and passes on only the
//   benchmarks that ran: those a stop skipped are left out. The file is flushed after every
//   report (a benchmark's repetitions, then its aggregates), so even a process killed outright
//   leaves every finished benchmark on disk. A write that fails (disk full, folder removed) is
//   reported once through on_write_fault.
// - add_json_context adds keys to the context of a closed JSON file (gmb_interrupted), written
//   beside it and renamed over it, so the file is whole at every moment.
#include <benchmark/benchmark.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gmb {

class kept_reporter : public benchmark::BenchmarkReporter {
 public:
  using predicate = std::function<bool(const std::string& name)>;
  using fault_handler = std::function<void(const std::string& why)>;

  /// `dropped(name)`: whether the benchmark of that registered name was skipped by a stop.
  kept_reporter(benchmark::BenchmarkReporter* inner, predicate dropped,
                fault_handler on_write_fault = {})
      : inner_(inner), dropped_(std::move(dropped)), on_write_fault_(std::move(on_write_fault)) {}
  kept_reporter(std::unique_ptr<benchmark::BenchmarkReporter> inner, predicate dropped,
                fault_handler on_write_fault = {})
      : kept_reporter(inner.get(), std::move(dropped), std::move(on_write_fault)) {
    owned_ = std::move(inner);
  }

  bool ReportContext(const Context& context) override {
    inner_->SetOutputStream(&GetOutputStream());
    inner_->SetErrorStream(&GetErrorStream());
    const bool ok = inner_->ReportContext(context);
    flush();
    return ok;
  }

  void ReportRuns(const std::vector<Run>& report) override {
    if (report.empty()) return;
    const std::string& name = report.front().run_name.function_name;
    if (dropped_ && dropped_(name)) return;
    inner_->ReportRuns(report);
    if (name != last_) ++kept_;  // Google Benchmark reports the repetitions, then aggregates
    last_ = name;
    flush();
  }

  void Finalize() override {
    inner_->Finalize();
    flush();
  }

  /// Benchmarks passed on, and the last of them ("" before the first).
  int kept() const { return kept_; }
  const std::string& last() const { return last_; }
  bool write_failed() const { return failed_; }

 private:
  void flush() {
    std::ostream& out = GetOutputStream();
    out.flush();
    if (!out && !failed_) {
      failed_ = true;
      if (on_write_fault_) on_write_fault_(std::strerror(errno != 0 ? errno : EIO));
    }
  }

  benchmark::BenchmarkReporter* inner_;
  std::unique_ptr<benchmark::BenchmarkReporter> owned_;
  predicate dropped_;
  fault_handler on_write_fault_;
  int kept_ = 0;
  std::string last_;
  bool failed_ = false;
};

/// The reporter Google Benchmark would make for --benchmark_out_format=FORMAT (json, csv,
/// console), or nullptr for a format it does not know (it then refuses the run itself).
inline std::unique_ptr<benchmark::BenchmarkReporter> file_reporter_for(const std::string& format) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (format == "console") {
    return std::make_unique<benchmark::ConsoleReporter>(benchmark::ConsoleReporter::OO_None);
  }
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  if (format == "csv") return std::make_unique<benchmark::CSVReporter>();
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
  return nullptr;
}

/// Adds context keys to the Google Benchmark JSON file at `path` (one that does not hold them
/// yet). Text, not a parse: Google Benchmark writes NaN and Infinity, which are not JSON, and
/// its context always opens with `"context": {` and holds keys. Throws std::runtime_error
/// naming the file when it cannot be read or written or has no context.
inline void add_json_context(const std::string& path,
                             const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read '" + path + "'");
    std::ostringstream all;
    all << in.rdbuf();
    text = all.str();
  }
  const std::string opening = "\"context\": {";
  const std::size_t at = text.find(opening);
  if (at == std::string::npos) {
    throw std::runtime_error("'" + path + "' is not a Google Benchmark JSON file");
  }
  std::string keys;
  for (const auto& [key, value] : entries) {
    keys += "\n    " + nlohmann::json(key).dump() + ": " + nlohmann::json(value).dump() + ",";
  }
  text.insert(at + opening.size(), keys);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno != 0 ? errno : EIO);
      std::remove(temporary.c_str());
      throw std::runtime_error("cannot write '" + temporary + "' (" + why + ")");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot replace '" + path + "' (" + why + ")");
  }
}

}  // namespace gmb
