// The inflight family's arithmetic: which launch shapes an SM can hold, the bytes they keep in
// flight, and a block slot's time from a launch's.
#include "gmb/inflight.hpp"

#include <gtest/gtest.h>

namespace gmb {
namespace {

TEST(Inflight, ShapesAreEveryBlockSizeAndResidencyAnSmHolds) {
  const auto shapes = launch_shapes(2048, 32);  // Hopper: 2048 threads, 32 blocks per SM
  // 32: 1..32 (6), 64: 1..32 (6), 128: 1..16 (5), 256: 1..8 (4), 512: 1..4 (3), 1024: 1..2 (2)
  EXPECT_EQ(shapes.size(), 26u);
  for (const auto& s : shapes) {
    EXPECT_LE(s.threads_per_sm(), 2048u);
    EXPECT_LE(s.blocks_per_sm, 32u);
  }
  EXPECT_EQ(shapes.front().block, 32u);
  EXPECT_EQ(shapes.front().blocks_per_sm, 1u);
  EXPECT_EQ(shapes.back().block, 1024u);
  EXPECT_EQ(shapes.back().blocks_per_sm, 2u);
  // An SM of 1536 threads and 16 blocks (Ampere GA10x) holds fewer.
  for (const auto& s : launch_shapes(1536, 16)) {
    EXPECT_LE(s.threads_per_sm(), 1536u);
    EXPECT_LE(s.blocks_per_sm, 16u);
  }
}

TEST(Inflight, BytesInFlightAreResidentThreadsTimesLoadsTimesWord) {
  // read/f32/ilp:1/grid:full: 8 blocks of 256 threads, one 4-B load each: 8 KiB per SM.
  EXPECT_DOUBLE_EQ(bytes_in_flight_per_sm({256, 8}, 1, 4), 8192.0);
  EXPECT_DOUBLE_EQ(bytes_in_flight_per_sm({1024, 2}, 4, 16), 131072.0);
  EXPECT_DOUBLE_EQ(bytes_in_flight_per_sm({32, 1}, 1, 4), 128.0);
}

TEST(Inflight, BlockSlotTimeIsTheLaunchSpreadOverEverySlot) {
  // 1 ms for 132 SMs x 8 slots turning over 1,056,000 blocks: each slot held 1000 blocks.
  EXPECT_DOUBLE_EQ(block_slot_ns(1e-3, 1056000, 132, 8), 1000.0);
  EXPECT_DOUBLE_EQ(block_slot_ns(2e-3, 1056000, 132, 8), 2000.0);
}

}  // namespace
}  // namespace gmb
