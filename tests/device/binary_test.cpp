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
#include "tests/device/gpu.hpp"

namespace {

struct result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

result run(const std::string& command) {
  result r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe)) r.output += buffer;
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

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

const char* binary_of(const std::string& flavor) {
  return flavor == "ca" ? GMB_BINARY_CA : flavor == "cg" ? GMB_BINARY_CG : GMB_BINARY_DEFAULT;
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
                        .at("gmb_peer")
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
  EXPECT_EQ(info.value("gmb_peer_scope", ""), "skip");
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
  if (info.value("gmb_peer", "").rfind("none", 0) == 0) {
    GTEST_SKIP() << "no peer access: " << info.value("gmb_peer", "");
  }
  EXPECT_EQ(info.value("gmb_peer", ""), std::to_string(count - 1));
  EXPECT_EQ(info.value("gmb_peer_partner", ""), "--gmb_peer_partner");
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
  EXPECT_EQ(json.at("context").at("gmb_peer"), std::to_string(count - 1));
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

using tokens = std::set<std::string>;

/// One kernel's global loads (LDG...) and stores (STG...) as sets of dot-separated tokens.
/// Tokens, not strings: modifier order varies (docs/design.md). `other` holds the kernel's other
/// memory instructions (local LDL/STL, constant LDC, texture TEX/TLD, surface SUST/SULD) whole,
/// operands included (LDC's bank tells a __constant__ table from the kernel's parameters).
struct kernel_sass {
  std::vector<tokens> loads, stores;
  std::vector<std::string> other;
};

/// A cheap look before the regex: whether a SASS line may hold an instruction of `other`.
bool mentions_other_access(const std::string& line) {
  for (const char* op : {"LDL", "STL", "LDC", "TEX", "TLD", "SUST", "SULD"}) {
    if (line.find(op) != std::string::npos) return true;
  }
  return false;
}

/// Every kernel of a binary by mangled name (a template instantiated in two files appears
/// twice in the binary; its instructions are pooled).
std::map<std::string, kernel_sass> disassemble(const std::string& binary) {
  // cuobjdump runs nvdisasm, which sits beside it (in the toolkit or in PyPI's packages).
  const std::string tool = GMB_CUOBJDUMP;
  const std::string dir = tool.substr(0, tool.find_last_of('/'));
  const result dump = run("PATH='" + dir + "':\"$PATH\" '" + tool + "' -sass " + binary);
  EXPECT_EQ(dump.exit_code, 0) << dump.output.substr(0, 500);
  std::map<std::string, kernel_sass> kernels;
  const std::regex function_line(R"(Function : (\S+))");
  const std::regex access(R"(\b(LDG|STG)(\.[A-Z0-9_]+)*)");
  const std::regex other_access(R"(\b(LDL|STL|LDC|TEX|TLD|SUST|SULD)(\.[A-Z0-9_]+)*[^;]*)");
  std::istringstream lines(dump.output);
  kernel_sass* current = nullptr;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, function_line)) {
      current = &kernels[m[1].str()];
    } else if (current && std::regex_search(line, m, access)) {
      tokens t;
      std::istringstream instruction(m[0].str());
      for (std::string part; std::getline(instruction, part, '.');) t.insert(part);
      (m[1] == "LDG" ? current->loads : current->stores).push_back(t);
    } else if (current && mentions_other_access(line) && std::regex_search(line, m, other_access)) {
      current->other.push_back(m[0].str());
    }
  }
  return kernels;
}

