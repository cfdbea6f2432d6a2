// The bulk family's arithmetic: its names, the shapes of its sweeps, the shared memory each
// needs and the bytes each keeps in flight; the feature that gates it.
#include "gmb/bulk.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gmb/arch_facts.hpp"
#include "gmb/naming.hpp"

namespace gmb {
namespace {

// Hopper (H100, H200): 227 KiB per block at most, 228 KiB per SM, 1 KiB reserved per block.
constexpr std::size_t kHopperBlock = 227 * 1024, kHopperSm = 228 * 1024, kReserved = 1024;

std::string name_of(bulk_op op, const bulk_shape& s) { return bulk_name(op, s); }

TEST(Bulk, NamesFollowTheContract) {
  EXPECT_EQ(name_of(bulk_op::kRead, {16384, 4, 1, 4}),
            "bulk/read/bytes:16384/stages:4/bpsm:1/warps:4");
  EXPECT_EQ(name_of(bulk_op::kRead, {16384, 4, 1}), "bulk/read/bytes:16384/stages:4/bpsm:1/warps:1");
  EXPECT_EQ(name_of(bulk_op::kWrite, {4096, 2, 4}), "bulk/write/bytes:4096/stages:2/bpsm:4");
  EXPECT_EQ(name_of(bulk_op::kCopy, {1024, 8, 2}), "bulk/copy/bytes:1024/stages:8/bpsm:2");
  EXPECT_EQ(bench_name("bulk", "latency", {{"bytes", 65536}}), "bulk/latency/bytes:65536");
}

TEST(Bulk, BytesInFlightAreCopyBytesTimesStagesTimesBlocks) {
  EXPECT_DOUBLE_EQ(bulk_bytes_in_flight_per_sm({16384, 4, 1}), 65536.0);
  EXPECT_DOUBLE_EQ(bulk_bytes_in_flight_per_sm({1024, 4, 4}), 16384.0);
  EXPECT_DOUBLE_EQ(bulk_bytes_in_flight_per_sm({131072, 1, 1}), 131072.0);
  // The stage buffers and one 8-B mbarrier per stage.
  EXPECT_EQ(bulk_smem_bytes(16384, 4), 4u * 16384 + 32);
  EXPECT_EQ(bulk_smem_bytes(1024, 1), 1032u);
}

TEST(Bulk, TheQuickSweepIsSmallAndSpansOneToOneHundredTwentyEightKiB) {
  std::set<std::string> names;
  std::size_t cases = 0;
  for (bulk_op op : {bulk_op::kRead, bulk_op::kWrite, bulk_op::kCopy}) {
    for (const bulk_shape& s : bulk_quick_shapes(op)) {
      ++cases;
      names.insert(name_of(op, s));
      EXPECT_EQ(s.chunk_bytes % 16, 0u);  // cp.async.bulk: a multiple of 16 bytes
      EXPECT_GE(s.chunk_bytes, kBulkSmallestCopy);
      EXPECT_LE(s.chunk_bytes, kBulkLargestCopy);
      EXPECT_GE(s.stages, 1u);
      EXPECT_LE(s.stages, 8u);
      EXPECT_GE(s.blocks_per_sm, 1u);
      EXPECT_LE(s.blocks_per_sm, 4u);
      EXPECT_TRUE(bulk_fits(s, kHopperBlock, kHopperSm, kReserved)) << name_of(op, s);
    }
  }
  EXPECT_EQ(names.size(), cases);  // no name twice
  EXPECT_EQ(cases, 12u + 2 + 2);
  EXPECT_EQ(bulk_latency_sizes(false).size(), 4u);
  EXPECT_LE(cases + bulk_latency_sizes(false).size(), 20u);  // the default run's time budget
  // Reads by four warps keep 1 KiB in flight per SM, and every power of two from 4 to 128 KiB.
  std::set<double> by_four;
  for (const bulk_shape& s : bulk_quick_shapes(bulk_op::kRead)) {
    EXPECT_TRUE(s.warps == 1 || s.warps == kBulkMostWarps) << name_of(bulk_op::kRead, s);
    if (s.warps == kBulkMostWarps) by_four.insert(bulk_bytes_in_flight_per_sm(s));
  }
  EXPECT_EQ(*by_four.begin(), 1024.0);
  for (double b = 4096; b <= 131072; b *= 2) EXPECT_EQ(by_four.count(b), 1u) << b;
  // One warp beside four at the same shapes (4 stages of 1 and 32 KiB): what the checking
  // warps cost.
  std::size_t pairs = 0;
  for (const bulk_shape& one : bulk_quick_shapes(bulk_op::kRead)) {
    if (one.warps != 1 || one.blocks_per_sm != 1) continue;
    for (const bulk_shape& four : bulk_quick_shapes(bulk_op::kRead)) {
      pairs += four.warps == kBulkMostWarps && four.chunk_bytes == one.chunk_bytes &&
               four.stages == one.stages && four.blocks_per_sm == 1;
    }
  }
  EXPECT_EQ(pairs, 2u);
  // Writes and copies are one warp.
  for (bulk_op op : {bulk_op::kWrite, bulk_op::kCopy}) {
    for (const bulk_shape& s : bulk_quick_shapes(op)) EXPECT_EQ(s.warps, 1u);
  }
}

TEST(Bulk, TheFullSweepHasEveryShapeSharedMemoryHolds) {
  const auto hopper = bulk_full_shapes(bulk_op::kWrite, kHopperBlock, kHopperSm, kReserved);
  for (const bulk_shape& s : hopper) {
    EXPECT_LE(bulk_smem_bytes(s.chunk_bytes, s.stages), kHopperBlock);
    EXPECT_LE((bulk_smem_bytes(s.chunk_bytes, s.stages) + kReserved) * s.blocks_per_sm,
              kHopperSm);
  }
  // Per copy size, the (stages, blocks per SM) of 1, 2, 4, 8 x 1, 2, 4 that fit: all 12 to
  // 4 KiB; 8 KiB all but 8 x 4 (11); 16 KiB 9; 32 KiB 6; 64 KiB 3; 128 KiB one stage, one block.
  EXPECT_EQ(hopper.size(), 3u * 12 + 11 + 9 + 6 + 3 + 1);
  // Reads: the same shapes by 1, 2 and 4 warps.
  EXPECT_EQ(bulk_full_shapes(bulk_op::kRead, kHopperBlock, kHopperSm, kReserved).size(),
            3 * hopper.size());
  // Every quick shape is in the full sweep.
  for (bulk_op op : {bulk_op::kRead, bulk_op::kWrite, bulk_op::kCopy}) {
    std::set<std::string> full;
    for (const bulk_shape& s : bulk_full_shapes(op, kHopperBlock, kHopperSm, kReserved))
      full.insert(name_of(op, s));
    for (const bulk_shape& q : bulk_quick_shapes(op)) {
      EXPECT_EQ(full.count(name_of(op, q)), 1u) << name_of(op, q);
    }
  }
  // An SM of 100 KiB (sm_86, sm_89, sm_120) holds no 128-KiB copy.
  for (const bulk_shape& s : bulk_full_shapes(bulk_op::kRead, 99 * 1024, 100 * 1024, kReserved)) {
    EXPECT_LT(s.chunk_bytes, kBulkLargestCopy);
  }
  EXPECT_EQ(bulk_latency_sizes(true).size(), 7u);  // 1 to 64 KiB
}

TEST(Bulk, BulkCopiesRunFromHopperOn) {
  EXPECT_EQ(unsupported_reason(gpu_feature::kBulkCopy, 8, 0),
            "cp.async.bulk (TMA) needs sm_90, this GPU is sm_80");
  for (const arch_facts& row : kArchFacts) {
    SCOPED_TRACE(row.cc);
    EXPECT_EQ(unsupported_reason(gpu_feature::kBulkCopy, row.cc / 10, row.cc % 10).empty(),
              row.cc >= 90);
  }
}

}  // namespace
}  // namespace gmb
