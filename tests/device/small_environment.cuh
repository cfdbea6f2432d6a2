#pragma once
// The device tests' fixture: the benchmarks' environment on GPU 0 with small arrays (every case
// runs in milliseconds), or a skip without a GPU.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "benchmarks/harness/harness.cuh"
#include "tests/device/gpu.hpp"

namespace gmb::test {

inline constexpr std::size_t kTestArrayBytes = 4 * kMiB;

class small_environment : public ::testing::Test {
 protected:
  void SetUp() override {
    GMB_REQUIRE_GPU();
    env_ = std::make_unique<environment>(0, kTestArrayBytes);
  }
  std::unique_ptr<environment> env_;
};

inline bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace gmb::test
