// The naming contract of DESIGN.md.
#include "gmb/naming.hpp"

#include <gtest/gtest.h>

#include "gmb/cache_op.cuh"

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

TEST(Naming, CacheOperatorNames) {
  EXPECT_STREQ(name(cache_op::kDefault), "default");
  EXPECT_STREQ(name(cache_op::kLdg), "ldg");
  EXPECT_STREQ(name(cache_op::kCv), "cv");
  EXPECT_STREQ(name(store_op::kWt), "wt");
}

}  // namespace
}  // namespace gmb
