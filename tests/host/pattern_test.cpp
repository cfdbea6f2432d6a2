// The index maps that kernels, model and tests share.
#include "gmb/pattern.cuh"

#include <gtest/gtest.h>

#include <vector>

namespace gmb {
namespace {

template <unsigned Block, unsigned Ilp>
void expect_coalesced_is_a_tiling(std::size_t blocks) {
  const coalesced_map<Block, Ilp> map;
  const std::size_t threads = blocks * Block;
  std::vector<int> hits(threads * Ilp, 0);
  for (std::size_t t = 0; t < threads; ++t) {
    for (unsigned j = 0; j < Ilp; ++j) {
      const std::size_t e = map(t, j);
      ASSERT_LT(e, hits.size());
      ++hits[e];
      if (t % 32 != 0) EXPECT_EQ(e, map(t - 1, j) + 1) << "lanes of a warp are not consecutive";
    }
  }
  for (int h : hits) ASSERT_EQ(h, 1) << "an element is not covered exactly once";
}

TEST(CoalescedMap, EveryElementExactlyOnceAndWarpsContiguous) {
  expect_coalesced_is_a_tiling<256, 1>(3);
  expect_coalesced_is_a_tiling<256, 2>(3);
  expect_coalesced_is_a_tiling<256, 4>(3);
  expect_coalesced_is_a_tiling<256, 8>(3);
  expect_coalesced_is_a_tiling<64, 8>(5);
}

TEST(CoalescedMap, SlotsOfABlockAreBlockApart) {
  const coalesced_map<256, 4> map;
  EXPECT_EQ(map(0, 0), 0u);
  EXPECT_EQ(map(0, 1), 256u);
  EXPECT_EQ(map(255, 3), 1023u);
  EXPECT_EQ(map(256, 0), 1024u);
}

TEST(HashPermutation, IsABijectionThatMovesMostElements) {
  for (unsigned bits : {2u, 5u, 10u, 16u}) {
    const hash_permutation perm{bits, 0x2545F491u};
    const std::size_t n = std::size_t(1) << bits;
    std::vector<int> hits(n, 0);
    std::size_t fixed = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_LT(perm(i), n);
      ++hits[perm(i)];
      fixed += perm(i) == i;
    }
    for (int h : hits) ASSERT_EQ(h, 1) << bits;
    if (bits >= 10) EXPECT_LT(fixed, n / 100) << bits;
  }
}

TEST(WarpMaps, PermutationsStayInTheirSegmentOrTile) {
  std::vector<int> seg(32, 0), tile(1024, 0);
  for (std::size_t t = 0; t < 32; ++t) ++seg[lane_permute_map{}(t, 0)];
  for (std::size_t t = 0; t < 1024; ++t) ++tile[tile_transpose_map{}(t, 0)];
  for (int h : seg) EXPECT_EQ(h, 1);
  for (int h : tile) EXPECT_EQ(h, 1);
  EXPECT_EQ(tile_transpose_map{}(1, 0), 32u);  // lane 1 of warp 0 reads the next segment
  EXPECT_EQ(warp_broadcast_map{}(45, 0), 32u);
}

TEST(WarpMaps, RunsCoverTheirSegmentsOnceAndKeepRunsTogether) {
  for (const unsigned run : {1u, 2u, 4u, 8u, 16u, 32u}) {
    const run_map map{run};
    std::vector<int> seen(1024, 0);
    for (std::size_t t = 0; t < 1024; ++t) ++seen[map(t, 0)];
    for (int h : seen) EXPECT_EQ(h, 1) << run;
    for (std::size_t lane = 0; lane < 32; ++lane) {  // warp 0: run elements of each segment
      EXPECT_EQ(map(lane, 0), lane / run * 32 + lane % run) << run;
    }
  }
  EXPECT_EQ(run_map{8}(32, 0), 8u);   // warp 1 takes the next run of segment 0
  EXPECT_EQ(run_map{1}(1, 0), tile_transpose_map{}(1, 0));
  EXPECT_EQ(run_map{32}(77, 0), 77u);  // coalesced
}

TEST(ReuseMaps, WindowsOverlapAndWindowedGathersStayInTheirWindow) {
  const window_map stencil{3, 1}, reread{2, 32};
  EXPECT_EQ(stencil.slots(), 3u);
  EXPECT_EQ(stencil(10, 0), 10u);
  EXPECT_EQ(stencil(10, 2), 12u);
  EXPECT_EQ(reread(5, 1), 37u);
  const window_permute_map gather{{8, 0x6C8E9CF5u}};  // windows of 256 elements
  std::vector<int> hits(1024, 0);
  for (std::size_t t = 0; t < 1024; ++t) {
    const std::size_t e = gather(t, 0);
    EXPECT_EQ(e / 256, t / 256) << t;  // stays in its window
    ++hits[e];
  }
  for (int h : hits) EXPECT_EQ(h, 1);
}

TEST(ElementsSpanned, LastThreadsLastSlotOrTheThreadCount) {
  EXPECT_EQ(elements_spanned(window_map{3, 1}, 10), 12u);  // thread 9 reads up to element 11
  EXPECT_EQ(elements_spanned(strided_map{4}, 10), 37u);
  EXPECT_EQ(elements_spanned(aos_map{4, 4}, 10), 40u);
  EXPECT_EQ(elements_spanned(window_permute_map{{8, 0x6C8E9CF5u}}, 512), 512u);
  EXPECT_EQ(elements_spanned(warp_broadcast_map{}, 64), 64u);
  EXPECT_EQ(elements_spanned(offset_map{0}, 0), 0u);
}

TEST(SpreadLines, EveryLineOfTheSetOncePerPassAndItsSpanWhateverTheOrder) {
  const spread_lines_map spread{{6, 0x2545F491u}, 4096};  // 64 lines 16 KiB apart
  std::vector<int> seen(64, 0);
  for (std::size_t t = 0; t < 128; ++t) {
    const std::size_t e = spread(t, 0);
    ASSERT_EQ(e % 4096, 0u);
    ++seen[e / 4096];
    EXPECT_EQ(spread(t + 64, 0), e);  // the next pass reads the same lines
  }
  for (int n : seen) EXPECT_EQ(n, 2);
  EXPECT_EQ(elements_spanned(spread, 128), 63u * 4096 + 1);
  EXPECT_EQ(elements_spanned(spread, 1u << 20), 1u << 20);
}

TEST(MatrixMap, ElementsAndLaunchOrder) {
  const matrix_map rows{1000, 10, 1024, false}, cols{1000, 10, 1024, true};
  EXPECT_EQ(rows.element(999, 9), 9u * 1024 + 999);  // along = column
  EXPECT_EQ(cols.element(9, 999), 9u * 1024 + 999);  // along = row
  EXPECT_EQ(rows.element(1000, 0), matrix_map::kNone);
  EXPECT_EQ(cols.element(10, 0), matrix_map::kNone);
  EXPECT_EQ(rows.threads(), 1024u * 16);  // 32 blocks along, 2 across
  // Launch order: lane, then the block's 8 warps, then the next block along the traversal.
  EXPECT_EQ(rows(1, 0), 1u);
  EXPECT_EQ(rows(32, 0), 1024u);
  EXPECT_EQ(rows(256, 0), 32u);
  EXPECT_EQ(rows(31 * 256 + 31, 0), 999u);  // an idle lane past the edge repeats the edge
  EXPECT_EQ(cols(1, 0), 1024u);              // down the column
}

TEST(SimpleMaps, StrideOffsetBroadcast) {
  EXPECT_EQ((strided_map{8}(3, 0)), 24u);
  EXPECT_EQ((offset_map{1}(3, 0)), 4u);
  EXPECT_EQ((broadcast_map{5}(1000, 0)), 5u);
}

}  // namespace
}  // namespace gmb
