// The index maps of the on-chip path families (texture, constant, local), on the host: the
// matrix walks tile the matrix, the constant walk touches exactly `distinct` addresses per warp
// load, the local walk is uniform or per lane as named, and the texture matrix's sizing.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "gmb/traffic_model.hpp"
#include "kernels/constant.cuh"
#include "kernels/local.cuh"
#include "kernels/texture.cuh"

namespace gmb {
namespace {

const matrix_shape kMatrix{kTextureWidthLog2, 256};  // the device tests' 4-MiB matrix

TEST(TextureMatrix, SizedFromTheArrayTheL2AndTheLimits) {
  const std::size_t big = std::size_t(1) << 40;
  // The device tests' 4 MiB: 256 rows of 16 KiB.
  EXPECT_EQ(plan_texture_matrix(4 * kMiB, 50 * kMiB, 65000, big).height, 256u);
  EXPECT_EQ(plan_texture_matrix(4 * kMiB, 50 * kMiB, 65000, big).width(), 4096u);
  // A default array (32 L2s) is cut to 8 L2s: 400 MiB.
  EXPECT_EQ(plan_texture_matrix(1600 * kMiB, 50 * kMiB, 65000, big).elements() * 4, 400 * kMiB);
  // 8 L2s rounded up to whole multiples of 256 rows (50 MB: 6400000 B of 16 KiB rows).
  EXPECT_EQ(plan_texture_matrix(1600 * kMiB, 50000000, 65000, big).height, 24576u);
  // Below 8 L2s the whole array, in whole multiples of 256 rows.
  EXPECT_EQ(plan_texture_matrix(6 * kMiB, 50 * kMiB, 65000, big).height, 256u);
  // The height limit, then the linear texture's and the 2^28-element bound.
  EXPECT_EQ(plan_texture_matrix(8192 * kMiB, 1024 * kMiB, 65000, big).height, 64768u);
  EXPECT_EQ(plan_texture_matrix(8192 * kMiB, 1024 * kMiB, 65536, big).height, 65536u);
  EXPECT_EQ(plan_texture_matrix(8192 * kMiB, 1024 * kMiB, 65536, 1u << 27).height, 32768u);
  // Too small for 256 rows: no matrix.
  EXPECT_EQ(plan_texture_matrix(2 * kMiB, 50 * kMiB, 65000, big).height, 0u);
}

/// Every cell read exactly once by the elements() threads.
template <class Walk>
void expect_tiles_the_matrix(const Walk& walk) {
  const std::size_t n = walk.m.elements();
  std::vector<int> hits(n, 0);
  for (std::size_t t = 0; t < n; ++t) {
    const matrix_cell c = walk.at(t, 0);
    ASSERT_LT(c.row, walk.m.height) << t;
    ASSERT_LT(c.col, walk.m.width()) << t;
    ASSERT_EQ(walk(t, 0), walk.m.index(c));
    ++hits[walk(t, 0)];
  }
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "cell " << i;
}

TEST(TextureWalks, EveryWalkReadsEveryCellOnce) {
  expect_tiles_the_matrix(row_walk{kMatrix});
  expect_tiles_the_matrix(column_walk{kMatrix, 3});
  expect_tiles_the_matrix(column_walk{kMatrix, 0});
  expect_tiles_the_matrix(tile_gather_walk{kMatrix, 5, hash_permutation{10, 0x5EED}});
  expect_tiles_the_matrix(tile_gather_walk{kMatrix, 4, hash_permutation{8, 0x5EED}});
}

TEST(TextureWalks, RowsAreCoalescedAndColumnsGoDownAColumn) {
  const row_walk rows{kMatrix};
  for (std::size_t t = 1; t < 4096 * 3; ++t) {
    if (t % 32 != 0) {
      EXPECT_EQ(rows(t, 0), rows(t - 1, 0) + 1);
    }
  }
  for (std::uint32_t cols_log2 : {3u, 0u}) {
    const column_walk cols{kMatrix, cols_log2};
    EXPECT_EQ(cols.block_rows() * cols.block_cols(), kTextureBlock);
    for (std::size_t warp = 0; warp < 3 * 4096; ++warp) {
      const matrix_cell first = cols.at(warp * 32, 0);
      EXPECT_EQ(first.row % 32, 0u);
      for (unsigned lane = 1; lane < 32; ++lane) {
        const matrix_cell c = cols.at(warp * 32 + lane, 0);
        EXPECT_EQ(c.col, first.col);
        EXPECT_EQ(c.row, first.row + lane);
      }
    }
    // A block's 8 warps: 8 adjacent columns of the same 32 rows, or 256 rows of one column.
    std::set<std::uint32_t> block_cols, block_rows;
    for (std::size_t t = 0; t < kTextureBlock; ++t) {
      block_cols.insert(cols.at(t, 0).col);
      block_rows.insert(cols.at(t, 0).row);
    }
    EXPECT_EQ(block_cols.size(), cols.block_cols());
    EXPECT_EQ(block_rows.size(), cols.block_rows());
  }
}

TEST(TextureWalks, ColumnsCostTheModelsSectors) {
  // Plain loads: a warp down a column touches 32 sectors; along a row, 4.
  const std::size_t n = kMatrix.elements();
  EXPECT_DOUBLE_EQ(predict_traffic(row_walk{kMatrix}, n, 4, access_kind::kLoad).loads.per_request(),
                   4.0);
  for (std::uint32_t cols_log2 : {3u, 0u}) {
    const auto model = predict_traffic(column_walk{kMatrix, cols_log2}, n, 4, access_kind::kLoad);
    EXPECT_DOUBLE_EQ(model.loads.per_request(), 32.0);
  }
}

TEST(TextureWalks, StencilReadsTheFourNeighboursClampedAtTheEdges) {
  const stencil_walk s{kMatrix};
  const std::size_t w = kMatrix.width();
  const std::size_t inner = 5 * w + 7;
  EXPECT_EQ(s(inner, 0), inner);
  EXPECT_EQ(s(inner, 1), inner - w);
  EXPECT_EQ(s(inner, 2), inner + w);
  EXPECT_EQ(s(inner, 3), inner - 1);
  EXPECT_EQ(s(inner, 4), inner + 1);
  EXPECT_EQ(s(0, 1), 0u);  // top-left: up and left clamp to the centre
  EXPECT_EQ(s(0, 3), 0u);
  const std::size_t last = kMatrix.elements() - 1;  // bottom-right: down and right clamp
  EXPECT_EQ(s(last, 2), last);
  EXPECT_EQ(s(last, 4), last);
  EXPECT_EQ(s(w - 1, 4), w - 1);  // the end of a row does not wrap to the next
  EXPECT_EQ(s(w, 3), w);          // nor its start to the previous
}

TEST(TextureWalks, GathersStayInsideTheirTile) {
  for (std::uint32_t tile_log2 : {4u, 5u}) {
    const tile_gather_walk g{kMatrix, tile_log2, hash_permutation{2 * tile_log2, 0x5EED}};
    const std::size_t per_tile = std::size_t(g.tile()) * g.tile();
    for (std::size_t square = 0; square < 300; ++square) {
      const matrix_cell corner = g.at(square * per_tile, 0);
      const std::uint32_t row0 = corner.row / g.tile() * g.tile();
      const std::uint32_t col0 = corner.col / g.tile() * g.tile();
      for (std::size_t i = 0; i < per_tile; ++i) {
        const matrix_cell c = g.at(square * per_tile + i, 0);
        ASSERT_EQ(c.row / g.tile() * g.tile(), row0);
        ASSERT_EQ(c.col / g.tile() * g.tile(), col0);
      }
    }
  }
}

TEST(ConstantWalk, EachWarpLoadTouchesExactlyDistinctWordsOfOneLine) {
  for (std::uint32_t ws_words : {256u, 1024u, kConstantTableWords}) {
    for (std::uint32_t distinct : {1u, 2u, 4u, 8u, 16u, 32u}) {
      const constant_walk walk{distinct, ws_words};
      for (std::size_t warp : {0u, 1u, 7u, 1000u, 33791u}) {
        for (unsigned j = 0; j < walk.slots(); j += 5) {
          std::set<std::uint32_t> words, lines;
          for (unsigned lane = 0; lane < 32; ++lane) {
            const std::uint32_t w = walk.word(warp * 32 + lane, j);
            ASSERT_LT(w, ws_words);
            words.insert(w);
            lines.insert(w / kConstantStepWords);
          }
          EXPECT_EQ(words.size(), distinct);
          EXPECT_EQ(lines.size(), 1u);
        }
      }
    }
  }
}

TEST(ConstantWalk, LargeWorkingSetsAreCoveredByTheWarps) {
  // The SM's warps (64) spread over the whole 64-KiB bank: every line is read.
  const constant_walk walk{1, kConstantTableWords};
  std::set<std::uint32_t> lines;
  for (std::size_t warp = 0; warp < 64; ++warp) {
    for (unsigned j = 0; j < walk.slots(); ++j) lines.insert(walk.word(warp * 32, j) / 64);
  }
  EXPECT_EQ(lines.size(), kConstantTableWords / kConstantStepWords);
}

TEST(ConstantWords, FoldDependsOnEveryWordAndItsOrder) {
  const constant_walk walk{4, 256};
  const constant_words expected{word_pattern{0x1234ABCDu}, walk, 1000};
  const constant_words other{word_pattern{0x1234ABCCu}, walk, 1000};  // every word changed
  EXPECT_NE(expected(17), other(17));
  EXPECT_EQ(expected(1000), kPoisonWord);
  EXPECT_NE(fold_word(fold_word(0, 1), 2), fold_word(fold_word(0, 2), 1));
  // A word read an even number of times does not cancel (xor would).
  EXPECT_NE(fold_word(fold_word(0, 5), 5), 0u);
}

TEST(LocalWalk, UniformIsTheSameAcrossTheWarpAndLaneIsNot) {
  for (std::uint32_t size : {8u, 32u, 128u}) {
    const local_walk uniform{local_index::kUniform, size, 0};
    const local_walk lane{local_index::kLane, size, 0};
    const local_walk fixed{local_index::kStatic, size, 0};
    for (std::size_t warp : {0u, 5u}) {
      for (unsigned r = 0; r < kLocalReads; ++r) {
        std::set<std::uint32_t> u, l;
        for (unsigned i = 0; i < 32; ++i) {
          const std::size_t t = warp * 32 + i;
          ASSERT_LT(lane.at(t, r), size);
          u.insert(uniform.at(t, r));
          l.insert(lane.at(t, r));
          EXPECT_EQ(fixed.at(t, r), uniform.at(t, r));  // the control reads the same elements
        }
        EXPECT_EQ(u.size(), 1u);
        EXPECT_EQ(l.size(), std::min(size, 32u));
      }
    }
    // Over its reads a thread visits every element of the array.
    std::set<std::uint32_t> visited;
    for (unsigned r = 0; r < kLocalReads; ++r) visited.insert(uniform.at(3, r));
    EXPECT_EQ(visited.size(), std::min<std::size_t>(size, kLocalReads));
  }
}

TEST(LocalWords, ChecksDependOnTheInputAndStopAtN) {
  const word_pattern in{0x1234ABCDu}, other{0x1234ABCCu};
  const local_walk walk{local_index::kLane, 32, 0};
  EXPECT_NE((local_array_words{in, walk, 64})(5), (local_array_words{other, walk, 64})(5));
  EXPECT_EQ((local_array_words{in, walk, 64})(64), kPoisonWord);
  EXPECT_NE(spill_chain(1, 16), spill_chain(2, 16));
  EXPECT_NE(spill_chain(1, 16), spill_chain(1, 15));
  EXPECT_EQ((spill_words{in, 16, 64})(3), spill_chain(in(3), 16));
  EXPECT_EQ((spill_words{in, 16, 64})(64), kPoisonWord);
}

}  // namespace
}  // namespace gmb
