#pragma once
// The run's output as Google Benchmark writes it, made to survive a stop:
// - kept_reporter wraps a reporter (the file's, the console's) and passes on only the
//   benchmarks that ran: those a stop skipped are left out. Its text reaches the disk after
//   every report (a benchmark's repetitions, then its aggregates), so even a process killed
//   outright leaves every finished benchmark there. A write that fails (disk full, folder
//   removed) is reported once through on_write_fault.
// - The file's text goes through an output_file (output_file.hpp): a stop or a write fault
//   closes it at its last whole benchmark, with the note gmb_interrupted in its context in the
//   room kept for it, so closing never needs more space than the file has.
#include <benchmark/benchmark.h>

#include "gmb/output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
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
  /// With `file`, the inner reporter's text goes there, whole benchmark by whole benchmark
  /// (its own output stream is not used); without, to the output stream, flushed.
  kept_reporter(benchmark::BenchmarkReporter* inner, predicate dropped,
                fault_handler on_write_fault = {}, output_file* file = nullptr)
      : inner_(inner),
        dropped_(std::move(dropped)),
        on_write_fault_(std::move(on_write_fault)),
        file_(file) {}
  kept_reporter(std::unique_ptr<benchmark::BenchmarkReporter> inner, predicate dropped,
                fault_handler on_write_fault = {}, output_file* file = nullptr)
      : kept_reporter(inner.get(), std::move(dropped), std::move(on_write_fault), file) {
    owned_ = std::move(inner);
  }

  bool ReportContext(const Context& context) override {
    inner_->SetOutputStream(file_ ? &buffer_ : &GetOutputStream());
    inner_->SetErrorStream(file_ ? &buffer_ : &GetErrorStream());  // the console's context
    const bool ok = inner_->ReportContext(context);
    if (file_) {
      std::string text = take();
      const std::size_t room = with_note_room(text);
      json_ = room != std::string::npos;
      if (json_) file_->note_room_at(off_t(room));
      if (file_->write(text)) file_->commit();
    }
    flush();
    return ok;
  }

  /// A benchmark's repetitions come in one call and, with several, its aggregates in the next:
  /// it is whole (committed, counted) when the next benchmark comes, or at Finalize.
  void ReportRuns(const std::vector<Run>& report) override {
    if (report.empty() || failed_) return;
    const std::string& name = report.front().run_name.function_name;
    if (dropped_ && dropped_(name)) return;
    if (name != pending_) settle();
    if (failed_) return;  // the reserve could not be renewed: the run stops before this one
    inner_->ReportRuns(report);
    if (file_ && !file_->write(take())) {
      pending_.clear();  // not counted: close() cuts the file back to the benchmark before
      flush();
      return;
    }
    pending_ = name;
    flush();
  }

  /// The inner reporter's closing goes to the stream now, or to the file at close().
  void Finalize() override {
    settle();
    inner_->Finalize();
    if (file_) closing_ = take();
    finalized_ = true;
    flush();
  }

  /// Closes the file (see output_file::close) with `note` (gmb_interrupted; "" for none).
  /// Without a Finalize (a run cut short), a JSON file gets Google Benchmark's closing.
  std::string close_file(const std::string& note) {
    if (!file_) return "";
    return file_->close(finalized_ ? closing_ : (json_ ? "\n  ]\n}\n" : ""), note);
  }

  /// Benchmarks passed on, and the last of them ("" before the first).
  int kept() const { return kept_; }
  const std::string& last() const { return last_; }
  bool write_failed() const { return failed_; }

  /// Inserts blank room for a stop's note after the opening of a JSON context; returns where
  /// it starts, or npos for text that has no context (another format).
  static std::size_t with_note_room(std::string& text) {
    const std::string opening = "\"context\": {";
    const std::size_t at = text.find(opening);
    if (at == std::string::npos) return std::string::npos;
    text.insert(at + opening.size(), std::string(output_file::kNoteRoom, ' '));
    return at + opening.size();
  }

 private:
  std::string take() {
    std::string text = buffer_.str();
    buffer_.str("");
    return text;
  }

  /// The pending benchmark is whole: committed (a reserve that cannot be renewed stops the
  /// run after it) and counted.
  void settle() {
    if (pending_.empty()) return;
    if (file_) file_->commit();
    ++kept_;
    last_ = pending_;
    pending_.clear();
    flush();
  }

  void flush() {
    if (failed_) return;
    std::string why;
    if (file_) {
      why = file_->fault();
    } else {
      std::ostream& out = GetOutputStream();
      out.flush();
      if (!out) why = std::strerror(errno != 0 ? errno : EIO);
    }
    if (why.empty()) return;
    failed_ = true;
    if (on_write_fault_) on_write_fault_(why);
  }

  benchmark::BenchmarkReporter* inner_;
  std::unique_ptr<benchmark::BenchmarkReporter> owned_;
  predicate dropped_;
  fault_handler on_write_fault_;
  output_file* file_;
  std::ostringstream buffer_;  // the inner reporter's text on its way to file_
  std::string closing_;
  bool json_ = false;       // the file's context has the note's room
  bool finalized_ = false;  // closing_ is the inner reporter's own (none for CSV)
  int kept_ = 0;
  std::string last_;     // the last whole benchmark
  std::string pending_;  // the benchmark whose reports are coming
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

}  // namespace gmb
