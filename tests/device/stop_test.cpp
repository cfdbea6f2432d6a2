// A real gmembench stopped by a signal mid-run: it exits 128 + N within seconds and leaves a
// JSON file that parses, holds every finished benchmark whole and says it was interrupted,
// which gmb compare reads. --gmb_skip_list leaves out exactly the benchmarks it names.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/device/binaries.hpp"
#include "tests/device/gpu.hpp"

extern char** environ;

namespace gmb::test {
namespace {

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

pid_t spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  return posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0 ? pid : -1;
}

/// The exit status, or -1 if it did not exit within `seconds` (it is then killed).
int wait_for(pid_t pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

TEST(BinaryOnGpu, StoppedBySigtermItKeepsEveryFinishedBenchmarkInReadableJson) {
  GMB_REQUIRE_GPU();
  const std::string out = ::testing::TempDir() + "gmb_stopped.json";
  std::remove(out.c_str());
  const pid_t pid = spawn({GMB_BINARY_DEFAULT, "--gmb_bytes=256M", "--benchmark_repetitions=3",
                           "--benchmark_filter=^(read|write|copy)/", "--benchmark_out=" + out,
                           "--benchmark_out_format=json"});
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (text_of(out).find("\"run_type\": \"aggregate\"") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGTERM);
  const auto stopped_at = std::chrono::steady_clock::now();
  EXPECT_EQ(wait_for(pid, 30), 128 + SIGTERM);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count(),
            5.0);

  // Google Benchmark writes NaN (a cv of constant counters), which JSON and nlohmann lack.
  const std::string text =
      std::regex_replace(text_of(out), std::regex(R"(: -?(NaN|Infinity))"), ": null");
  const nlohmann::json doc = nlohmann::json::parse(text);
  const std::string interrupted = doc.at("context").at("gmb_interrupted");
  EXPECT_EQ(interrupted.rfind("SIGTERM after ", 0), 0u) << interrupted;
  std::map<std::string, int> runs;
  for (const auto& b : doc.at("benchmarks")) {
    EXPECT_FALSE(b.value("error_occurred", false))
        << b.at("name");  // skipped by the stop: left out
    if (b.at("run_type") == "iteration") ++runs[b.at("run_name").get<std::string>()];
  }
  EXPECT_GE(runs.size(), 1u);
  const std::string registered = doc.at("context").at("gmb_benchmarks");
  EXPECT_LT(runs.size(), std::stoul(registered)) << "the stop came too late to test anything";
  for (const auto& [name, count] : runs) EXPECT_EQ(count, 3) << name << " is not whole";
  EXPECT_NE(interrupted.find(std::to_string(runs.size()) + " of " + registered), std::string::npos)
      << interrupted;

  const result compared =
      run("python3 " GMB_SOURCE_DIR "/scripts/gmb compare " + out + " " + out + " --all");
  EXPECT_EQ(compared.exit_code, 0) << compared.output;
  EXPECT_NE(compared.output.find("read/"), std::string::npos) << compared.output;
}

TEST(BinaryOnGpu, StoppedUnderRandomInterleavingItEndsCleanlyWithOnlyWholeBenchmarks) {
  // Google Benchmark's statistics abort on a benchmark whose skipped repetitions report other
  // iterations than its run ones (include/gmb/stop_gate.hpp).
  GMB_REQUIRE_GPU();
  const std::string out = ::testing::TempDir() + "gmb_interleaved.json";
  std::remove(out.c_str());
  // Over a hundred benchmarks: a round of repetitions takes longer than the wait, so the stop
  // lands mid-run (the host test, output_file_test.cpp, stops in the last round on purpose).
  const pid_t pid = spawn({GMB_BINARY_DEFAULT, "--gmb_bytes=256M", "--benchmark_repetitions=3",
                           "--benchmark_enable_random_interleaving=true",
                           "--benchmark_filter=^(read|write|copy|offset|stride)/",
                           "--benchmark_out=" + out, "--benchmark_out_format=json"});
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  kill(pid, SIGTERM);
  EXPECT_EQ(wait_for(pid, 60), 128 + SIGTERM);
  const std::string text =
      std::regex_replace(text_of(out), std::regex(R"(: -?(NaN|Infinity))"), ": null");
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc.at("context").at("gmb_interrupted").get<std::string>().rfind("SIGTERM after ", 0),
            0u);
  std::map<std::string, int> runs;
  for (const auto& b : doc.at("benchmarks")) {
    if (b.at("run_type") == "iteration") ++runs[b.at("run_name").get<std::string>()];
  }
  for (const auto& [name, count] : runs) EXPECT_EQ(count, 3) << name << " is not whole";
}

std::vector<std::string> listed(const std::string& args) {
  const result r = run(std::string(GMB_BINARY_DEFAULT) + " --gmb_bytes=64M " + args +
                       " --benchmark_list_tests=true");
  std::vector<std::string> names;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.rfind("gmembench", 0) != 0) names.push_back(line);
  }
  return names;
}

TEST(BinaryFlags, UnreadableSkipListIsAOneLineError) {
  const result r = run(std::string(GMB_BINARY_DEFAULT) + " --gmb_skip_list=/nonexistent/skip");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "gmembench: error: --gmb_skip_list: cannot read '/nonexistent/skip'\n");
}

TEST(BinaryOnGpu, SkipListLeavesOutExactlyTheNamedBenchmarks) {
  GMB_REQUIRE_GPU();
  const std::string filter = "--benchmark_filter=^copy/";
  const std::vector<std::string> all = listed(filter);
  ASSERT_GE(all.size(), 3u);
  const std::string skip = ::testing::TempDir() + "gmb_skip.txt";
  // With and without Google Benchmark's suffix, as gmb writes it and as a user may copy it.
  std::ofstream(skip) << all[0] << "\n"
                      << all[1].substr(0, all[1].size() - std::string("/manual_time").size())
                      << "\n";
  const std::vector<std::string> rest = listed(filter + " --gmb_skip_list=" + skip);
  EXPECT_EQ(rest, std::vector<std::string>(all.begin() + 2, all.end()));

  std::ofstream(skip, std::ios::trunc) << "";
  for (const auto& name : all) std::ofstream(skip, std::ios::app) << name << "\n";
  const result none = run(std::string(GMB_BINARY_DEFAULT) + " --gmb_bytes=64M " + filter +
                          " --gmb_skip_list=" + skip);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.output.find("nothing left to run"), std::string::npos) << none.output;
}

}  // namespace
}  // namespace gmb::test
