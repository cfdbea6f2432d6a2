// The ladders' index math: every transpose rung loads each input element once and stores each
// once at its transposed place, reading shared memory where another thread put the element;
// every reduction's passes end in one sum, on aligned, disjoint partials; the inputs' host sum.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <tuple>
#include <vector>

#include "gmb/reduce_plan.hpp"
#include "gmb/transpose_plan.hpp"

namespace gmb {
namespace {

struct walk_result {
  std::vector<int> loads, stores;  // per input element
  std::size_t tile_mismatches = 0;
};

/// Walks every block, thread and slot of a plan as the kernels do.
walk_result walk(const transpose_plan& p) {
  walk_result w{std::vector<int>(p.rows * p.cols), std::vector<int>(p.rows * p.cols)};
  for (std::size_t b = 0; b < p.blocks(); ++b) {
    for (unsigned y = 0; y < p.block_y(); ++y) {
      for (unsigned x = 0; x < p.block_x(); ++x) {
        for (std::size_t s = 0; s < p.slots(); ++s) {
          const unsigned pw = p.pair_width();
          const matrix_element in = p.loaded(b, x, y, s);
          const matrix_element out = p.stored(b, x, y, s);
          for (unsigned j = 0; j < pw; ++j) {  // the pair: (r, c + j) loaded, (r + j, c) stored
            const matrix_element in_j = p.element(in.r, in.c + j);
            if (in.valid && in_j.valid) ++w.loads[p.in_index(in_j)];
            const matrix_element out_j = p.element(out.r + j, out.c);
            if (out.valid && out_j.valid) ++w.stores[p.in_index(out_j)];
            if (!p.tiled() || p.rung == transpose_rung::kCopy || !out.valid || !out_j.valid) {
              continue;
            }
            // The store reads tile[x * pw + j][y + s * block_y]: what thread x' = column / pw
            // (element column % pw of its pair), y' = row % block_y loaded in slot row / block_y.
            const unsigned row = x * pw + j;
            const unsigned column = y + static_cast<unsigned>(s) * p.block_y();
            const matrix_element there =
                p.loaded(b, column / pw, row % p.block_y(), row / p.block_y());
            const matrix_element source = p.element(there.r, there.c + column % pw);
            if (!there.valid || source.r != out_j.r || source.c != out_j.c) ++w.tile_mismatches;
          }
        }
      }
    }
  }
  return w;
}

TEST(TransposePlan, EveryRungMovesEveryElementOnceOnEveryShape) {
  const std::vector<std::pair<std::size_t, std::size_t>> shapes = {
      {1, 1}, {1, 37}, {45, 1}, {3, 3}, {32, 32}, {33, 65}, {64, 64}, {100, 257}, {96, 31}};
  for (int r = 0; r < kTransposeRungs; ++r) {
    for (const auto& [rows, cols] : shapes) {
      const transpose_plan p{static_cast<transpose_rung>(r), rows, cols};
      SCOPED_TRACE(std::string(transpose_rung_name(p.rung)) + " " + std::to_string(rows) + "x" +
                   std::to_string(cols));
      const walk_result w = walk(p);
      std::size_t wrong_loads = 0, wrong_stores = 0;
      for (std::size_t e = 0; e < rows * cols; ++e) {
        wrong_loads += w.loads[e] != 1;
        wrong_stores += w.stores[e] != 1;
      }
      EXPECT_EQ(wrong_loads, 0u);
      EXPECT_EQ(wrong_stores, 0u);
      EXPECT_EQ(w.tile_mismatches, 0u);
    }
  }
}

TEST(TransposePlan, OutputPlacesAreTheTransposeAndCoverTheOutput) {
  const transpose_plan t{transpose_rung::kTileRows8, 5, 7};
  std::set<std::size_t> places;
  for (std::size_t r = 0; r < 5; ++r) {
    for (std::size_t c = 0; c < 7; ++c) places.insert(t.out_index({r, c, true}));
  }
  EXPECT_EQ(places.size(), 35u);
  EXPECT_EQ(*places.rbegin(), 34u);
  EXPECT_EQ(t.out_index({1, 2, true}), 2u * 5 + 1);  // output row 2 (input column), column 1
  const transpose_plan copy{transpose_rung::kCopy, 5, 7};
  EXPECT_EQ(copy.out_index({1, 2, true}), 1u * 7 + 2);
}

TEST(TransposePlan, WarpsReadOrWriteAlongRowsAsEachRungPromises) {
  // Consecutive lanes: +1 element on the coalesced side, a whole row on the strided side.
  const std::size_t n = 256;
  auto step = [&](transpose_rung r, bool store) {
    const transpose_plan p{r, n, n};
    const matrix_element a = store ? p.stored(3, 4, 0, 0) : p.loaded(3, 4, 0, 0);
    const matrix_element b = store ? p.stored(3, 5, 0, 0) : p.loaded(3, 5, 0, 0);
    const std::size_t ia = store ? p.out_index(a) : p.in_index(a);
    const std::size_t ib = store ? p.out_index(b) : p.in_index(b);
    return (static_cast<long long>(ib) - static_cast<long long>(ia)) / p.pair_width();
  };
  using R = transpose_rung;
  for (R r : {R::kCopy, R::kThreadPerCol, R::kNaiveRows, R::kTile, R::kTilePadded, R::kTileRows8,
              R::kTileDiagonal, R::kTileAsync, R::kTileTma, R::kBest}) {
    EXPECT_EQ(step(r, false), 1) << transpose_rung_name(r);
  }
  for (R r : {R::kNaiveCols, R::kWarpPerCol})
    EXPECT_EQ(step(r, false), 256) << transpose_rung_name(r);
  for (R r : {R::kCopy, R::kNaiveCols, R::kWarpPerCol, R::kTile, R::kTilePadded, R::kTileRows8,
              R::kTileDiagonal, R::kTileAsync, R::kTileTma, R::kBest}) {
    EXPECT_EQ(step(r, true), 1) << transpose_rung_name(r);
  }
  for (R r : {R::kThreadPerCol, R::kNaiveRows})
    EXPECT_EQ(step(r, true), 256) << transpose_rung_name(r);
}

TEST(TransposePlan, DiagonalOrderVisitsEveryTileOnce) {
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{96, 160}, {320, 64}, {64, 64}}) {
    const transpose_plan p{transpose_rung::kTileDiagonal, rows, cols};
    std::set<std::pair<std::size_t, std::size_t>> seen;
    bool moved = false;
    for (std::size_t b = 0; b < p.blocks(); ++b) {
      std::size_t gx, gy;
      p.tile_of(b, gx, gy);
      EXPECT_LT(gx, p.tiles_x());
      EXPECT_LT(gy, p.tiles_y());
      seen.insert({gx, gy});
      moved |= gx != b % p.tiles_x();
    }
    EXPECT_EQ(seen.size(), p.blocks());
    EXPECT_TRUE(moved);  // not the row order under another name
  }
}

