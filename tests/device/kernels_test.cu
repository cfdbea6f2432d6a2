// Every benchmark case of every family, run on a small array exactly as the benchmark runs it
// (prepare, launches, verify), then its whole output checked on the host.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "benchmarks/families.hpp"
#include "tests/device/gpu.hpp"

namespace gmb {
namespace {

constexpr std::size_t kTestArrayBytes = 4 * kMiB;

class Cases : public ::testing::Test {
 protected:
  void SetUp() override {
    GMB_REQUIRE_GPU();
    env_ = std::make_unique<environment>(0, kTestArrayBytes);
  }
  std::unique_ptr<environment> env_;
};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

/// Every word of the output checked on the host against what the case must have written.
template <class Gen>
void expect_output(environment& env, const Gen& gen) {
  const auto host = env.out().copy_words_to_host(0, env.out().words(), env.stream());
  std::size_t wrong = 0;
  for (std::size_t w = 0; w < host.size(); ++w) wrong += host[w] != gen(w);
  EXPECT_EQ(wrong, 0u);
}

TEST_F(Cases, EveryCaseVerifiesAndWritesEveryOutputWord) {
  const auto cases = all_cases(*env_);
  ASSERT_EQ(cases.size(), 2u + 3 * 4 * 4 * 2);  // refs + {read,write,copy} x types x ilp x grids
  const double array = static_cast<double>(kTestArrayBytes);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(run_untimed(*env_, c), "");
    if (starts_with(c.name, "copy/") || c.name == "ref/memcpy_d2d") {
      expect_output(*env_, kInputPattern);
      EXPECT_EQ(c.bytes_read, array);
      EXPECT_EQ(c.bytes_written, array);
    } else if (starts_with(c.name, "write/") || c.name == "ref/memset") {
      if (c.name == "ref/memset") {
        expect_output(*env_, kMemsetWords);
      } else {
        expect_output(*env_, kWritePattern);
      }
      EXPECT_EQ(c.bytes_read, 0.0);
      EXPECT_EQ(c.bytes_written, array);
    } else {
      ASSERT_TRUE(starts_with(c.name, "read/"));
      EXPECT_EQ(c.bytes_read, array);
      EXPECT_EQ(c.bytes_written, 0.0);
    }
    if (c.model) EXPECT_DOUBLE_EQ(c.model->dram_bytes, c.bytes_read + c.bytes_written);
  }
}

TEST_F(Cases, VerificationRejectsAnUnwrittenOutput) {
  for (const auto& c : all_cases(*env_)) {
    if (starts_with(c.name, "read/")) continue;  // reads write nothing; see the next test
    SCOPED_TRACE(c.name);
    c.prepare(*env_);  // poisons the output; no launch
    EXPECT_NE(c.verify(*env_), "");
  }
}

TEST_F(Cases, VerificationRejectsOneWrongOutputWord) {
  for (const auto& c : all_cases(*env_)) {
    if (!starts_with(c.name, "copy/") && !starts_with(c.name, "write/")) continue;
    SCOPED_TRACE(c.name);
    ASSERT_EQ(run_untimed(*env_, c, 1), "");
    env_->out().write_word(env_->out().words() / 3, 0u, env_->stream());
    EXPECT_NE(c.verify(*env_), "");
  }
}

TEST_F(Cases, CheckingReadsReportAWrongInputWord) {
  for (const auto& c : all_cases(*env_)) {
    if (!starts_with(c.name, "read/")) continue;
    SCOPED_TRACE(c.name);
    c.prepare(*env_);
    env_->in().write_word(12345, 0u, env_->stream());
    c.launch(*env_);
    EXPECT_EQ(env_->read_counter(), 1u);
    EXPECT_NE(c.verify(*env_), "");  // the run saw a wrong word
  }
}

}  // namespace
}  // namespace gmb
