// The warp traffic model against the hand-derived cases of docs/design.md.
#include "gmb/traffic_model.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gmb/pattern.cuh"

namespace gmb {
namespace {

/// Byte addresses of 32 lanes: lane i at base + i * step.
std::vector<std::uint64_t> lanes(std::uint64_t base, std::uint64_t step) {
  std::vector<std::uint64_t> a;
  for (std::uint64_t i = 0; i < kWarpSize; ++i) a.push_back(base + i * step);
  return a;
}

TEST(WarpModel, UnitStrideFloatIsFourSectors) {
  const warp_access acc = model_warp(lanes(0, 4), 4);
  EXPECT_EQ(acc.sectors, 4u);
  EXPECT_EQ(acc.dram_chunks, 2u);
  EXPECT_EQ(acc.requested_bytes, 128u);
}

TEST(WarpModel, StrideTwoIsEightSectors) { EXPECT_EQ(model_warp(lanes(0, 8), 4).sectors, 8u); }

TEST(WarpModel, StrideEightOrMoreIsThirtyTwoSectors) {
  for (std::uint64_t s : {8, 9, 32, 1024}) EXPECT_EQ(model_warp(lanes(0, 4 * s), 4).sectors, 32u);
  EXPECT_EQ(model_warp(lanes(0, 4 * 4), 4).sectors, 16u);
}

TEST(WarpModel, MisalignedByOneWordIsFiveSectors) {
  EXPECT_EQ(model_warp(lanes(4, 4), 4).sectors, 5u);
}

TEST(WarpModel, AllLanesOneWordIsOneSector) {
  const warp_access acc = model_warp(lanes(256, 0), 4);
  EXPECT_EQ(acc.sectors, 1u);
  EXPECT_EQ(acc.requested_bytes, 4u);
}

TEST(WarpModel, TwelveByteAosOneFieldIsTwelveSectors) {
  EXPECT_EQ(model_warp(lanes(0, 12), 4).sectors, 12u);
}

TEST(WarpModel, VectorWidthsCoverTheirBytes) {
  EXPECT_EQ(model_warp(lanes(0, 8), 8).sectors, 8u);
  EXPECT_EQ(model_warp(lanes(0, 16), 16).sectors, 16u);
}

TEST(WarpModel, StrideSixteenFloatsIsThirtyTwoDramChunks) {
  const warp_access acc = model_warp(lanes(0, 64), 4);
  EXPECT_EQ(acc.sectors, 32u);
  EXPECT_EQ(acc.dram_chunks, 32u);
}

TEST(WarpModel, LaneOrderDoesNotMatter) {
  std::vector<std::uint64_t> a = lanes(4, 4);
  std::swap(a.front(), a.back());
  EXPECT_EQ(model_warp(a, 4).sectors, 5u);
}

TEST(PredictTraffic, CoalescedMovesExactlyTheArray) {
  const std::size_t threads = 1 << 16;
  const auto p = predict_traffic(coalesced_map<256, 4>{}, threads, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(p.sectors_per_request(), 4.0);
  EXPECT_DOUBLE_EQ(p.loads.requests, threads / 32.0 * 4);
  EXPECT_DOUBLE_EQ(p.stores.requests, 0.0);
  EXPECT_DOUBLE_EQ(p.dram_bytes, threads * 4.0 * 4);
  EXPECT_DOUBLE_EQ(p.efficiency(), 1.0);
}

TEST(PredictTraffic, SixteenByteElementsAreSixteenSectorsPerRequest) {
  const auto p = predict_traffic(coalesced_map<256, 2>{}, 1 << 14, 16, access_kind::kStore);
  EXPECT_DOUBLE_EQ(p.sectors_per_request(), 16.0);
  EXPECT_DOUBLE_EQ(p.efficiency(), 1.0);
}

TEST(PredictTraffic, OffsetCostsFiveSectorsButNeighboursShareDramChunks) {
  const std::size_t threads = 1 << 16;
  const auto p = predict_traffic(offset_map{1}, threads, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(p.sectors_per_request(), 5.0);
  EXPECT_GT(p.dram_bytes, threads * 4.0);
  EXPECT_LT(p.dram_bytes, threads * 4.0 * 1.01);
}

TEST(PredictTraffic, StrideTwoLoadsMoveTwiceTheUsefulBytes) {
  const auto p = predict_traffic(strided_map{2}, 1 << 16, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(p.sectors_per_request(), 8.0);
  EXPECT_DOUBLE_EQ(p.efficiency(), 0.5);
}

TEST(PredictTraffic, PartialSectorStoresAlsoReadTheirSector) {
  const std::size_t threads = 1 << 16;
  const auto p = predict_traffic(strided_map{2}, threads, 4, access_kind::kStore);
  // Four lanes half-fill each sector: it is read first, then written back whole.
  const double sectors = threads / 4.0;
  EXPECT_DOUBLE_EQ(p.dram_bytes, sectors * 32 + sectors * 32);
  // Sixteen floats apart, every store has a sector of its own (a 64-B load would read 64 B).
  const auto sparse = predict_traffic(strided_map{16}, threads, 4, access_kind::kStore);
  EXPECT_DOUBLE_EQ(sparse.dram_bytes, threads * 64.0);
  const auto sparse_load = predict_traffic(strided_map{16}, threads, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(sparse_load.dram_bytes, threads * 64.0);
}

TEST(PredictTraffic, AosOneFieldOfTwelveBytesIsTwelveSectors) {
  const auto p = predict_traffic(aos_map{3, 1}, 1 << 14, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(p.sectors_per_request(), 12.0);
  EXPECT_NEAR(p.efficiency(), 1.0 / 3, 0.01);  // one word of every 12-B structure is used
}

TEST(PredictTraffic, AosAllFieldsMovesEveryByteOnce) {
  const std::size_t threads = 1 << 14;
  // Packed 12-B structures read as three 4-B loads: each request spans 12 sectors ...
  const auto packed = predict_traffic(aos_map{3, 3}, threads, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(packed.sectors_per_request(), 12.0);
  // ... but together the three loads use every byte they bring from DRAM.
  EXPECT_NEAR(packed.dram_bytes, threads * 12.0, threads * 12.0 * 0.01);
  // SoA: three coalesced streams of 4 sectors per request.
  const auto soa = predict_traffic(soa_map{threads, 3}, threads, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(soa.sectors_per_request(), 4.0);
  EXPECT_DOUBLE_EQ(soa.efficiency(), 1.0);
}

TEST(SoaOutputsMap, EachOutputReadsItsOwnFieldsOfTheSameThread) {
  const soa_outputs_map map{100, 4};  // 8 fields of 100 threads to two outputs, 4 each
  EXPECT_EQ(map.slots(), 4u);
  EXPECT_EQ(map(7, 0), 7u);             // output 0, thread 7: fields 0 .. 3
  EXPECT_EQ(map(7, 3), 3 * 100u + 7);
  EXPECT_EQ(map(107, 0), 4 * 100u + 7);  // output 1, thread 7: fields 4 .. 7
  EXPECT_EQ(map(107, 3), 7 * 100u + 7);
  const soa_map one{100, 4};  // one output: the structure of arrays itself
  for (unsigned j = 0; j < 4; ++j) EXPECT_EQ(soa_outputs_map({100, 4})(42, j), one(42, j));
}

TEST(PredictTraffic, WarpPatterns) {
  const std::size_t threads = 1 << 14;
  EXPECT_DOUBLE_EQ(
      predict_traffic(warp_broadcast_map{}, threads, 4, access_kind::kLoad).sectors_per_request(),
      1.0);
  EXPECT_DOUBLE_EQ(
      predict_traffic(lane_permute_map{}, threads, 4, access_kind::kLoad).sectors_per_request(),
      4.0);
  const auto across = predict_traffic(tile_transpose_map{}, threads, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(across.sectors_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(across.efficiency(), 1.0);  // the tile's warps use every sector together
}

TEST(PredictTraffic, RunsMoveFourUsedSectorsPerRequestWhateverTheirLength) {
  for (const unsigned run : {8u, 16u, 32u}) {  // 32-, 64- and 128-B runs of 4-B words
    const auto t = predict_traffic(run_map{run}, 1 << 14, 4, access_kind::kLoad);
    EXPECT_DOUBLE_EQ(t.sectors_per_request(), 4.0) << run;
    EXPECT_DOUBLE_EQ(t.efficiency(), 1.0) << run;
  }
}

TEST(PredictTraffic, LoadsAndStoresAreCountedApart) {
  const std::size_t threads = 1 << 14;
  const auto copy = predict_traffic(offset_map{1}, threads, 4, access_kind::kLoad) +
                    predict_traffic(offset_map{0}, threads, 4, access_kind::kStore);
  EXPECT_DOUBLE_EQ(copy.loads.per_request(), 5.0);
  EXPECT_DOUBLE_EQ(copy.stores.per_request(), 4.0);
  EXPECT_DOUBLE_EQ(copy.sectors_per_request(), 5.0);
  const auto write = predict_traffic(strided_map{2}, threads, 4, access_kind::kStore);
  EXPECT_DOUBLE_EQ(write.sectors_per_request(), 8.0);
}

TEST(PredictTraffic, MatrixTraversals) {
  const matrix_map rows{1024, 1024, 1024, false}, cols{1024, 1024, 1024, true};
  const auto r = predict_traffic(rows, rows.threads(), 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(r.sectors_per_request(), 4.0);
  EXPECT_DOUBLE_EQ(r.efficiency(), 1.0);
  // Down a column a warp touches 32 rows; the 8 warps of a block take 8 neighbouring columns,
  // one full sector per row, but only half of each 64-B chunk.
  const auto c = predict_traffic(cols, cols.threads(), 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(c.sectors_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(c.efficiency(), 0.5);
}

TEST(PredictTraffic, ReusePatternsRequestMoreSectorsThanTheyNeed) {
  const std::size_t threads = 1 << 14;
  // Stencil of radius 1: the centre tap is aligned (4 sectors), the two others straddle (5).
  const auto stencil = predict_traffic(window_map{3, 1}, threads, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(stencil.sectors_per_request(), 14.0 / 3);
  // DRAM sees each line once (within 1%: each sampled window of warps reads past its end).
  EXPECT_NEAR(stencil.dram_bytes, threads * 4.0, threads * 4.0 * 0.01);
  // Re-reading the next warp's words is aligned; re-reading one word on is not.
  EXPECT_DOUBLE_EQ(
      predict_traffic(window_map{2, 32}, threads, 4, access_kind::kLoad).sectors_per_request(),
      4.0);
  EXPECT_DOUBLE_EQ(
      predict_traffic(window_map{2, 1}, threads, 4, access_kind::kLoad).sectors_per_request(),
      4.5);
  // 16-B structures, four 4-B loads: each load spans the warp's 512 B.
  const auto aos = predict_traffic(aos_map{4, 4}, threads, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(aos.sectors_per_request(), 16.0);
  EXPECT_DOUBLE_EQ(aos.efficiency(), 1.0);
  // A random gather within 1-KiB windows: a warp's 32 words fall in more than 4 of the
  // window's 32 sectors, and the window's warps together use all of them.
  const auto gather =
      predict_traffic(window_permute_map{{8, 0x6C8E9CF5u}}, threads, 4, access_kind::kLoad);
  EXPECT_GT(gather.sectors_per_request(), 12.0);
  EXPECT_LE(gather.sectors_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(gather.efficiency(), 1.0);
}

TEST(PredictTraffic, BroadcastIsOneSectorPerRequest) {
  const auto p = predict_traffic(broadcast_map{7}, 1 << 12, 4, access_kind::kLoad);
  EXPECT_DOUBLE_EQ(p.sectors_per_request(), 1.0);
}

}  // namespace
}  // namespace gmb
