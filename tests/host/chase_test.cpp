// The pointer chase's chain: one cycle through every line, and the closed form the
// verification uses for where a walk ends.
#include "gmb/chase.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace gmb {
namespace {

/// next[line] as build_chase writes it.
std::vector<std::uint32_t> build(const hash_permutation& perm, std::size_t n) {
  std::vector<std::uint32_t> next(n, ~0u);
  for (std::size_t k = 0; k < n; ++k) next[chase_line(perm, n, k)] = chase_line(perm, n, k + 1);
  return next;
}

TEST(Chase, OneCycleThroughEveryLine) {
  for (unsigned bits : {5u, 7u, 10u, 16u}) {
    const std::size_t n = std::size_t(1) << bits;
    const hash_permutation perm{bits, 0x5EEDu};
    const auto next = build(perm, n);
    std::set<std::uint32_t> seen;
    std::uint32_t line = chase_line(perm, n, 0);
    for (std::size_t step = 0; step < n; ++step) {
      EXPECT_TRUE(seen.insert(line).second) << "line " << line << " visited twice";
      line = next[line];
    }
    EXPECT_EQ(seen.size(), n);
    EXPECT_EQ(line, chase_line(perm, n, 0));  // back at the start after n steps
  }
}

TEST(Chase, AWalkEndsWhereTheClosedFormSays) {
  const unsigned bits = 12;
  const std::size_t n = std::size_t(1) << bits;
  const hash_permutation perm{bits, 0x5EEDu};
  const auto next = build(perm, n);
  for (unsigned lane : {0u, 7u, 31u}) {
    const std::size_t start = chase_start(lane, 32, n);
    std::uint32_t line = chase_line(perm, n, start);
    for (std::size_t step = 1; step <= 3 * n + 5; ++step) {
      line = next[line];
      if (step % 997 == 0 || step == 3 * n + 5) {
        ASSERT_EQ(line, chase_line(perm, n, start + step)) << "lane " << lane;
      }
    }
  }
}

TEST(Chase, NeighboursOnTheCycleAreFarApart) {
  // No prefetcher or shared line may help: consecutive lines of the walk are rarely adjacent.
  const unsigned bits = 16;
  const std::size_t n = std::size_t(1) << bits;
  const hash_permutation perm{bits, 0x5EEDu};
  std::size_t adjacent = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const long long d = static_cast<long long>(chase_line(perm, n, k + 1)) -
                        static_cast<long long>(chase_line(perm, n, k));
    adjacent += d >= -1 && d <= 1;
  }
  EXPECT_LT(adjacent, n / 100);
}

TEST(Chase, SpacedSlotsPutOneLineInEveryPageAtChangingOffsets) {
  const unsigned bits = 10;
  const std::size_t n = std::size_t(1) << bits;
  const hash_permutation perm{bits, 0x5EEDu};
  const std::uint32_t spacing = 32;  // 4-KiB pages of 128-B lines
  std::set<std::uint32_t> pages, offsets;
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t line = chase_line(perm, n, k, spacing);
    EXPECT_EQ(line / spacing, chase_line(perm, n, k));  // the slot's own page
    pages.insert(line / spacing);
    offsets.insert(line % spacing);
  }
  EXPECT_EQ(pages.size(), n);          // every page once
  EXPECT_EQ(offsets.size(), spacing);  // every line offset within a page used
  EXPECT_EQ(chase_line(perm, n, n, spacing), chase_line(perm, n, 0, spacing));  // a cycle
}

TEST(Chase, LanesStartEvenlySpread) {
  EXPECT_EQ(chase_start(0, 32, 1024), 0u);
  EXPECT_EQ(chase_start(1, 32, 1024), 32u);
  EXPECT_EQ(chase_start(31, 32, 1024), 992u);
  EXPECT_EQ(chase_start(0, 1, 128), 0u);
}

}  // namespace
}  // namespace gmb