const std::map<std::string, kernel_sass>& sass_of(const std::string& flavor) {
  static std::map<std::string, std::map<std::string, kernel_sass>> cache;
  auto it = cache.find(flavor);
  if (it == cache.end()) it = cache.emplace(flavor, disassemble(binary_of(flavor))).first;
  return it->second;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// The mangled template argument of an explicit operator: cache_op or store_op value k.
std::string mangled_op(const char* op_type, int k) {
  return std::string(op_type) + "E" + std::to_string(k) + "E";
}

/// Whether a kernel's template arguments name an explicit load operator (cache_op 1..6).
bool explicit_load(const std::string& name) {
  for (int k = 1; k < 7; ++k) {
    if (contains(name, mangled_op("cache_op", k))) return true;
  }
  return false;
}

/// Kernels whose global loads -dlcm cannot change: CUB's reduction (ld.global.nc, built once
/// for every flavor), the transpose's cp.async tile (rung 9: the tile comes by LDGSTS), the
/// read-only path of `const __restrict__` pointers (LDG.E.CONSTANT), and the other paths'
/// families, compiled once for every flavor (namespace gmb::built_once).
bool loads_outside_dlcm(const std::string& name) {
  return contains(name, "3cub") || contains(name, "transpose_rungE9E") ||
         contains(name, "restrict_xor_reads") || contains(name, "10built_once");
}

/// Whether a kernel's template arguments name an explicit store operator (store_op 1..3).
bool explicit_store(const std::string& name) {
  for (int k = 1; k < 4; ++k) {
    if (contains(name, mangled_op("store_op", k))) return true;
  }
  return false;
}

#define GMB_REQUIRE_CUOBJDUMP()                              \
  do {                                                       \
    if (std::string(GMB_CUOBJDUMP).empty()) {                \
      GTEST_SKIP() << "no cuobjdump (scripts/setup --test)"; \
    }                                                        \
  } while (false)

/// The plain loads of the coalesced read and copy kernels are what the flavors change:
/// LDG.E (default), LDG.E.STRONG.SM (-dlcm=ca), LDG.E.STRONG.GPU (-dlcm=cg); never .CONSTANT.
TEST_P(FlavorSmoke, PlainLoadsCarryTheFlavorsCacheQualifier) {
  GMB_REQUIRE_CUOBJDUMP();
  const std::string flavor = GetParam();
  for (const char* kernel : {"coalesced_read", "coalesced_copy"}) {
    std::size_t loads = 0, wide = 0;
    for (const auto& [name, sass] : sass_of(flavor)) {
      if (!contains(name, kernel) || !contains(name, mangled_op("cache_op", 0))) continue;
      for (const auto& t : sass.loads) {
        ++loads;
        EXPECT_EQ(t.count("CONSTANT"), 0u) << name;
        if (flavor == "default") {
          EXPECT_EQ(t.count("STRONG"), 0u) << name;
        } else {
          EXPECT_EQ(t.count("STRONG"), 1u) << name;
          EXPECT_EQ(t.count(flavor == "ca" ? "SM" : "GPU"), 1u) << name;
        }
        if (contains(name, "float4")) {
          ++wide;
          EXPECT_EQ(t.count("128"), 1u) << name << ": float4 loads are not 16 bytes wide";
        }
      }
    }
    EXPECT_GE(loads, 16u) << kernel;  // 16 instantiations, at least one load each (or more)
    EXPECT_GT(wide, 0u) << kernel;
  }
}

/// An explicit operator is the programmer's choice: its qualifier is the same in every build.
TEST_P(FlavorSmoke, ExplicitOperatorsKeepTheirQualifierInEveryBuild) {
  GMB_REQUIRE_CUOBJDUMP();
  // cache_op 1..6 (ldg ca cg cs lu cv) and store_op 1..3 (cg cs wt), docs/design.md's table.
  const std::vector<tokens> load_qualifier = {
      {}, {"CONSTANT"}, {"STRONG", "SM"}, {"STRONG", "GPU"}, {"EF"}, {"LU"}, {"STRONG", "SYS"}};
  const std::vector<tokens> store_qualifier = {{}, {"STRONG", "GPU"}, {"EF"}, {"STRONG", "SYS"}};
  auto has_all = [](const tokens& t, const tokens& wanted) {
    for (const auto& w : wanted) {
      if (t.count(w) == 0) return false;
    }
    return true;
  };
  std::vector<int> kernels_with_load(7, 0), kernels_with_store(4, 0);
  for (const auto& [name, sass] : sass_of(GetParam())) {
    if (!contains(name, "xor_reads")) continue;
    for (int k = 1; k < 7; ++k) {
      if (!contains(name, mangled_op("cache_op", k))) continue;
      ++kernels_with_load[k];
      ASSERT_FALSE(sass.loads.empty()) << name;
      for (const auto& t : sass.loads) EXPECT_TRUE(has_all(t, load_qualifier[k])) << name;
    }
    for (int k = 1; k < 4; ++k) {
      if (!contains(name, mangled_op("store_op", k))) continue;
      ++kernels_with_store[k];
      ASSERT_FALSE(sass.stores.empty()) << name;
      for (const auto& t : sass.stores) EXPECT_TRUE(has_all(t, store_qualifier[k])) << name;
    }
  }
  // cache_op/{copy,stencil,gather}: three kernels per operator; __ldg has five more of its own
  // in readonly/ (offset, aos, gather and the stencils of radius 1 and 4).
  for (int k = 1; k < 7; ++k) EXPECT_EQ(kernels_with_load[k], k == 1 ? 8 : 3) << "cache_op " << k;
  for (int k = 1; k < 4; ++k) EXPECT_EQ(kernels_with_store[k], 3) << "store_op " << k;
}

/// Not only the qualifier: a kernel with an explicit operator loads and stores exactly alike
/// in the three builds (-dlcm must not add to what the programmer chose).
TEST(FlavorSass, ExplicitOperatorKernelsAreTheSameInEveryBuild) {
  GMB_REQUIRE_CUOBJDUMP();
  std::size_t compared = 0;
  for (const auto& [name, sass] : sass_of("default")) {
    if (!contains(name, "xor_reads") || !(explicit_load(name) || explicit_store(name))) continue;
    for (const char* flavor : {"ca", "cg"}) {
      const auto other = sass_of(flavor).find(name);
      ASSERT_NE(other, sass_of(flavor).end()) << name << " is missing from " << flavor;
      // Plain stores of a load-operator kernel and plain loads of a store-operator kernel
      // follow the flavor; only the explicit side must match.
      if (explicit_load(name)) {
        EXPECT_EQ(sass.loads, other->second.loads) << name << " loads differ in " << flavor;
      } else {
        EXPECT_EQ(sass.stores, other->second.stores) << name << " stores differ in " << flavor;
      }
    }
    ++compared;
  }
  // three patterns, six load and three store operators; five more __ldg kernels (readonly/)
  EXPECT_EQ(compared, 3u * (6 + 3) + 5);
}

/// readonly/: __ldg and plain loads from `const __restrict__` pointers take the read-only path
/// (LDG.E.CONSTANT) in every build; the same kernels' plain loads never do.
TEST_P(FlavorSmoke, ReadOnlyLoadsTakeTheReadOnlyPathInEveryBuild) {
  GMB_REQUIRE_CUOBJDUMP();
  std::size_t restricted = 0, ldg = 0, plain = 0;
  for (const auto& [name, sass] : sass_of(GetParam())) {
    if (!contains(name, "xor_reads")) continue;
    const bool is_restrict = contains(name, "restrict_xor_reads");
    const bool is_ldg = contains(name, mangled_op("cache_op", 1));
    const bool is_plain =
        !is_restrict && contains(name, mangled_op("cache_op", 0)) && !explicit_store(name);
    if (!is_restrict && !is_ldg && !is_plain) continue;
    ASSERT_FALSE(sass.loads.empty()) << name;
    for (const auto& t : sass.loads) {
      EXPECT_EQ(t.count("CONSTANT"), is_plain ? 0u : 1u) << name;
    }
    restricted += is_restrict;
    ldg += is_ldg;
    plain += is_plain;
  }
  EXPECT_EQ(restricted, 7u);  // readonly/: offset, stride, aos, gather, three stencils
  EXPECT_EQ(ldg, 8u);
  EXPECT_GT(plain, 0u);
}

/// The ca/cg comparison means something only where the two builds differ: every kernel with
/// plain loads (no explicit load operator) must load differently in gmembench-ca and -cg.
TEST(FlavorSass, PlainLoadKernelsDifferBetweenCaAndCg) {
  GMB_REQUIRE_CUOBJDUMP();
  const auto& ca = sass_of("ca");
  const auto& cg = sass_of("cg");
  std::set<std::string> compared;
  for (const auto& [name, sass] : ca) {
    // The fills and checks (gmb::detail) verify and measure nothing; a family built once
    // instantiates them once, alike for every flavor.
    if (explicit_load(name) || sass.loads.empty() || contains(name, "_ZN3gmb6detail")) continue;
    const auto other = cg.find(name);
    ASSERT_NE(other, cg.end()) << name << " is missing from gmembench-cg";
    if (loads_outside_dlcm(name)) {
      EXPECT_EQ(sass.loads, other->second.loads) << name << " loads differ in ca and cg";
      continue;
    }
    EXPECT_NE(sass.loads, other->second.loads) << name << " loads the same in ca and cg";
    for (const char* kernel : {"xor_reads", "working_set_read", "aos_all_fields", "aos_one_field",
                               "mapped_copy", "matrix_copy", "coalesced_read"}) {
      if (contains(name, kernel)) compared.insert(kernel);
    }
  }
  EXPECT_EQ(compared.size(), 7u) << "a kernel family of the comparison was not found";
}

/// The kernels built once (gmb_bench_once, namespace gmb::built_once) named `kernel`.
std::vector<std::pair<std::string, const kernel_sass*>> built_once_kernels(
    const std::string& flavor, const std::string& kernel) {
  std::vector<std::pair<std::string, const kernel_sass*>> found;
  const std::string mangled = "10built_once" + std::to_string(kernel.size()) + kernel + "I";
  for (const auto& [name, sass] : sass_of(flavor)) {
    if (contains(name, mangled)) found.emplace_back(name, &sass);
  }
  return found;
}

/// How many of a kernel's other memory instructions have opcode `op` (LDL matches LDL.LU too).
std::size_t count_op(const kernel_sass& sass, const std::string& op) {
  return std::count_if(sass.other.begin(), sass.other.end(), [&](const std::string& i) {
    return i.rfind(op, 0) == 0 &&
           (i.size() == op.size() || i[op.size()] == '.' || i[op.size()] == ' ');
  });
}

/// texture_path values (kernels/texture.cuh): global ldg tex1d tex2d array surface.
TEST(OnChipSass, TextureKernelsFetchAndStoreThroughTheirPath) {
  GMB_REQUIRE_CUOBJDUMP();
  std::vector<int> reads(5, 0), writes(6, 0);
  for (const auto& [name, sass] : built_once_kernels("default", "texture_read")) {
    int path = -1;
    for (int k = 0; k < 5; ++k) {
      if (contains(name, mangled_op("texture_path", k))) path = k;
    }
    ASSERT_GE(path, 0) << name;
    ++reads[path];
    EXPECT_FALSE(sass->stores.empty()) << name;  // out[t]: a plain store
    const std::size_t tex = count_op(*sass, "TEX"), tld = count_op(*sass, "TLD");
    if (path <= 1) {  // plain loads (never read-only) and __ldg (always)
      ASSERT_FALSE(sass->loads.empty()) << name;
      for (const auto& t : sass->loads) EXPECT_EQ(t.count("CONSTANT"), path == 1 ? 1u : 0u) << name;
      EXPECT_EQ(tex + tld, 0u) << name;
    } else {  // fetches only: tex1Dfetch is TLD, tex2D is TEX
      EXPECT_TRUE(sass->loads.empty()) << name;
      EXPECT_GT(path == 2 ? tld : tex, 0u) << name;
    }
  }
  for (const auto& [name, sass] : built_once_kernels("default", "texture_write")) {
    const bool surface = contains(name, mangled_op("texture_path", 5));
    ++writes[surface ? 5 : 0];
    EXPECT_EQ(sass->stores.empty(), surface) << name;
    EXPECT_EQ(count_op(*sass, "SUST") > 0, surface) << name;
  }
  // Four walk types (rows, columns, stencil, tile gather) per read path; rows and columns
  // written by plain stores and by the surface.
  EXPECT_EQ(reads, std::vector<int>(5, 4));
  EXPECT_EQ(writes, (std::vector<int>{2, 0, 0, 0, 0, 2}));
}

/// constant_path values (kernels/constant.cuh): constant global ldg.
TEST(OnChipSass, ConstantKernelsReadTheConstantBankWithARegisterIndex) {
  GMB_REQUIRE_CUOBJDUMP();
  std::vector<int> seen(3, 0);
  for (const auto& [name, sass] : built_once_kernels("default", "constant_read")) {
    int path = -1;
    for (int k = 0; k < 3; ++k) {
      if (contains(name, mangled_op("constant_path", k))) path = k;
    }
    ASSERT_GE(path, 0) << name;
    ++seen[path];
    // The user's __constant__ data sits in bank 3 on sm_90 (kernel parameters in bank 0):
    // LDC with a per-thread register index, the instruction the serialization curve measures.
    const std::size_t indexed = std::count_if(
        sass->other.begin(), sass->other.end(),
        [](const std::string& i) { return i.rfind("LDC", 0) == 0 && contains(i, "c[0x3][R"); });
    if (path == 0) {
      EXPECT_GE(indexed, 16u) << name;  // the loop is unrolled 16 times
      EXPECT_TRUE(sass->loads.empty()) << name;
    } else {
      EXPECT_EQ(indexed, 0u) << name;
      ASSERT_FALSE(sass->loads.empty()) << name;
      for (const auto& t : sass->loads) EXPECT_EQ(t.count("CONSTANT"), path == 2 ? 1u : 0u) << name;
    }
  }
  EXPECT_EQ(seen, std::vector<int>(3, 1));
}

/// local_index values (kernels/local.cuh): static uniform lane.
TEST(OnChipSass, LocalMemoryInstructionsExactlyWhereTheArraysAndSpillsAre) {
  GMB_REQUIRE_CUOBJDUMP();
  int arrays = 0, spills = 0;
  for (const auto& [name, sass] : built_once_kernels("default", "local_array")) {
    ++arrays;
    const bool run_time_index = contains(name, mangled_op("local_index", 1)) ||
                                contains(name, mangled_op("local_index", 2));
    // Arrays of 32 and 128 words indexed at run time live in local memory; 8 words stay in
    // registers (CUDA 13.0's choice: the quick sweep's control), and so does every array
    // indexed at compile time.
    const bool local = run_time_index && !contains(name, "ELj8E");
    EXPECT_EQ(count_op(*sass, "LDL") > 0, local) << name;
    EXPECT_EQ(count_op(*sass, "STL") > 0, local) << name;
  }
  for (const auto& [name, sass] : built_once_kernels("default", "local_spill")) {
    ++spills;
    const bool bounded = contains(name, "ILj8E");  // 8 blocks of 256: 32 registers
    EXPECT_EQ(count_op(*sass, "LDL") > 0, bounded) << name;
    EXPECT_EQ(count_op(*sass, "STL") > 0, bounded) << name;
  }
  EXPECT_EQ(arrays, 9);  // sizes 8, 32, 128 x three index kinds
  EXPECT_EQ(spills, 2);
}

/// The on-chip families' kernels are compiled once: the same instructions in every binary.
TEST(OnChipSass, BuiltOnceKernelsAreTheSameInEveryBuild) {
  GMB_REQUIRE_CUOBJDUMP();
  std::size_t compared = 0;
  for (const char* kernel :
       {"texture_read", "texture_write", "constant_read", "local_array", "local_spill"}) {
    for (const auto& [name, sass] : built_once_kernels("default", kernel)) {
      for (const char* flavor : {"ca", "cg"}) {
        const auto other = sass_of(flavor).find(name);
        ASSERT_NE(other, sass_of(flavor).end()) << name << " is missing from " << flavor;
        EXPECT_EQ(sass->loads, other->second.loads) << name << " in " << flavor;
        EXPECT_EQ(sass->stores, other->second.stores) << name << " in " << flavor;
        EXPECT_EQ(sass->other, other->second.other) << name << " in " << flavor;
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, 5u * 4 + 4 + 3 + 9 + 2);
}

INSTANTIATE_TEST_SUITE_P(Flavors, FlavorSmoke, ::testing::Values("default", "ca", "cg"),
                         [](const auto& info) { return info.param; });

}  // namespace
