// The run's output file: closed whole after a clean end, a stop (its note in place) or a write
// fault; on a file system that fills (GMB_SMALL_FS_DIR: a small tmpfs that
// tests/host/with_small_tmpfs.sh mounts) it keeps every whole benchmark and closes without one
// more byte of free space. A stop under random interleaving does not abort the run.
#include "gmb/output_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <map>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "gmb/result_file.hpp"
#include "gmb/stop_gate.hpp"
#include "tests/host/fake_runs.hpp"

namespace gmb {
namespace {

using test::benchmark_of;

std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Google Benchmark writes NaN and Infinity, which JSON lacks.
nlohmann::json parsed_file(const std::string& path) {
  return nlohmann::json::parse(
      std::regex_replace(text_of(path), std::regex(R"(: -?(NaN|Infinity))"), ": null"));
}

/// A JSON reporter writing through `file`, keeping everything, its context written.
std::unique_ptr<kept_reporter> reporting_to(output_file& file, std::string* fault = nullptr) {
  auto reporter = std::make_unique<kept_reporter>(
      std::make_unique<benchmark::JSONReporter>(), [](const std::string&) { return false; },
      [fault](const std::string& why) {
        if (fault) *fault = why;
      },
      &file);
  reporter->ReportContext(benchmark::BenchmarkReporter::Context());
  return reporter;
}

off_t allocated_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? off_t(st.st_blocks) * 512 : -1;
}

TEST(OutputFile, ACleanRunIsValidJsonWithoutANoteAndNothingReservedBeyondItsEnd) {
  const std::string path = testing::TempDir() + "output_file_clean.json";
  output_file file(path);
  const auto reporter = reporting_to(file);
  reporter->ReportRuns(benchmark_of("a"));
  reporter->ReportRuns(benchmark_of("b"));
  reporter->Finalize();
  EXPECT_EQ(reporter->close_file(""), "");
  const auto doc = parsed_file(path);
  EXPECT_EQ(doc["benchmarks"].size(), 4u);
  EXPECT_FALSE(doc["context"].contains("gmb_interrupted"));
  const off_t size = off_t(text_of(path).size());
  EXPECT_LE(allocated_bytes(path), (size + 65535) / 4096 * 4096) << "the reserve was kept";
  std::remove(path.c_str());
}

TEST(OutputFile, AStopsNoteGoesInItsRoomInPlaceAndTheFileKeepsItsSize) {
  const std::string plain = testing::TempDir() + "output_file_plain.json";
  const std::string noted = testing::TempDir() + "output_file_noted.json";
  for (const std::string* path : {&plain, &noted}) {
    output_file file(*path);
    const auto reporter = reporting_to(file);
    reporter->ReportRuns(benchmark_of("a"));
    reporter->Finalize();
    EXPECT_EQ(reporter->close_file(path == &noted ? "SIGTERM after 1 of 3 \"benchmarks\"" : ""),
              "");
  }
  EXPECT_EQ(text_of(plain).size(), text_of(noted).size());
  const auto doc = parsed_file(noted);
  EXPECT_EQ(doc["context"]["gmb_interrupted"], "SIGTERM after 1 of 3 \"benchmarks\"");
  EXPECT_EQ(doc["benchmarks"].size(), 2u);
  std::remove(plain.c_str());
  std::remove(noted.c_str());
}

TEST(OutputFile, ANoteLongerThanItsRoomIsCutShort) {
  const std::string text = output_file::note_text(std::string(1000, 'x'));
  EXPECT_EQ(text.size(), output_file::kNoteRoom);
  EXPECT_NE(text.find("...\","), std::string::npos);
}

TEST(OutputFile, AFolderThatIsNotThereIsNamedInTheError) {
  try {
    output_file file("/nonexistent-gmb-folder/x.json");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-gmb-folder/x.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos);
  }
}

TEST(OutputFile, AUtf8CharacterCutByTheRoomIsReplacedNotThrown) {
  std::string note;
  for (int i = 0; i < 400; ++i) note += "\xc3\xa9";  // é, two bytes each
  EXPECT_EQ(output_file::note_text(note).size(), output_file::kNoteRoom);
}

TEST(OutputFile, NothingReportedLeavesTheFileEmpty) {
  // --benchmark_list_tests: Google Benchmark reports nothing, not even the context.
  const std::string path = testing::TempDir() + "output_file_nothing.json";
  output_file file(path);
  kept_reporter reporter(std::make_unique<benchmark::JSONReporter>(),
                         [](const std::string&) { return false; }, {}, &file);
  EXPECT_EQ(reporter.close_file(""), "");
  EXPECT_EQ(text_of(path), "");
  std::remove(path.c_str());
}

