// The built gmembench binaries as a user runs them: one-line errors for bad input everywhere,
// the "no CUDA device" message without a GPU, and with a GPU a tiny filtered run per flavor
// whose JSON carries the flavor, the device context and the counters of docs/design.md.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "include/gmb/screen.hpp"
#include "tests/device/binaries.hpp"
#include "tests/device/gpu.hpp"

namespace {

using gmb::test::binary_of;
using gmb::test::result;
using gmb::test::run;

void expect_one_line_error(const std::string& args, const std::string& fragment) {
  const result r = run(std::string(GMB_BINARY_DEFAULT) + " " + args);
  EXPECT_NE(r.exit_code, 0) << args;
  EXPECT_NE(r.output.find("gmembench: error: " + fragment), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
}

TEST(BinaryFlags, BadValuesAreOneLineErrors) {
  expect_one_line_error("--gmb_bytes=12Q", "--gmb_bytes:");
  expect_one_line_error("--gmb_bytes", "--gmb_bytes needs a value");
  expect_one_line_error("--device=abc", "--device: 'abc' is not a GPU index");
  expect_one_line_error("--gmb_nonsense", "unknown flag '--gmb_nonsense'");
  expect_one_line_error("--gmb_sweep=fast", "--gmb_sweep: 'fast' is not quick, full or screen");
}

TEST(BinaryFlags, UnknownBenchmarkFlagFails) {
  const result r = run(std::string(GMB_BINARY_DEFAULT) + " --benchmark_nonsense=1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("unrecognized"), std::string::npos) << r.output;
}

TEST(BinaryWithoutGpu, SaysNoCudaDevice) {
  if (gmb::test::has_gpu()) GTEST_SKIP() << "a GPU is present";
  expect_one_line_error("", "no CUDA device found");
  expect_one_line_error("--gmb_info", "no CUDA device found");
}

TEST(BinaryOnGpu, WorkingSetLargerThanFreeMemoryIsRefused) {
  GMB_REQUIRE_GPU();
  // Leave the binary less than 1 GiB of free memory, then ask it for two 1-GiB arrays.
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  void* hog = nullptr;
  const std::size_t leave = std::size_t(768) << 20;
  ASSERT_GT(free_bytes, leave);
  ASSERT_EQ(cudaMalloc(&hog, free_bytes - leave), cudaSuccess);
  expect_one_line_error("--gmb_bytes=1G", "the working set needs");
  cudaFree(hog);
  cudaDeviceReset();  // this process's context would count as another process in later runs
}

TEST(BinaryOnGpu, DeviceOutOfRangeIsRefused) {
  GMB_REQUIRE_GPU();
  expect_one_line_error("--device=999", "--device=999: this machine has");
}

TEST(BinaryOnGpu, LocalKernelsCountTheirLoopsAndTheirLocalStores) {
  GMB_REQUIRE_GPU();
  if (std::string(GMB_CUOBJDUMP).empty()) GTEST_SKIP() << "no SASS listing (no cuobjdump)";
  const std::string out = ::testing::TempDir() + "gmb_local.json";
  const result r = run(std::string(GMB_BINARY_DEFAULT) +
                       " --gmb_bytes=8M --benchmark_min_time=0.01 --benchmark_repetitions=1"
                       " --benchmark_filter='^(model/)?local/(array/index:(static|uniform)/size:32|"
                       "spill)' --benchmark_out_format=json --benchmark_out=" + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream file(out);
  const nlohmann::json json = nlohmann::json::parse(file);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& b : json.at("benchmarks")) {
    const std::string name = b.at("name");
    by_name[name.substr(0, name.find("/manual_time"))] = b;
  }
  auto counter = [&](const std::string& name, const char* key) {
    const auto found = by_name.find(name);
    return found == by_name.end() ? -1.0 : found->second.value(key, 0.0);
  };
  const char* spill = "local/spill/live:64/regs:32";
  const char* probe = "model/local/spill/live:64/regs:32/rounds:8";
  // the spill's loop runs 16 rounds, the probe's 8: the same path and body, eight bodies more
  const double body = (counter(spill, "model_warp_instructions") -
                       counter(probe, "model_warp_instructions")) / 8;
  EXPECT_GT(body, 64) << "a round updates 64 values";
  EXPECT_GT(counter(probe, "model_local_store_lines"), 0.0);  // it spills in every round
  EXPECT_GT(counter(spill, "model_local_store_lines"), counter(probe, "model_local_store_lines"));
  // every register it wants: nothing spilled; an array indexed at run time is stored whole
  EXPECT_EQ(counter("local/spill/live:64/regs:255", "model_local_store_lines"), 0.0);
  EXPECT_GT(counter("local/spill/live:64/regs:255", "model_warp_instructions"), 16 * 64);
  EXPECT_GE(counter("local/array/index:uniform/size:32", "model_local_store_lines"), 32.0);
  EXPECT_EQ(counter("local/array/index:static/size:32", "model_local_store_lines"), 0.0);
  EXPECT_GT(counter("local/array/index:static/size:32", "model_warp_instructions"), 64.0);
}

class FlavorSmoke : public ::testing::TestWithParam<std::string> {};

TEST_P(FlavorSmoke, TinyFilteredRunWritesCompleteJson) {
  GMB_REQUIRE_GPU();
  const std::string flavor = GetParam();
  const std::string binary = binary_of(flavor);
  const std::string out = ::testing::TempDir() + "gmb_smoke_" + flavor + ".json";
  const result r =
      run(binary +
          " --gmb_bytes=8M --benchmark_min_time=0.01"
          " --benchmark_filter='^(ref/mem(cpy_d2d|set)|copy/f32x4/ilp:4/|read/f32/ilp:1/)'"
          " --benchmark_out_format=json --benchmark_out=" +
          out);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::ifstream file(out);
  const nlohmann::json json = nlohmann::json::parse(file);
  const auto& context = json.at("context");
  EXPECT_EQ(context.at("gmb_flavor"), flavor);
  for (const char* key :
       {"gpu_name", "gpu_cc", "gpu_sms", "gpu_l2_bytes", "gpu_peak_gbs", "gpu_mem_clock_khz",
        "gpu_bus_bits", "ecc", "driver", "cuda_runtime", "git_sha", "gmb_array_bytes"}) {
    EXPECT_TRUE(context.contains(key)) << key;
  }
  EXPECT_EQ(context.at("gmb_array_bytes"), std::to_string(8 << 20));

  EXPECT_EQ(context.at("health_nvml"), "on");
  EXPECT_TRUE(context.contains("gpu_uuid"));
  EXPECT_TRUE(context.contains("nvidia_driver"));

  const auto& benchmarks = json.at("benchmarks");
  ASSERT_EQ(benchmarks.size(), 6u);  // 2 refs + copy and read on both grids
  // A quiet GPU: no health flag, and no warning on the console.
  EXPECT_EQ(r.output.find("gmembench: warning"), std::string::npos) << r.output;
  for (const auto& b : benchmarks) {
    const std::string name = b.at("name");
    EXPECT_EQ(name.find("min_time"), std::string::npos) << name;
    EXPECT_EQ(b.at("health_flags").get<double>(), 0.0) << name;
    EXPECT_GT(b.at("health_sm_mhz_min").get<double>(), 0.0) << name;
    EXPECT_FALSE(b.value("error_occurred", false)) << name << ": " << b.value("error_message", "");
    EXPECT_GT(b.at("bytes_per_second").get<double>(), 0.0) << name;
    EXPECT_GT(b.at("pct_peak").get<double>(), 0.0) << name;
    if (name.rfind("ref/", 0) != 0) {
      EXPECT_GT(b.at("model_sectors_per_req").get<double>(), 0.0) << name;
      EXPECT_DOUBLE_EQ(b.at("model_efficiency").get<double>(), 1.0) << name;
      // the kernel's instructions, from the SASS listing the build wrote beside the binary
      if (std::string(GMB_CUOBJDUMP).empty()) continue;
      EXPECT_GT(b.at("model_warp_instructions").get<double>(), 5.0) << name;
      EXPECT_LT(b.at("model_warp_instructions").get<double>(), 200.0) << name;
    }
  }
}

std::vector<std::string> listed(const std::string& args) {
  const result r = run(std::string(GMB_BINARY_DEFAULT) + " --benchmark_list_tests " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> names;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find('/') != std::string::npos && line.rfind("gmembench:", 0) != 0) {
      names.push_back(line);
    }
  }
  return names;
}

#ifdef GMB_BENCHMARK_MIN_TIME_SUFFIX
constexpr const char* kMinTimeFlag = "--benchmark_min_time=0.05s";
#else
constexpr const char* kMinTimeFlag = "--benchmark_min_time=0.05";
#endif

TEST(BinaryOnGpu, NamesAreTheSameWithAndWithoutMinTime) {
  GMB_REQUIRE_GPU();
  const std::string filter = " --benchmark_filter='^(ref/mem(cpy_d2d|set)|copy/f32x4/ilp:1/)'";
  const auto plain = listed(filter);
  EXPECT_EQ(plain.size(), 4u);
  EXPECT_EQ(listed(filter + " " + kMinTimeFlag), plain);
  for (const auto& name : plain) EXPECT_EQ(name.find("min_time"), std::string::npos) << name;

  // And in the JSON of a run without the flag.
  const std::string out = ::testing::TempDir() + "gmb_names.json";
  const result r = run(std::string(GMB_BINARY_DEFAULT) +
                       " --gmb_bytes=8M --benchmark_filter='^ref/memset$'"
                       " --benchmark_out_format=json --benchmark_out=" +
                       out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream file(out);
  const nlohmann::json json = nlohmann::json::parse(file);
  ASSERT_EQ(json.at("benchmarks").size(), 1u);
  EXPECT_EQ(json.at("benchmarks")[0].at("name"), "ref/memset/manual_time");
}

// At the default array size (the device tests' small arrays register fewer working sets).
TEST(BinaryOnGpu, ScreeningSweepListsTheScreeningBenchmarks) {
  GMB_REQUIRE_GPU();
  auto names = listed(" --gmb_sweep=screen");
  for (auto& name : names) name = name.substr(0, name.rfind("/manual_time"));
  std::vector<std::string> expected(gmb::kScreenBenchmarks.begin(), gmb::kScreenBenchmarks.end());
  const result info = run(std::string(GMB_BINARY_DEFAULT) + " --gmb_info");
  ASSERT_EQ(info.exit_code, 0) << info.output;
  const std::size_t open = info.output.find('{'), close = info.output.rfind('}');
  ASSERT_NE(open, std::string::npos) << info.output;
  const auto peer = nlohmann::json::parse(info.output.substr(open, close - open + 1))
                        .at("gmb_peer_partner")
                        .get<std::string>();
  if (peer.rfind("none", 0) != 0) {  // a partner: the peer family, and its screening copies
    expected.insert(expected.end(), gmb::kScreenPeerBenchmarks.begin(),
                    gmb::kScreenPeerBenchmarks.end());
  }
  std::sort(names.begin(), names.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
}

TEST(BinaryOnGpu, FiltersMatchTheNamesWithoutManualTime) {
  GMB_REQUIRE_GPU();
  EXPECT_EQ(listed("--benchmark_filter='^copy/f32x4/ilp:1/grid:full$'"),
            std::vector<std::string>{"copy/f32x4/ilp:1/grid:full/manual_time"});
  EXPECT_EQ(listed("--benchmark_filter='^copy/f32x4/ilp:1/grid:full/manual_time$'"),
            std::vector<std::string>{"copy/f32x4/ilp:1/grid:full/manual_time"});
  expect_one_line_error("--benchmark_filter='^nothing/'", "no benchmark matched the filter");
  expect_one_line_error("--benchmark_filter='copy/(f32'", "--benchmark_filter:");
}

/// The families built once run in the default flavor; the caching builds skip them and say so,
/// unless --gmb_every_flavor.
TEST(BinaryOnGpu, CachingBuildsRunTheOtherPathsOnlyWhenAsked) {
  GMB_REQUIRE_GPU();
  const std::string constant = " --benchmark_list_tests --benchmark_filter='^constant/'";
  const result skipped = run(std::string(GMB_BINARY_CG) + constant);
  EXPECT_NE(skipped.exit_code, 0);
  EXPECT_NE(skipped.output.find("gmembench: error: the filter '^constant/' matched only"),
            std::string::npos)
      << skipped.output;
  EXPECT_NE(skipped.output.find("--gmb_every_flavor"), std::string::npos) << skipped.output;
  const result asked = run(std::string(GMB_BINARY_CG) + constant + " --gmb_every_flavor");
  EXPECT_EQ(asked.exit_code, 0) << asked.output;
  EXPECT_EQ(listed("--benchmark_filter='^constant/'").size(), 11u);
  EXPECT_NE(asked.output.find("constant/read/distinct:32/ws:1024/path:constant"), std::string::npos)
      << asked.output;
}

// ---- The peer family's flags: --gmb_peer_partner=J, --gmb_peer=all|skip|only ----

TEST(BinaryFlags, PeerFlagsBadValuesAreOneLineErrors) {
  expect_one_line_error("--gmb_peer=none", "--gmb_peer: 'none' is not all, skip or only");
  expect_one_line_error("--gmb_peer_partner=x", "--gmb_peer_partner: 'x' is not a GPU index");
  expect_one_line_error("--gmb_peer_partner", "--gmb_peer_partner needs a value");
}

TEST(BinaryFlags, PatternFlagsBadValuesAreOneLineErrors) {
  expect_one_line_error("--gmb_pattern=i --gmb_pattern_n=0",
                        "--gmb_pattern_n: '0' is not a whole number of 1 or more");
  expect_one_line_error("--gmb_pattern=i --gmb_pattern_threads=-5",
                        "--gmb_pattern_threads: '-5' is not a whole number of 1 or more");
  expect_one_line_error("--gmb_pattern=i --gmb_pattern_bytes=12Q", "--gmb_pattern_bytes:");
  expect_one_line_error("--gmb_pattern=i --gmb_pattern_k=0", "--gmb_pattern_k: '0' is not");
  expect_one_line_error("--gmb_pattern_op=read", "--gmb_pattern_op needs --gmb_pattern=EXPR");
  expect_one_line_error("--gmb_pattern=i --gmb_pattern_oops=1",
                        "unknown flag '--gmb_pattern_oops=1'");
}

TEST(BinaryOnGpu, PatternErrorsStopTheRunWithOneLine) {
  GMB_REQUIRE_GPU();
  expect_one_line_error("'--gmb_pattern=i +' --gmb_bytes=64M",
                        "--gmb_pattern 'i +': NVRTC: error: expected an expression");
  expect_one_line_error("'--gmb_pattern=i + 1' --gmb_bytes=64M",
                        "--gmb_pattern 'i + 1': thread i=16777215 touches element 16777216");
  expect_one_line_error("'--gmb_pattern=i % (k - k)' --gmb_bytes=64M",
                        "--gmb_pattern 'i % (k - k)': thread i=0 divides by zero");
  expect_one_line_error("--gmb_pattern=i --gmb_pattern_word=f32x4 --gmb_pattern_bytes=1000",
                        "--gmb_pattern_bytes: 1000 bytes is not a whole number of 16-byte words");
}

int gpu_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

/// The JSON object --gmb_info prints (with the device's other arguments).
nlohmann::json gmb_info(const std::string& args = "") {
  const result r = run(std::string(GMB_BINARY_DEFAULT) + " --gmb_info " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::size_t open = r.output.find('{'), close = r.output.rfind('}');
  if (open == std::string::npos || close == std::string::npos) return nlohmann::json::object();
  return nlohmann::json::parse(r.output.substr(open, close - open + 1));
}

bool touches_another_gpu(const std::string& name) {
  return name.rfind("peer/", 0) == 0 || name.rfind("ref/memcpy_peer/", 0) == 0;
}

TEST(BinaryOnGpu, PeerPartnerThatCannotBeIsRefused) {
  GMB_REQUIRE_GPU();
  // The GPU under test itself, and a GPU past the last (with one GPU: no partner at all).
  expect_one_line_error(
      "--gmb_peer_partner=0 --benchmark_list_tests",
      gpu_count() < 2 ? "--gmb_peer_partner=0: one GPU visible" : "--gmb_peer_partner=0: GPU 0 is");
  expect_one_line_error("--gmb_peer_partner=999 --benchmark_list_tests",
                        gpu_count() < 2 ? "--gmb_peer_partner=999: one GPU visible"
                                        : "--gmb_peer_partner=999: this machine has");
}

TEST(BinaryOnGpu, PeerScopeSkipDropsAndOnlyKeepsTheCasesTouchingAnotherGpu) {
  GMB_REQUIRE_GPU();
  const auto skipped = listed("--gmb_bytes=8M --gmb_peer=skip");
  EXPECT_GT(skipped.size(), 100u);
  for (const auto& name : skipped) EXPECT_FALSE(touches_another_gpu(name)) << name;
  const auto info = gmb_info("--gmb_peer=skip");
  EXPECT_EQ(info.value("gmb_peer", ""), "skip");
  EXPECT_TRUE(info.contains("gpu_nvlinks_nvml"));  // what this driver says of NVLink
  if (gpu_count() < 2) {
    expect_one_line_error("--gmb_bytes=8M --gmb_peer=only --benchmark_list_tests",
                          "--gmb_peer=only: no benchmark that touches another GPU (no partner:");
    return;
  }
  const auto only = listed("--gmb_bytes=8M --gmb_peer=only");
  ASSERT_FALSE(only.empty());
  for (const auto& name : only) EXPECT_TRUE(touches_another_gpu(name)) << name;
  const std::set<std::string> names(only.begin(), only.end());
  for (const char* name :
       {"peer/copy/f32x4/ilp:4/dir:both/manual_time", "peer/chase/ws:1048576/lanes:1/manual_time",
        "ref/memcpy_peer/dir:both/manual_time"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
}

/// With two GPUs or more: the last GPU as GPU 0's partner, both directions at once by the
/// kernels and the copy engine, every pct_peak of the link at most 100.
TEST(BinaryOnGpu, PeerPairRunsBothWaysAtOnceWithinTheLink) {
  GMB_REQUIRE_GPU();
  const int count = gpu_count();
  if (count < 2) GTEST_SKIP() << "one GPU: no peer";
  const auto info = gmb_info("--gmb_peer_partner=" + std::to_string(count - 1));
  if (info.value("gmb_peer_partner", "").rfind("none", 0) == 0) {
    GTEST_SKIP() << "no peer access: " << info.value("gmb_peer_partner", "");
  }
  EXPECT_EQ(info.value("gmb_peer_partner", ""), std::to_string(count - 1));
  EXPECT_EQ(info.value("gmb_peer_partner_source", ""), "--gmb_peer_partner");
  EXPECT_EQ(info.value("gmb_peer_both", ""), "push");  // dir:both: each GPU pushes
  for (const char* key :
       {"gpu_peer_link", "gpu_peer_link_gbs", "gpu_peer_links", "gpu_peer_link_source"}) {
    EXPECT_TRUE(info.contains(key)) << key;
  }
  const std::string out = ::testing::TempDir() + "gmb_peer_both.json";
  const result r = run(std::string(GMB_BINARY_DEFAULT) + " --gmb_bytes=64M --gmb_peer=only" +
                       " --gmb_peer_partner=" + std::to_string(count - 1) +
                       " --benchmark_min_time=0.01 --benchmark_filter='/dir:(both|pull)$'"
                       " --benchmark_out_format=json --benchmark_out=" +
                       out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream file(out);
  const nlohmann::json json = nlohmann::json::parse(file);
  EXPECT_EQ(json.at("context").at("gmb_peer_partner"), std::to_string(count - 1));
  std::set<std::string> names;
  for (const auto& b : json.at("benchmarks")) {
    const std::string name = b.at("name");
    names.insert(name);
    EXPECT_FALSE(b.value("error_occurred", false)) << name << ": " << b.value("error_message", "");
    EXPECT_GT(b.at("bytes_per_second").get<double>(), 0.0) << name;
    if (json.at("context").at("gpu_peer_link_gbs") != "0.00") {
      EXPECT_LE(b.at("pct_peak").get<double>(), 100.0) << name;
    }
  }
  EXPECT_EQ(names.count("peer/copy/f32x4/ilp:4/dir:both/manual_time"), 1u);
  EXPECT_EQ(names.count("ref/memcpy_peer/dir:both/manual_time"), 1u);
}

/// Starts the competitor and waits until it streams; pclose() waits for its end.
FILE* start_hog(double seconds) {
  FILE* hog = popen((std::string(GMB_STREAM_HOG) + " " + std::to_string(seconds)).c_str(), "r");
  char line[64] = {};
  if (hog && !std::fgets(line, sizeof(line), hog)) {
    pclose(hog);
    return nullptr;
  }
  return hog;
}

TEST(BinaryOnGpu, AnotherProcessOnTheGpuIsFlaggedAndWarned) {
  GMB_REQUIRE_GPU();
  FILE* hog = start_hog(20);
  ASSERT_NE(hog, nullptr) << "the competing process did not start";
  const std::string out = ::testing::TempDir() + "gmb_health.json";
  const std::string health = ::testing::TempDir() + "gmb_health_state.json";
  const result r = run(
      std::string(GMB_BINARY_DEFAULT) +
      " --gmb_bytes=256M --benchmark_filter='^(ref/mem(cpy_d2d|set)|copy/f32x4/ilp:1/grid:full)'"
      " --gmb_health_out=" +
      health + " --benchmark_out_format=json --benchmark_out=" + out);
  pclose(hog);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gmembench: warning: GPU 0: another process on the GPU (pid "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("benchmarks ran under: another process on the GPU"), std::string::npos)
      << r.output;
  std::ifstream file(out);
  const nlohmann::json json = nlohmann::json::parse(file);
  for (const auto& b : json.at("benchmarks")) {
    const auto flags = static_cast<unsigned>(b.at("health_flags").get<double>());
    EXPECT_TRUE(flags & 1u) << b.at("name");
  }
  std::ifstream state_file(health);
  const nlohmann::json state = nlohmann::json::parse(state_file);
  EXPECT_EQ(state.at("nvml"), "on");
  EXPECT_EQ(state.at("flagged").size(), 3u);
  EXPECT_NE(state.at("start").at("other_pids"), "none");
}

INSTANTIATE_TEST_SUITE_P(Flavors, FlavorSmoke, ::testing::Values("default", "ca", "cg"),
                         [](const auto& info) { return info.param; });

}  // namespace
