// The pattern family's model input: an index table sampled where the traffic model looks gives
// exactly the built-in maps' predictions, and the warp description reads steps, broadcasts and
// alignment off it.
#include <gtest/gtest.h>

#include <cmath>

#include "gmb/pattern.cuh"
#include "gmb/pattern_table.hpp"

namespace gmb {
namespace {

/// The table a map gives, sampled where predict_traffic looks.
template <class Map>
sampled_table sample(const Map& map, std::size_t threads, unsigned k = 1) {
  return sample_windows(threads, k, [&](std::size_t first, std::size_t count) {
    std::vector<std::uint32_t> values;
    for (std::size_t slot = first; slot < first + count; ++slot) {
      values.push_back(std::uint32_t(map(slot / k, unsigned(slot % k))));
    }
    return values;
  });
}

void expect_same(const traffic_prediction& a, const traffic_prediction& b) {
  EXPECT_DOUBLE_EQ(a.loads.per_request(), b.loads.per_request());
  EXPECT_DOUBLE_EQ(a.stores.per_request(), b.stores.per_request());
  EXPECT_DOUBLE_EQ(a.dram_bytes, b.dram_bytes);
  EXPECT_DOUBLE_EQ(a.useful_bytes, b.useful_bytes);
}

TEST(PatternTable, SampledTableModelsLikeTheBuiltInMaps) {
  const std::size_t threads = std::size_t(1) << 22;
  const word_shape f32{4, 4};
  for (std::size_t s : {1, 2, 8, 32}) {
    const strided_map map{s};
    const sampled_table table = sample(map, threads);
    const sampled_table_map as_table{&table, f32};
    expect_same(predict_traffic(as_table, threads, 4, access_kind::kLoad),
                predict_traffic(map, threads, 4, access_kind::kLoad));
    EXPECT_DOUBLE_EQ(predict_traffic(as_table, threads, 4, access_kind::kLoad).loads.per_request(),
                     s >= 8 ? 32.0 : 4.0 * s);
  }
  const offset_map off{1};
  const sampled_table shifted = sample(off, threads);
  EXPECT_DOUBLE_EQ(predict_traffic(sampled_table_map{&shifted, f32}, threads, 4, access_kind::kLoad)
                       .loads.per_request(),
                   5.0);
}

TEST(PatternTable, StructuresAreModelledInTheirLoadPieces) {
  // One 12-B structure per thread, packed: three 4-B loads, 12 sectors each (aos/p12's count).
  const std::size_t threads = std::size_t(1) << 20;
  const strided_map one_per_thread{1};
  const sampled_table table = sample(one_per_thread, threads);
  const sampled_table_map pieces{&table, {12, 4}};
  EXPECT_EQ(pieces.slots(), 3u);
  EXPECT_DOUBLE_EQ(
      predict_traffic(pieces, threads, 4, access_kind::kLoad).loads.per_request(),
      predict_traffic(aos_map{3, 3}, threads, 4, access_kind::kLoad).loads.per_request());
}

TEST(PatternTable, CoalescedSideMatchesCoalescedMap) {
  const std::size_t threads = std::size_t(1) << 20;
  const coalesced_slots_map side{256, 4, {4, 4}};
  const coalesced_map<256, 4> builtin;
  for (std::size_t t : {std::size_t(0), std::size_t(255), std::size_t(256), threads - 1}) {
    for (unsigned s = 0; s < 4; ++s) EXPECT_EQ(side(t, s), builtin(t, s));
  }
}

TEST(PatternTable, DescribesSteppedBroadcastAndScatteredWarps) {
  const std::size_t threads = std::size_t(1) << 20;
  const warp_shape unit = describe_warps(sample(strided_map{1}, threads), threads, 4);
  EXPECT_EQ(unit.lane_step, 1);
  EXPECT_EQ(unit.distinct_per_request, 32);
  EXPECT_EQ(unit.aligned_fraction, 1);
  const warp_shape shifted = describe_warps(sample(offset_map{1}, threads), threads, 4);
  EXPECT_EQ(shifted.aligned_fraction, 0);
  EXPECT_EQ(describe_warps(sample(strided_map{8}, threads), threads, 4).lane_step, 8);
  const warp_shape one = describe_warps(sample(warp_broadcast_map{}, threads), threads, 4);
  EXPECT_EQ(one.distinct_per_request, 1);
  const warp_shape perm = describe_warps(sample(lane_permute_map{}, threads), threads, 4);
  EXPECT_TRUE(std::isnan(perm.lane_step));
  EXPECT_EQ(perm.distinct_per_request, 32);
  // The 128-B lines a request's words touch: one for a coalesced warp, two for one a word
  // off, eight for lanes 32 B apart, four for 16-B words side by side
  EXPECT_EQ(unit.lines_per_request, 1);
  EXPECT_EQ(shifted.lines_per_request, 2);
  EXPECT_EQ(describe_warps(sample(strided_map{8}, threads), threads, 4).lines_per_request, 8);
  EXPECT_EQ(describe_warps(sample(strided_map{1}, threads), threads, 16).lines_per_request, 4);
}

TEST(PatternTable, WordAlignment) {
  EXPECT_EQ(word_alignment(4), 4u);
  EXPECT_EQ(word_alignment(12), 4u);
  EXPECT_EQ(word_alignment(24), 8u);
  EXPECT_EQ(word_alignment(48), 16u);
}

}  // namespace
}  // namespace gmb