TEST(ReducePlan, PassesEndInOneSumOnAlignedDisjointPartials) {
  for (int r = 0; r < kReduceRungs; ++r) {
    const auto rung = static_cast<reduce_rung>(r);
    for (std::size_t n : {1ull, 7ull, 256ull, 257ull, 513ull, 100003ull, 470000000ull}) {
      SCOPED_TRACE(std::string(reduce_rung_name(rung)) + " n=" + std::to_string(n));
      const auto passes = reduce_passes(rung, n, 1056);
      ASSERT_FALSE(passes.empty());
      EXPECT_EQ(passes.front().count, n);
      EXPECT_EQ(passes.front().from, kReduceInput);
      EXPECT_EQ(passes.back().to, kReduceResultWord);
      if (rung == reduce_rung::kOnePass) {
        EXPECT_EQ(passes.size(), 1u);
        // At most a block per tile of 16-B vectors (the count % 4 elements past them go to
        // block 0), and no more than the resident blocks.
        EXPECT_GE(passes[0].blocks, 1u);
        EXPECT_LE(passes[0].blocks, 1056u);
        EXPECT_LT((passes[0].blocks - 1) * kOnePassTile, std::max<std::size_t>(n / 4 * 4, 1));
        continue;
      }
      EXPECT_EQ(passes.back().blocks, 1u);
      for (std::size_t i = 0; i < passes.size(); ++i) {
        const reduce_pass& p = passes[i];
        const std::size_t per_block = r <= 2 ? 256 : 512;
        if (r <= 5) EXPECT_GE(p.blocks * per_block, p.count);  // one element per thread slot
        if (r > 5) EXPECT_LE(p.blocks, 1056u);
        if (i + 1 < passes.size()) {
          EXPECT_EQ(passes[i + 1].from, p.to);
          EXPECT_EQ(passes[i + 1].count, p.blocks);
          EXPECT_EQ(p.to % 4, 0u);  // 16-B aligned for the vector rung
          EXPECT_GE(p.to, kReducePartialsWord);
          if (p.from != kReduceInput) EXPECT_GE(p.to, p.from + p.count);  // no overlap
        }
      }
    }
  }
}

TEST(ReducePlan, InputsAreSmallIntegersWhoseSumTheHostKnows) {
  long long plain = 0;
  std::set<int> values;
  for (std::size_t w = 0; w < 100003; ++w) {
    const int v = reduce_value(w, 7);
    values.insert(v);
    plain += v;
  }
  EXPECT_EQ(values, (std::set<int>{-3, -2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(reduce_expected_sum(100003, 7), plain);
  EXPECT_LT(std::llabs(plain), 100003 / 10);  // mean near zero: partials stay small
  const reduce_words as_float{7, true}, as_int{7, false};
  for (std::size_t w = 0; w < 64; ++w) {
    float f;
    const std::uint32_t bits = as_float(w);
    std::memcpy(&f, &bits, sizeof f);
    EXPECT_EQ(f, static_cast<float>(reduce_value(w, 7)));
    EXPECT_EQ(static_cast<int>(as_int(w)), reduce_value(w, 7));
  }
}

}  // namespace
}  // namespace gmb