TEST(OutputFile, ACsvFileGetsNoJsonClosing) {
  const std::string path = testing::TempDir() + "output_file.csv";
  output_file file(path);
  kept_reporter reporter(file_reporter_for("csv"), [](const std::string&) { return false; }, {},
                         &file);
  reporter.ReportContext(benchmark::BenchmarkReporter::Context());
  reporter.ReportRuns(benchmark_of("a"));
  reporter.Finalize();
  EXPECT_EQ(reporter.close_file("SIGTERM after 1 of 2 benchmarks"), "");
  const std::string text = text_of(path);
  EXPECT_NE(text.find("\"a/manual_time\""), std::string::npos) << text;
  EXPECT_EQ(text.find(']'), std::string::npos) << text;
  std::remove(path.c_str());
}

TEST(OutputFile, APipeIsWrittenAsAStreamAndLeftWhereItIs) {
  // /dev/stdout, `>(...)`: no reserve, no note, nothing cut or removed.
  const std::string path = testing::TempDir() + "output_file_fifo";
  std::remove(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const int reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  {
    output_file file(path);
    const auto reporter = reporting_to(file);
    reporter->ReportRuns(benchmark_of("a"));
    reporter->Finalize();
    EXPECT_EQ(reporter->close_file("SIGTERM after 1 of 2 benchmarks"), "");
  }
  std::string text;
  char chunk[4096];
  for (ssize_t n; (n = ::read(reader, chunk, sizeof chunk)) > 0;) text.append(chunk, size_t(n));
  ::close(reader);
  const auto doc = nlohmann::json::parse(
      std::regex_replace(text, std::regex(R"(: -?(NaN|Infinity))"), ": null"));
  EXPECT_EQ(doc["benchmarks"].size(), 2u);
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << "the pipe was removed";
  std::remove(path.c_str());
}

/// The second benchmark's median written past a file size limit (as on a full disk); 0 when
/// the fault was seen, the file closed and one benchmark counted.
int fault_in_aggregates(const std::string& path) {
  auto median_of = [](const std::string& name) {
    benchmark::BenchmarkReporter::Run median = test::run_of(name, 0);
    median.run_type = benchmark::BenchmarkReporter::Run::RT_Aggregate;
    median.aggregate_name = "median";
    return std::vector<benchmark::BenchmarkReporter::Run>{median};
  };
  std::signal(SIGXFSZ, SIG_IGN);
  std::string fault;
  output_file file(path);
  const auto reporter = reporting_to(file, &fault);
  const off_t context = off_t(text_of(path).size());
  reporter->ReportRuns(benchmark_of("a"));
  const off_t repetitions = off_t(text_of(path).size()) - context + 2;  // and ",\n"
  reporter->ReportRuns(median_of("a"));
  rlimit size{};
  size.rlim_cur = size.rlim_max = rlim_t(off_t(text_of(path).size()) + repetitions + 8);
  ::setrlimit(RLIMIT_FSIZE, &size);
  reporter->ReportRuns(benchmark_of("b"));
  reporter->ReportRuns(median_of("b"));
  reporter->Finalize();
  const int kept = reporter->kept();
  const bool closed = reporter->close_file("write fault (" + fault + ")").empty();
  return !fault.empty() && closed && kept == 1 ? 0 : 1;
}

TEST(OutputFileDeathTest, AFaultInABenchmarksAggregatesLeavesItOut) {
  // The file holds the first benchmark whole, and the count agrees.
  const std::string path = testing::TempDir() + "output_file_aggregates.json";
  EXPECT_EXIT(std::exit(fault_in_aggregates(path)), testing::ExitedWithCode(0), "");
  const auto doc = parsed_file(path);
  ASSERT_EQ(doc["benchmarks"].size(), 3u);  // a's two repetitions and its median
  for (const auto& b : doc["benchmarks"]) EXPECT_EQ(b["run_name"], "a/manual_time");
  EXPECT_TRUE(doc["context"].contains("gmb_interrupted"));
  std::remove(path.c_str());
}

TEST(WriteWholeFile, WritesTheFileAndLeavesNoCopyBeside) {
  const std::string path = testing::TempDir() + "write_whole.json";
  write_whole_file(path, "{}\n");
  EXPECT_EQ(text_of(path), "{}\n");
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
  std::remove(path.c_str());
}

/// The small file system, or "" (the test is then skipped).
std::string small_fs() {
  const char* dir = std::getenv("GMB_SMALL_FS_DIR");
  return dir ? std::string(dir) + "/" : "";
}

/// Fills the file system: a file that takes every byte left (removed by the caller).
void fill(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::setvbuf(f, nullptr, _IONBF, 0);
  const std::string block(512, 'f');
  while (std::fwrite(block.data(), 1, block.size(), f) == block.size()) {
  }
  const std::string one(1, 'f');
  while (std::fwrite(one.data(), 1, 1, f) == 1) {
  }
  std::fclose(f);
}

TEST(OutputFileOnAFullDisk, ItStopsAtTheFaultAndClosesWithEveryWholeBenchmark) {
  const std::string dir = small_fs();
  if (dir.empty()) GTEST_SKIP() << "GMB_SMALL_FS_DIR is not set (tests/host/with_small_tmpfs.sh)";
  const std::string path = dir + "full.json";
  std::string fault;
  int written = 0;
  {
    output_file file(path);
    const auto reporter = reporting_to(file, &fault);
    for (int n = 0; fault.empty() && n < 100000; ++n) {
      reporter->ReportRuns(benchmark_of("b" + std::to_string(n)));
    }
    reporter->Finalize();
    ASSERT_NE(fault.find("No space left on device"), std::string::npos) << fault;
    EXPECT_NE(fault.find("free on its file system"), std::string::npos) << fault;
    written = reporter->kept();
    EXPECT_GT(written, 0);
    EXPECT_EQ(reporter->close_file("write fault (" + fault + ")"), "");
  }
  const auto doc = parsed_file(path);
  EXPECT_EQ(doc["benchmarks"].size(), 2u * std::size_t(written));
  EXPECT_NE(std::string(doc["context"]["gmb_interrupted"]).find("No space left"),
            std::string::npos);
  std::remove(path.c_str());
}

TEST(OutputFileOnAFullDisk, ItClosesWhenNotOneMoreByteCanBeWritten) {
  // Another program takes the last byte between two benchmarks: the reserve closes the file.
  const std::string dir = small_fs();
  if (dir.empty()) GTEST_SKIP() << "GMB_SMALL_FS_DIR is not set (tests/host/with_small_tmpfs.sh)";
  const std::string path = dir + "taken.json";
  const std::string filler = dir + "filler";
  std::string fault;
  int kept = 0;
  {
    output_file file(path);
    const auto reporter = reporting_to(file, &fault);
    reporter->ReportRuns(benchmark_of("a"));
    fill(filler);
    for (int n = 0; fault.empty() && n < 1000; ++n) {  // on in the reserve, until it is used up
      reporter->ReportRuns(benchmark_of("b" + std::to_string(n)));
    }
    reporter->Finalize();
    ASSERT_FALSE(fault.empty());
    kept = reporter->kept();
    EXPECT_EQ(reporter->close_file("write fault (" + fault + ")"), "");
  }
  const auto doc = parsed_file(path);
  EXPECT_EQ(doc["benchmarks"].size(), 2u * std::size_t(kept));
  EXPECT_EQ(doc["benchmarks"][0]["run_name"], "a/manual_time");
  EXPECT_TRUE(doc["context"].contains("gmb_interrupted"));
  std::remove(path.c_str());
  std::remove(filler.c_str());
}

TEST(OutputFileOnAFullDisk, AWholeFileWriteLeavesNeitherAHalfFileNorItsCopy) {
  const std::string dir = small_fs();
  if (dir.empty()) GTEST_SKIP() << "GMB_SMALL_FS_DIR is not set (tests/host/with_small_tmpfs.sh)";
  const std::string filler = dir + "filler";
  fill(filler);
  const std::string path = dir + "health.json";
  try {
    write_whole_file(path, std::string(100000, ' '));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos);
  }
  EXPECT_FALSE(std::ifstream(path).good());
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
  std::remove(filler.c_str());
}

