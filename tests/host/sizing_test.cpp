// Working-set sizing and the --gmb_bytes parser.
#include "gmb/sizing.hpp"

#include <gtest/gtest.h>

namespace gmb {
namespace {

TEST(Sizing, DefaultIsThirtyTwoTimesL2InWholeMiB) {
  EXPECT_EQ(default_array_bytes(50 * kMiB), 1600 * kMiB);
  EXPECT_EQ(default_array_bytes(60 * kMiB), 1920 * kMiB);
  EXPECT_EQ(default_array_bytes(40 * kMiB + 1), 1281 * kMiB);
  EXPECT_GE(default_array_bytes(12345678), 32 * 12345678ull);
  EXPECT_EQ(default_array_bytes(1024 * kMiB), kMaxArrayBytes);
}

TEST(Sizing, ParsesUnits) {
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("64K"), 64u << 10);
  EXPECT_EQ(parse_bytes("512M"), 512u * kMiB);
  EXPECT_EQ(parse_bytes("512mib"), 512u * kMiB);
  EXPECT_EQ(parse_bytes("2G"), 2048u * kMiB);
  EXPECT_EQ(parse_bytes("1GiB"), 1024u * kMiB);
}

TEST(Sizing, RejectsNonsense) {
  for (const char* bad : {"", "M", "-1", "12Q", "1.5G", "0", "99999999999999999999", "4096T"}) {
    EXPECT_THROW(parse_bytes(bad), std::invalid_argument) << bad;
  }
}

TEST(Sizing, FlagValuesRoundUpToTheGranule) {
  EXPECT_EQ(array_bytes_from_flag("1000"), kArrayGranule);
  EXPECT_EQ(array_bytes_from_flag("8M"), 8 * kMiB);
  EXPECT_EQ(array_bytes_from_flag("8193K"), 9 * kMiB);
  EXPECT_EQ(array_bytes_from_flag("8G"), kMaxArrayBytes);
  EXPECT_THROW(array_bytes_from_flag("8193M"), std::invalid_argument);
}

TEST(Sizing, BackToBackLaunchesOnlyWhereTheArraysStreamFromDram) {
  EXPECT_EQ(launches_per_iteration(400 * kMiB, 50 * kMiB), 16);  // 8x L2
  EXPECT_EQ(launches_per_iteration(1600 * kMiB, 50 * kMiB), 4);  // 32x L2, the default
  EXPECT_EQ(launches_per_iteration(1000 * kMiB, 50 * kMiB), 7);  // covers >= 128 L2s
  EXPECT_EQ(launches_per_iteration(400 * kMiB - 1, 50 * kMiB), 1);
  EXPECT_EQ(launches_per_iteration(8 * kMiB, 50 * kMiB), 1);
}

}  // namespace
}  // namespace gmb

TEST(TilesOfSlice, EveryTileFallsToExactlyOneSlice) {
  for (const unsigned slices : {1u, 2u, 3u, 7u}) {
    for (const std::size_t tiles : {std::size_t(1), std::size_t(5), std::size_t(1000)}) {
      std::size_t total = 0;
      for (unsigned k = 0; k < slices; ++k) {
        std::size_t counted = 0;  // tiles t < `tiles` with t % slices == k
        for (std::size_t t = k; t < tiles; t += slices) ++counted;
        EXPECT_EQ(gmb::tiles_of_slice(tiles, slices, k), counted) << tiles << " " << slices;
        total += counted;
      }
      EXPECT_EQ(total, tiles);
    }
  }
}
