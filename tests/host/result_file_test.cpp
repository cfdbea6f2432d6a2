// A stopped run's output: only whole benchmarks reach the file, it is readable after each one,
// and a failed write is reported once. (The file itself: output_file_test.cpp.)
#include "gmb/result_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "gmb/stop_signal.hpp"
#include "tests/host/fake_runs.hpp"

namespace gmb {
namespace {

using Run = benchmark::BenchmarkReporter::Run;
using test::benchmark_of;
using test::run_of;

nlohmann::json parsed(const std::string& text) {
  return nlohmann::json::parse(text);
}

/// A reporter that keeps everything, writing JSON into `out`, its context already written.
std::unique_ptr<kept_reporter> keeping_all(std::ostream& out) {
  auto reporter = std::make_unique<kept_reporter>(std::make_unique<benchmark::JSONReporter>(),
                                                  [](const std::string&) { return false; });
  reporter->SetOutputStream(&out);
  reporter->SetErrorStream(&out);
  reporter->ReportContext(benchmark::BenchmarkReporter::Context());
  return reporter;
}

std::vector<std::string> run_names(const nlohmann::json& doc) {
  std::vector<std::string> names;
  for (const auto& b : doc["benchmarks"]) names.push_back(b["run_name"]);
  return names;
}

TEST(KeptReporter, PassesOnWholeBenchmarksAndDropsAbandonedOnes) {
  std::ostringstream out;
  kept_reporter reporter(std::make_unique<benchmark::JSONReporter>(),
                         [](const std::string& name) { return name == "b"; });
  reporter.SetOutputStream(&out);
  reporter.SetErrorStream(&out);
  reporter.ReportContext(benchmark::BenchmarkReporter::Context());
  for (const char* name : {"a", "b", "c"}) reporter.ReportRuns(benchmark_of(name));
  reporter.Finalize();
  const auto doc = parsed(out.str());
  EXPECT_EQ(run_names(doc), (std::vector<std::string>{"a/manual_time", "a/manual_time",
                                                      "c/manual_time", "c/manual_time"}));
  EXPECT_EQ(reporter.kept(), 2);
  EXPECT_EQ(reporter.last(), "c");
  EXPECT_FALSE(reporter.write_failed());
}

TEST(KeptReporter, CountsABenchmarkOnceThoughItsAggregatesComeApart) {
  std::ostringstream out;
  const auto reporter = keeping_all(out);
  for (const char* name : {"a", "b"}) {
    reporter->ReportRuns(benchmark_of(name));  // the repetitions, then the aggregates
    benchmark::BenchmarkReporter::Run median = run_of(name, 0);  // (Run: gtest's, in a TEST)
    median.run_type = benchmark::BenchmarkReporter::Run::RT_Aggregate;
    median.aggregate_name = "median";
    reporter->ReportRuns({median});
  }
  EXPECT_EQ(reporter->kept(), 1);  // b is whole once the run says so (another benchmark, or:)
  reporter->Finalize();
  EXPECT_EQ(reporter->kept(), 2);
}

TEST(KeptReporter, TheFileOnDiskEndsAfterAWholeBenchmarkAtEveryMoment) {
  // What a process killed outright leaves: every finished benchmark is flushed, so closing
  // the list (what gmb does to such a file) gives valid JSON with all of them.
  const std::string path = testing::TempDir() + "kept_reporter_flush.json";
  std::ofstream file(path);
  const auto reporter = keeping_all(file);
  reporter->ReportRuns(benchmark_of("a"));
  reporter->ReportRuns(benchmark_of("b"));
  std::ifstream on_disk(path);
  std::stringstream text;
  text << on_disk.rdbuf();
  const auto doc = parsed(text.str() + "\n  ]\n}\n");
  EXPECT_EQ(doc["benchmarks"].size(), 4u);
  std::remove(path.c_str());
}

TEST(KeptReporter, AFailedWriteIsReportedOnceWithItsReason) {
  std::ofstream full("/dev/full");
  if (!full) GTEST_SKIP() << "/dev/full is not available";
  std::vector<std::string> faults;
  kept_reporter reporter(
      std::make_unique<benchmark::JSONReporter>(), [](const std::string&) { return false; },
      [&faults](const std::string& why) { faults.push_back(why); });
  reporter.SetOutputStream(&full);
  reporter.SetErrorStream(&full);
  reporter.ReportContext(benchmark::BenchmarkReporter::Context());
  reporter.ReportRuns(benchmark_of("a"));
  reporter.ReportRuns(benchmark_of("b"));
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0], "No space left on device");
  EXPECT_TRUE(reporter.write_failed());
}

TEST(FileReporterFor, KnowsGoogleBenchmarksFormats) {
  EXPECT_NE(file_reporter_for("json"), nullptr);
  EXPECT_NE(file_reporter_for("csv"), nullptr);
  EXPECT_NE(file_reporter_for("console"), nullptr);
  EXPECT_EQ(file_reporter_for("yaml"), nullptr);
}

TEST(StopSignal, TheFirstSignalAsksToStopAndACopyOfItIsTheSameStop) {
  reset_stop();
  catch_stop_signals();
  EXPECT_FALSE(stop_requested());
  raise(SIGTERM);
  EXPECT_TRUE(stop_requested());
  EXPECT_EQ(stop_signal(), SIGTERM);
  raise(SIGTERM);  // within kSameStopSeconds: the same stop, delivered twice
  EXPECT_EQ(stop_signal(), SIGTERM);
  default_stop_signals();
  reset_stop();
}

TEST(StopSignal, RequestStopStopsWithoutASignal) {
  reset_stop();
  request_stop();
  EXPECT_TRUE(stop_requested());
  EXPECT_EQ(stop_signal(), 0);
  reset_stop();
}

TEST(StopSignalDeathTest, ASecondSignalEndsTheProcessAtOnce) {
  EXPECT_EXIT(
      {
        catch_stop_signals();
        raise(SIGTERM);
        std::this_thread::sleep_for(std::chrono::duration<double>(kSameStopSeconds + 0.1));
        raise(SIGTERM);
        std::exit(0);
      },
      testing::KilledBySignal(SIGTERM), "");
  EXPECT_EXIT(
      {
        catch_stop_signals();
        raise(SIGINT);
        raise(SIGHUP);  // another signal is never a copy of the first
        std::exit(0);
      },
      testing::KilledBySignal(SIGHUP), "");
}

TEST(StopSignal, NamesTheSignals) {
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGHUP), "SIGHUP");
  EXPECT_EQ(signal_name(SIGUSR1), "signal " + std::to_string(SIGUSR1));
}

}  // namespace
}  // namespace gmb
