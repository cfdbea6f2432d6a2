// --benchmark_filter as gmembench applies it: to the names without Google Benchmark's suffix.
#include "gmb/name_filter.hpp"

#include <gtest/gtest.h>

namespace gmb {
namespace {

TEST(NameFilter, AnchoredFiltersMatchTheNamesAsTheSuiteGivesThem) {
  const name_filter f("^copy/f32x4/ilp:1/grid:full$");
  EXPECT_TRUE(f.selects("copy/f32x4/ilp:1/grid:full"));
  EXPECT_FALSE(f.selects("copy/f32x4/ilp:1/grid:persistent"));
  EXPECT_FALSE(f.selects("copy/f32x4/ilp:16/grid:full"));
}

TEST(NameFilter, FiltersWrittenForTheSuffixedNamesStillWork) {
  EXPECT_TRUE(name_filter("grid:full/manual_time$").selects("read/f32/ilp:1/grid:full"));
  EXPECT_TRUE(name_filter("^read/.*/grid:full$").selects("read/f32/ilp:1/grid:full"));
}

TEST(NameFilter, EmptyAllAndDotSelectEverything) {
  for (const char* spec : {"", "all", "."}) EXPECT_TRUE(name_filter(spec).selects("ref/memset"));
}

TEST(NameFilter, LeadingMinusNegates) {
  const name_filter f("-^stride/");
  EXPECT_FALSE(f.selects("stride/f32/read/s:8"));
  EXPECT_TRUE(f.selects("offset/f32/read/off:1"));
}

TEST(NameFilter, ExtendedSyntaxAlternation) {
  const name_filter f("^(ref/|copy/f32x4/)");
  EXPECT_TRUE(f.selects("ref/memcpy_d2d"));
  EXPECT_TRUE(f.selects("copy/f32x4/ilp:4/grid:full"));
  EXPECT_FALSE(f.selects("copy/f32/ilp:1/grid:full"));
}

TEST(NameFilter, BadRegexIsAClearError) {
  EXPECT_THROW(name_filter("copy/(f32"), std::invalid_argument);
}

}  // namespace
}  // namespace gmb
