// The built gmembench binaries as a user runs them: one-line errors for bad input everywhere,
// the "no CUDA device" message without a GPU, and with a GPU a tiny filtered run per flavor
// whose JSON carries the flavor, the device context and the counters of DESIGN.md.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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
  const result r = run(binary +
                       " --gmb_bytes=8M --benchmark_min_time=0.01"
                       " --benchmark_filter='^(ref/|copy/f32x4/ilp:4/|read/f32/ilp:1/)'"
                       " --benchmark_out_format=json --benchmark_out=" + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::ifstream file(out);
  const nlohmann::json json = nlohmann::json::parse(file);
  const auto& context = json.at("context");
  EXPECT_EQ(context.at("gmb_flavor"), flavor);
  for (const char* key : {"gpu_name", "gpu_cc", "gpu_sms", "gpu_l2_bytes", "gpu_peak_gbs",
                          "gpu_mem_clock_khz", "gpu_bus_bits", "ecc", "driver", "cuda_runtime",
                          "git_sha", "gmb_array_bytes"}) {
    EXPECT_TRUE(context.contains(key)) << key;
  }
  EXPECT_EQ(context.at("gmb_array_bytes"), std::to_string(8 << 20));

  const auto& benchmarks = json.at("benchmarks");
  ASSERT_EQ(benchmarks.size(), 6u);  // 2 refs + copy and read on both grids
  for (const auto& b : benchmarks) {
    const std::string name = b.at("name");
    EXPECT_FALSE(b.value("error_occurred", false)) << name << ": " << b.value("error_message", "");
    EXPECT_GT(b.at("bytes_per_second").get<double>(), 0.0) << name;
    EXPECT_GT(b.at("pct_peak").get<double>(), 0.0) << name;
    if (name.rfind("ref/", 0) != 0) {
      EXPECT_GT(b.at("model_sectors_per_req").get<double>(), 0.0) << name;
      EXPECT_DOUBLE_EQ(b.at("model_efficiency").get<double>(), 1.0) << name;
    }
  }
}

/// Dot-separated tokens of every global load (LDG...) in the SASS of the kernels whose mangled
/// name contains all of `parts`. Tokens, not strings: modifier order varies (DESIGN.md).
std::vector<std::set<std::string>> sass_loads(const std::string& binary,
                                              const std::vector<std::string>& parts) {
  // cuobjdump runs nvdisasm, which sits beside it (in the toolkit or in PyPI's packages).
  const std::string tool = GMB_CUOBJDUMP;
  const std::string dir = tool.substr(0, tool.find_last_of('/'));
  const result dump = run("PATH='" + dir + "':\"$PATH\" '" + tool + "' -sass " + binary);
  EXPECT_EQ(dump.exit_code, 0) << dump.output.substr(0, 500);
  std::vector<std::set<std::string>> loads;
  const std::regex function_line(R"(Function : (\S+))");
  const std::regex load(R"(\bLDG(\.[A-Z0-9_]+)*)");
  std::istringstream lines(dump.output);
  bool selected = false;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, function_line)) {
      selected = true;
      for (const auto& p : parts) selected = selected && m[1].str().find(p) != std::string::npos;
    } else if (selected && std::regex_search(line, m, load)) {
      std::set<std::string> tokens;
      std::istringstream instruction(m[0].str());
      for (std::string t; std::getline(instruction, t, '.');) tokens.insert(t);
      loads.push_back(tokens);
    }
  }
  return loads;
}

/// The plain loads of the coalesced read and copy kernels are what the flavors change:
/// LDG.E (default), LDG.E.STRONG.SM (-dlcm=ca), LDG.E.STRONG.GPU (-dlcm=cg); never .CONSTANT.
TEST_P(FlavorSmoke, PlainLoadsCarryTheFlavorsCacheQualifier) {
  if (std::string(GMB_CUOBJDUMP).empty()) GTEST_SKIP() << "no cuobjdump (scripts/setup --test)";
  const std::string flavor = GetParam();
  for (const char* kernel : {"coalesced_read", "coalesced_copy"}) {
    const auto loads = sass_loads(binary_of(flavor), {kernel});
    ASSERT_GE(loads.size(), 16u) << kernel;  // 16 instantiations, at least one load each
    for (const auto& tokens : loads) {
      EXPECT_EQ(tokens.count("CONSTANT"), 0u) << kernel;
      if (flavor == "default") {
        EXPECT_EQ(tokens.count("STRONG"), 0u) << kernel;
      } else {
        EXPECT_EQ(tokens.count("STRONG"), 1u) << kernel;
        EXPECT_EQ(tokens.count(flavor == "ca" ? "SM" : "GPU"), 1u) << kernel;
      }
    }
    const auto wide = sass_loads(binary_of(flavor), {kernel, "float4"});
    ASSERT_FALSE(wide.empty()) << kernel;
    for (const auto& tokens : wide) {
      EXPECT_EQ(tokens.count("128"), 1u) << kernel << " float4 loads are not 16 bytes wide";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Flavors, FlavorSmoke, ::testing::Values("default", "ca", "cg"),
                         [](const auto& info) { return info.param; });

}  // namespace
