// The L2 replay (l2_replay.hpp): a stream reads each granule once, a set the L2 holds is read
// once however often the launch returns to it, a line re-read after more lines than the L2
// holds is read again, and a sampled replay of a large launch counts what the whole one does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "gmb/l2_replay.hpp"

namespace gmb {
namespace {

constexpr std::size_t kL2 = std::size_t(50) << 20;  // an H100's

l2_replay_launch launch_of(std::size_t threads, std::size_t l2_bytes = kL2) {
  return l2_replay_launch{threads, 1, 256, 2048 * 132, l2_bytes};
}

/// The table thread t's element `index(t)` gives, a chunk at a time.
auto table_of(std::function<std::uint64_t(std::uint64_t)> index) {
  return [index](std::size_t first, std::size_t count) {
    std::vector<std::uint32_t> slots(count);
    for (std::size_t j = 0; j < count; ++j) slots[j] = std::uint32_t(index(first + j));
    return slots;
  };
}

const auto no_store = [](std::size_t, unsigned, std::uint64_t) { return kNoAccess; };

TEST(L2Replay, AStreamReadsEachGranuleOnce) {
  const std::size_t threads = std::size_t(1) << 20;
  const auto r = replay_l2(launch_of(threads), 4, table_of([](std::uint64_t i) { return i; }),
                           no_store);
  EXPECT_DOUBLE_EQ(r.set_bytes, threads * 4.0);
  EXPECT_DOUBLE_EQ(r.load_dram_bytes, threads * 4.0);
}

TEST(L2Replay, ASetTheL2HoldsIsReadOnce) {
  // The 32-wide transpose index: 1M threads over 33,760 elements (2,110 granules), each
  // element read 31 times.
  const std::size_t threads = std::size_t(1) << 20;
  const auto r = replay_l2(launch_of(threads), 4,
                           table_of([](std::uint64_t i) { return (i % 32) * 32 + i / 32; }),
                           no_store);
  EXPECT_DOUBLE_EQ(r.set_bytes, 2110 * 64.0);
  EXPECT_DOUBLE_EQ(r.load_dram_bytes, r.set_bytes);
}

/// Pairs: granule g of each group read at thread r (its first 32-B sector), again L threads
/// later (its second), the granules of a group scattered over 2^20 granules.
std::uint64_t pair_index(std::uint64_t i, std::uint64_t lag) {
  const std::uint64_t granule = ((i / (2 * lag)) * lag + (i % lag) * 40503 % lag) * 2654435761u %
                                (std::uint64_t(1) << 20);
  return granule * 16 + (i / lag) % 2 * 8;
}

TEST(L2Replay, ALineComesBackFromTheL2OnlyWithinItsCapacity) {
  const std::size_t threads = std::size_t(1) << 20;
  const std::size_t l2 = std::size_t(4) << 20;  // 21,845 lines held of 32,768
  auto launch = launch_of(threads, l2);
  launch.in_flight = 2048;  // a small GPU: blocks out of order by 2,048 threads at most
  const auto near = replay_l2(launch, 4,
                              table_of([](std::uint64_t i) { return pair_index(i, 4096); }),
                              no_store);
  EXPECT_DOUBLE_EQ(near.set_bytes, threads / 2 * 64.0);
  EXPECT_DOUBLE_EQ(near.load_dram_bytes, near.set_bytes);  // 4K new lines in between
  // 64K threads apart: the 64K new lines in between are three times what the L2 holds.
  const auto far = replay_l2(launch, 4,
                             table_of([](std::uint64_t i) { return pair_index(i, 65536); }),
                             no_store);
  EXPECT_DOUBLE_EQ(far.set_bytes, threads / 2 * 64.0);
  EXPECT_GT(far.load_dram_bytes, 1.9 * far.set_bytes);
}

TEST(L2Replay, StoresTakePlacesInTheL2ButReadNothing) {
  const std::size_t threads = std::size_t(1) << 20;
  const auto gather_store = [](std::size_t t, unsigned, std::uint64_t) {
    return (std::uint64_t(1) << 40) + std::uint64_t(t) * 4;
  };
  const auto r = replay_l2(launch_of(threads), 4,
                           table_of([](std::uint64_t i) { return (i % 32) * 32 + i / 32; }),
                           gather_store);
  EXPECT_DOUBLE_EQ(r.load_dram_bytes, 2110 * 64.0);
}

TEST(L2Replay, ALargeLaunchIsSampledAndCountsTheSame) {
  // 2M threads of a hash over 2^24 elements, replayed whole and on one line in five.
  const std::size_t threads = std::size_t(1) << 21;
  const auto index = [](std::uint64_t i) { return i * 2654435761u % (std::uint64_t(1) << 24); };
  auto launch = launch_of(threads, std::size_t(4) << 20);
  const auto whole = replay_l2(launch, 4, table_of(index), no_store, std::size_t(1) << 30);
  const auto part = replay_l2(launch, 4, table_of(index), no_store, std::size_t(1) << 20);
  std::vector<bool> seen(std::size_t(1) << 20);
  double distinct = 0;
  for (std::uint64_t i = 0; i < threads; ++i) {
    const std::uint64_t g = index(i) / 16;
    distinct += !seen[g];
    seen[g] = true;
  }
  EXPECT_DOUBLE_EQ(whole.set_bytes, distinct * 64);
  EXPECT_GT(whole.load_dram_bytes, 1.1 * whole.set_bytes);  // some granules read twice
  EXPECT_NEAR(part.set_bytes / whole.set_bytes, 1.0, 0.03);
  EXPECT_NEAR(part.load_dram_bytes / whole.load_dram_bytes, 1.0, 0.03);
}

}  // namespace
}  // namespace gmb
