// The pattern family's NVRTC program compiled for real on the host (NVRTC needs no GPU): every
// operation and word compiles with the issue's expressions, a syntax error comes back as
// NVRTC's first diagnostic, and the on-disk cache returns the same cubin the second time.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gmb/pattern_program.hpp"
#include "gmb/rtc.hpp"
#include "gmb/rtc_sass.hpp"

namespace gmb {
namespace {

constexpr int kHopper = 90;

std::vector<char> compile(const std::string& expr, pattern_op op, const std::string& word,
                          unsigned k = 1, const std::string& dlcm = "", bool* cached = nullptr,
                          int cc = kHopper) {
  return rtc_compile(pattern_program(expr, op, parse_pattern_word(word).shape, k, 256),
                     "pattern.cu", pattern_compile_options(dlcm), cc, cached);
}

/// Each test compiles into a cache of its own, empty at the start.
class PatternProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gmb_rtc_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    setenv("GMB_RTC_CACHE", dir_.c_str(), 1);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    unsetenv("GMB_RTC_CACHE");
  }
  std::filesystem::path dir_;
};

TEST_F(PatternProgram, IssueExpressionsCompileForEveryOperation) {
  for (const char* expr : {"i", "i + 1", "i * 8", "(i % 32) * 32 + i / 32", "n - 1 - i",
                           "(i * 2654435761u) % n", "lane * 33 + warp * 32 * 33", "min(i, n - 1)",
                           "i < 5 ? i : 0", "(tid + block * 256) * 2 + k"}) {
    for (int op = 0; op < 5; ++op) {
      EXPECT_FALSE(compile(expr, static_cast<pattern_op>(op), "f32").empty())
          << expr << " op " << kPatternOps[op];
    }
  }
}

TEST_F(PatternProgram, EveryWordAndFlavorCompiles) {
  for (const char* word : {"f32", "f64", "f32x2", "f32x4", "s12", "s16", "s24", "s64"}) {
    for (const char* dlcm : {"", "ca", "cg"}) {
      EXPECT_FALSE(compile("i * 4 + k", pattern_op::kCopy, word, 4, dlcm).empty())
          << word << " " << dlcm;
    }
  }
}

/// Every architecture the suite is built for (docs/gpus.md) gets the pattern family's kernels;
/// a GPU newer than this NVRTC gets one line that says so.
TEST_F(PatternProgram, CompilesForEveryBuiltArchitectureAndRefusesAnUnknownOne) {
  for (int cc : {75, 80, 86, 89, 90, 100, 120}) {
    EXPECT_TRUE(nvrtc_knows(cc)) << cc;
    for (const char* dlcm : {"", "cg"}) {
      EXPECT_FALSE(compile("i * 2", pattern_op::kCopy, "f32", 1, dlcm, nullptr, cc).empty()) << cc;
    }
  }
  EXPECT_FALSE(nvrtc_knows(990));
  try {
    compile("i", pattern_op::kRead, "f32", 1, "", nullptr, 990);
    FAIL() << "compiled for sm_990";
  } catch (const rtc_compile_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot compile for sm_990"), std::string::npos);
  }
}

TEST_F(PatternProgram, SyntaxErrorIsNvrtcsFirstDiagnosticOnOneLine) {
  try {
    compile("i +", pattern_op::kRead, "f32");
    FAIL() << "compiled";
  } catch (const rtc_compile_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("expected an expression"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST_F(PatternProgram, TheRunKernelsInstructionsComeFromItsSass) {
  if (std::string(kCuobjdump).empty()) GTEST_SKIP() << "the build found no cuobjdump";
  const auto count = [](const std::string& expr) {
    return rtc_kernel_instructions(compile(expr, pattern_op::kGather, "f32"), "gmb_pattern_run",
                                   kHopper);
  };
  const int plain = count("i");
  EXPECT_GT(plain, 10);
  // a division and a remainder by 1000 of a 64-bit index: a dozen instructions more
  EXPECT_GT(count("(i / 1000) * 1024 + i % 1000"), plain + 8);
  EXPECT_EQ(rtc_kernel_instructions(compile("i", pattern_op::kGather, "f32"), "no_such_kernel",
                                    kHopper),
            0);
  EXPECT_EQ(rtc_kernel_instructions({'x'}, "gmb_pattern_run", kHopper), 0);  // not a cubin
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(rtc_kernel_instructions(compile("i", pattern_op::kGather, "f32"), "gmb_pattern_run",
                                    kHopper, "/nonexistent/cuobjdump"),
            0);
}

TEST_F(PatternProgram, SecondCompileComesFromTheCache) {
  bool cached = true;
  const auto first = compile("i * 2", pattern_op::kRead, "f32", 1, "", &cached);
  EXPECT_FALSE(cached);
  const auto second = compile("i * 2", pattern_op::kRead, "f32", 1, "", &cached);
  EXPECT_TRUE(cached);
  EXPECT_EQ(first, second);
  compile("i * 2", pattern_op::kRead, "f32", 1, "cg", &cached);  // other options: new entry
  EXPECT_FALSE(cached);
}

TEST(PatternWords, NamesShapesAndRefusals) {
  EXPECT_EQ(parse_pattern_word("f32x4").shape.align, 16u);
  EXPECT_EQ(parse_pattern_word("s12").shape.align, 4u);  // a packed 12-B structure: 3 loads
  EXPECT_EQ(parse_pattern_word("s12").shape.parts(), 3u);
  EXPECT_EQ(parse_pattern_word("s24").shape.align, 8u);
  EXPECT_EQ(parse_pattern_word("s64").shape.parts(), 4u);
  for (const char* bad : {"f16", "s6", "s0", "s512", "s", "sx", "f32x3"}) {
    EXPECT_THROW(parse_pattern_word(bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(parse_pattern_op("gather"), pattern_op::kGather);
  EXPECT_THROW(parse_pattern_op("load"), std::invalid_argument);
}

TEST(FirstDiagnostic, SkipsWarningsAndTheFileName) {
  EXPECT_EQ(first_diagnostic("expression(1): warning: x\nexpression(2): error: expected a \")\"\n"
                             "  i + (\n      ^\n"),
            "error: expected a \")\"");
  EXPECT_EQ(first_diagnostic("just text"), "just text");
}

}  // namespace
}  // namespace gmb
