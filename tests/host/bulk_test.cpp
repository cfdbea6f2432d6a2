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

std::string name_of(bulk_op op, const bulk_shape& s) {
  return bench_name("bulk", bulk_op_name(op),
                    {{"bytes", static_cast<long long>(s.chunk_bytes)},
                     {"stages", s.stages},
                     {"bpsm", s.blocks_per_sm}});
}

TEST(Bulk, NamesFollowTheContract) {
  EXPECT_EQ(name_of(bulk_op::kRead, {16384, 4, 1}), "bulk/read/bytes:16384/stages:4/bpsm:1");
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
  std::set<double> in_flight;
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
      if (op == bulk_op::kRead) in_flight.insert(bulk_bytes_in_flight_per_sm(s));
    }
  }
  EXPECT_EQ(names.size(), cases);  // no name twice
  EXPECT_EQ(cases, 10u + 3 + 3);
  EXPECT_EQ(bulk_latency_sizes(false).size(), 4u);
  EXPECT_LE(cases + bulk_latency_sizes(false).size(), 20u);  // the default run's time budget
  // Reads from 1 KiB to 128 KiB in flight per SM, each power of two from 4 KiB.
  EXPECT_EQ(*in_flight.begin(), 1024.0);
  EXPECT_EQ(*in_flight.rbegin(), 131072.0);
  for (double b = 4096; b <= 131072; b *= 2) EXPECT_EQ(in_flight.count(b), 1u) << b;
  // 16 KiB three ways: 4 stages of 4 KiB, one copy of 16 KiB, 4 blocks of 4 x 1 KiB.
  std::size_t sixteen = 0;
  for (const bulk_shape& s : bulk_quick_shapes(bulk_op::kRead))
    sixteen += bulk_bytes_in_flight_per_sm(s) == 16384.0;
  EXPECT_EQ(sixteen, 3u);
}

TEST(Bulk, TheFullSweepHasEveryShapeSharedMemoryHolds) {
  const auto hopper = bulk_full_shapes(kHopperBlock, kHopperSm, kReserved);
  for (const bulk_shape& s : hopper) {
    EXPECT_LE(bulk_smem_bytes(s.chunk_bytes, s.stages), kHopperBlock);
    EXPECT_LE((bulk_smem_bytes(s.chunk_bytes, s.stages) + kReserved) * s.blocks_per_sm,
              kHopperSm);
  }
  // Per copy size, the (stages, blocks per SM) of 1, 2, 4, 8 x 1, 2, 4 that fit: all 12 to
  // 4 KiB; 8 KiB all but 8 x 4 (11); 16 KiB 9; 32 KiB 6; 64 KiB 3; 128 KiB one stage, one block.
  EXPECT_EQ(hopper.size(), 3u * 12 + 11 + 9 + 6 + 3 + 1);
  // Every quick shape is in the full sweep.
  for (bulk_op op : {bulk_op::kRead, bulk_op::kWrite, bulk_op::kCopy}) {
    for (const bulk_shape& q : bulk_quick_shapes(op)) {
      bool found = false;
      for (const bulk_shape& s : hopper) {
        found |= s.chunk_bytes == q.chunk_bytes && s.stages == q.stages &&
                 s.blocks_per_sm == q.blocks_per_sm;
      }
      EXPECT_TRUE(found) << name_of(op, q);
    }
  }
  // An SM of 100 KiB (sm_86, sm_89, sm_120) holds no 128-KiB copy.
  for (const bulk_shape& s : bulk_full_shapes(99 * 1024, 100 * 1024, kReserved)) {
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
