// The naming contract of docs/design.md.
#include "gmb/naming.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "gmb/cache_op.cuh"
#include "gmb/screen.hpp"

namespace gmb {
namespace {

TEST(Naming, FamilyVariantParams) {
  EXPECT_EQ(bench_name("copy", "f32x4", {{"ilp", 4}}), "copy/f32x4/ilp:4");
  EXPECT_EQ(bench_name("read", "f32", {{"ilp", 1}, {"grid", "persistent"}}),
            "read/f32/ilp:1/grid:persistent");
  EXPECT_EQ(bench_name("ref", "memcpy_d2d"), "ref/memcpy_d2d");
  EXPECT_EQ(bench_name("stride", "f32/read", {{"s", 8}}), "stride/f32/read/s:8");
}

TEST(Naming, RejectsPartsThatWouldBreakTheSplit) {
  EXPECT_THROW(bench_name("co/py", "f32"), std::invalid_argument);
  EXPECT_THROW(bench_name("copy", ""), std::invalid_argument);
  EXPECT_THROW(bench_name("copy", "f32/"), std::invalid_argument);
  EXPECT_THROW(bench_name("copy", "f32//read"), std::invalid_argument);
  EXPECT_THROW(bench_name("copy", "f32", {{"ilp", "4:5"}}), std::invalid_argument);
  EXPECT_THROW(bench_name("copy", "f32", {{"i p", 4}}), std::invalid_argument);
}

TEST(Naming, ScreeningBenchmarksAreDistinctNamesOfTheContract) {
  for (std::string_view name : kScreenBenchmarks) {
    const auto family = name.substr(0, name.find('/'));
    EXPECT_FALSE(family.empty()) << name;
    EXPECT_NE(name.find('/'), std::string_view::npos) << name;
    EXPECT_TRUE(in_screen(name));
    EXPECT_EQ(std::count(kScreenBenchmarks.begin(), kScreenBenchmarks.end(), name), 1) << name;
  }
  EXPECT_FALSE(in_screen("read/f32x4/ilp:1"));  // whole names only
}

TEST(Naming, CacheOperatorNames) {
  EXPECT_STREQ(name(cache_op::kDefault), "default");
  EXPECT_STREQ(name(cache_op::kLdg), "ldg");
  EXPECT_STREQ(name(cache_op::kCv), "cv");
  EXPECT_STREQ(name(store_op::kWt), "wt");
}

}  // namespace
}  // namespace gmb