/// Three benchmarks of three repetitions, interleaved at random; the seventh call asks to stop.
void run_interleaved_and_stopped(const std::string& out) {
  static const char* args[] = {"gmb_host_tests", "--benchmark_enable_random_interleaving=true",
                               "--benchmark_repetitions=3", "--benchmark_out=/dev/null"};
  int argc = 4;
  benchmark::Initialize(&argc, const_cast<char**>(args));
  static int calls = 0;
  for (const char* name : {"a", "b", "c"}) {
    benchmark::RegisterBenchmark(name, [name](benchmark::State& state) {
      if (++calls == 7) request_stop();  // in the last round: two repetitions of most ran
      if (skipped_for_stop(state, name)) return;
      for (auto _ : state) state.SetIterationTime(1e-6);
    })->UseManualTime()->Iterations(5);
  }
  output_file file(out);
  kept_reporter display(benchmark::CreateDefaultDisplayReporter(), skipped_by_stop);
  kept_reporter json(std::make_unique<benchmark::JSONReporter>(), skipped_by_stop, {}, &file);
  benchmark::RunSpecifiedBenchmarks(&display, &json);
  json.close_file("stopped");
}

TEST(StopGateDeathTest, AStopUnderRandomInterleavingEndsTheRunWithoutAnAbort) {
  const std::string out = testing::TempDir() + "interleaved.json";
  EXPECT_EXIT(
      {
        run_interleaved_and_stopped(out);
        std::exit(0);
      },
      testing::ExitedWithCode(0), "");
  // Only a benchmark whose repetitions all ran is in the file.
  const auto doc = parsed_file(out);
  std::map<std::string, int> runs;
  for (const auto& b : doc["benchmarks"]) {
    if (b["run_type"] == "iteration") ++runs[b["run_name"]];
  }
  for (const auto& [name, count] : runs) EXPECT_EQ(count, 3) << name;
  EXPECT_EQ(doc["context"]["gmb_interrupted"], "stopped");
  std::remove(out.c_str());
}

}  // namespace
}  // namespace gmb
