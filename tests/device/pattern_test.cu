// The pattern family on a GPU: the issue's expressions compiled, run as the benchmark runs them
// and verified for every operation; what the table says about a warp; and every kind of bad
// input stopped with one line before anything is measured.
#include <gtest/gtest.h>

#include <string>

#include "benchmarks/families.hpp"
#include "tests/device/small_environment.cuh"

namespace gmb {
namespace {

class Patterns : public test::small_environment {
 protected:
  void TearDown() override { set_pattern_options({}); }

  std::vector<bench_case> cases(pattern_options o) {
    set_pattern_options(o);
    return pattern_cases(*env_, sweep::kQuick);
  }
  /// The one-line message pattern_cases stops with ("" when it does not).
  std::string refusal(pattern_options o) {
    try {
      cases(std::move(o));
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      return e.what();
    }
    return "";
  }
};

double counter(environment& env, const bench_case& c, const std::string& key) {
  for (const auto& [k, v] : c.measured(env)) {
    if (k == key) return v;
  }
  return -1;
}

TEST_F(Patterns, NoExpressionNoCase) {
  EXPECT_TRUE(cases({}).empty());
}

TEST_F(Patterns, IssueExpressionsVerifyForEveryOperation) {
  pattern_options o;
  o.expressions = {"i",
                   "i * 8",
                   "(i % 32) * 32 + i / 32",
                   "n - 1 - i",
                   "(i * 2654435761u) % n",
                   "lane * 33 + warp * 32 * 33"};
  o.threads = 4096;  // lane * 33 + warp * 1056 stays below n for the first 4096 threads
  for (const char* op : {"read", "write", "copy", "gather", "scatter"}) {
    o.op = op;
    for (const bench_case& c : cases(o)) {
      EXPECT_EQ(run_untimed(*env_, c), "") << c.name;
    }
  }
}

TEST_F(Patterns, WordsAndSlotsVerify) {
  pattern_options o;
  o.expressions = {"i * 4 + k", "k * (n / 4) + i"};
  o.k = 4;
  o.op = "copy";
  for (const char* word : {"f32", "f64", "f32x4", "s12", "s48"}) {
    o.word = word;
    for (const bench_case& c : cases(o)) EXPECT_EQ(run_untimed(*env_, c), "") << c.name;
  }
}

TEST_F(Patterns, NamesAndTheModelOfBuiltInShapes) {
  pattern_options o;
  o.expressions = {"i", "i + 1", "i * 8", "(i % 32) * 32 + i / 32"};
  o.op = "gather";
  o.threads = 16384;
  const auto c = cases(o);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].name, "pattern/i/gather/f32/k:1/block:256/nthreads:16384");
  EXPECT_EQ(c[3].name, "pattern/(i%32)*32+i÷32/gather/f32/k:1/block:256/nthreads:16384");
  EXPECT_DOUBLE_EQ(c[0].model->loads.per_request(), 4);
  EXPECT_DOUBLE_EQ(c[1].model->loads.per_request(), 5);
  EXPECT_DOUBLE_EQ(c[2].model->loads.per_request(), 32);  // 32 B apart: a sector per lane
  EXPECT_DOUBLE_EQ(c[3].model->loads.per_request(), 32);
  EXPECT_DOUBLE_EQ(c[0].model->stores.per_request(), 4);
  EXPECT_EQ(counter(*env_, c[2], "pattern_lane_step"), 8);
  EXPECT_EQ(counter(*env_, c[0], "pattern_aligned_fraction"), 1);
  EXPECT_EQ(counter(*env_, c[1], "pattern_aligned_fraction"), 0);
  EXPECT_EQ(counter(*env_, c[3], "pattern_lane_step"), 32);
}

TEST_F(Patterns, BadInputStopsWithOneLine) {
  pattern_options o;
  o.expressions = {"i + 1"};  // thread n-1 reads element n
  EXPECT_NE(refusal(o).find("outside [0, n="), std::string::npos) << refusal(o);
  o.expressions = {"i / k"};  // k is 0 in the first slot
  EXPECT_NE(refusal(o).find("divides by zero"), std::string::npos) << refusal(o);
  o.expressions = {"i << 70"};
  EXPECT_NE(refusal(o).find("shifts by"), std::string::npos) << refusal(o);
  o.expressions = {"i +"};
  EXPECT_NE(refusal(o).find("NVRTC: error: expected an expression"), std::string::npos)
      << refusal(o);
  o.expressions = {"j * 2"};
  EXPECT_NE(refusal(o).find("unknown name 'j'"), std::string::npos) << refusal(o);
  o.expressions = {"i"};
  o.k = 4;  // every slot the same element: loaded once, counted four times
  EXPECT_NE(refusal(o).find("each slot must touch an element of its own"), std::string::npos)
      << refusal(o);
  o.k = 1;
  o.expressions = {"i - 1"};  // thread 0: -1
  EXPECT_NE(refusal(o).find("thread i=0"), std::string::npos) << refusal(o);
  o = {};
  o.expressions = {"i"};
  o.word = "f32x4";
  o.bytes = 1000;  // not a whole number of 16-B words
  EXPECT_NE(refusal(o).find("not a whole number"), std::string::npos) << refusal(o);
  o.bytes = 0;
  o.n = std::size_t(1) << 40;
  EXPECT_NE(refusal(o).find("n = "), std::string::npos) << refusal(o);
  o.n = 0;
  o.word = "s6";
  EXPECT_NE(refusal(o).find("--gmb_pattern_word"), std::string::npos) << refusal(o);
}

}  // namespace
}  // namespace gmb
