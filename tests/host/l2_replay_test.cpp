// The L2 replay (l2_replay.hpp): a stream reads each granule once, a set the L2 holds is read
// once however often the launch returns to it, a line re-read after more lines than the L2
// holds is read again, and a sampled replay of a large launch counts what the whole one does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
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

TEST(L2Replay, CountsThePagesTheSetLiesOn) {
  // A stream of 4 MiB (two 2-MiB pages), and 2^10 lines 16 KiB apart: 16 MiB, eight pages.
  const std::size_t threads = std::size_t(1) << 20;
  EXPECT_DOUBLE_EQ(replay_l2(launch_of(threads), 4,
                             table_of([](std::uint64_t i) { return i; }), no_store)
                       .set_pages,
                   2.0);
  EXPECT_DOUBLE_EQ(replay_l2(launch_of(threads), 4,
                             table_of([](std::uint64_t i) { return i % 1024 * 4096; }), no_store)
                       .set_pages,
                   8.0);
  // One word at the start of each of 3 pages far apart: 3.
  const auto far = table_of([](std::uint64_t i) { return i * (std::uint64_t(1) << 24); });
  EXPECT_DOUBLE_EQ(replay_l2(launch_of(3), 4, far, no_store).set_pages, 3.0);
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
  // Pairs 4,096 threads apart in an L2 that holds 6,144 lines: alone they come back from the
  // L2; with a stored line per thread in between (8,192 new lines) they are read again.
  const std::size_t threads = std::size_t(1) << 20;
  auto launch = launch_of(threads, std::size_t(6144) * 128 * 3 / 2);
  launch.in_flight = 2048;
  const auto pairs = table_of([](std::uint64_t i) { return pair_index(i, 4096); });
  const auto line_per_thread = [](std::size_t t, unsigned, std::uint64_t) {
    return (std::uint64_t(1) << 40) + std::uint64_t(t) * 128;
  };
  const auto alone = replay_l2(launch, 4, pairs, no_store);
  const auto with_stores = replay_l2(launch, 4, pairs, line_per_thread);
  EXPECT_DOUBLE_EQ(alone.load_dram_bytes, alone.set_bytes);
  EXPECT_DOUBLE_EQ(with_stores.set_bytes, alone.set_bytes);
  EXPECT_GT(with_stores.load_dram_bytes, 1.5 * with_stores.set_bytes);  // 1.98
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

TEST(L2Replay, ASmallSetIsReadOnceWhateverTheSampleHolds) {
  // 16M threads on one element: sampled, the sample may hold none of its line.
  for (std::uint64_t element : {1000u, 123456u}) {
    const auto r = replay_l2(launch_of(std::size_t(1) << 24), 4,
                             table_of([element](std::uint64_t) { return element; }), no_store);
    EXPECT_TRUE(r.replayed);
    EXPECT_DOUBLE_EQ(r.set_bytes, 64.0);
    EXPECT_DOUBLE_EQ(r.load_dram_bytes, 64.0) << element;
  }
}

TEST(L2Replay, ALaunchPastItsBoundsIsNotReplayed) {
  auto launch = launch_of(std::size_t(1) << 25);
  launch.k = 16;  // 2^29 slots
  const auto r = replay_l2(launch, 4, table_of([](std::uint64_t i) { return i; }), no_store);
  EXPECT_FALSE(r.replayed);
}

/// The gather `gmb pattern` runs: 16M threads over n = 2^29 floats, each storing its value
/// coalesced; on an H200 (60 MiB of L2) or an H100 (50 MiB), 132 SMs of 2,048 threads each.
double gather_reads(std::function<std::uint64_t(std::uint64_t)> index,
                    std::size_t l2_bytes = std::size_t(60) << 20) {
  const l2_replay_launch launch{std::size_t(1) << 24, 1, 256, 270336, l2_bytes};
  const auto store = [](std::size_t t, unsigned, std::uint64_t) {
    return (std::uint64_t(1) << 40) + std::uint64_t(t) * 4;
  };
  return replay_l2(launch, 4, table_of(std::move(index)), store).load_dram_bytes;
}

TEST(L2Replay, ReadsWhatNsightComputeMeasuredOnAnH200) {
  // DRAM bytes read, Nsight Compute (dram__bytes_read.sum), one launch after an L2 flush:
  // results/nvidia-h200/20261203-103300-l2-replay/ (ncu13/ncu.csv.gz, ncu-pairs/ncu.csv.gz).
  const std::uint64_t n = std::uint64_t(1) << 29;
  const auto mix = [n](std::uint64_t i) {
    const std::uint64_t a = i * 2654435761u % 4294967296u, b = (a ^ (a / 8192)) * 1540483477u %
                                                                 4294967296u;
    return (b ^ (b / 65536)) % n;
  };
  const auto pair = [](std::uint64_t lag) {
    return [lag](std::uint64_t i) {
      return ((i / (lag * 2)) * lag + (i % lag) * 40503 % lag) * 2654435761u % 33554432 * 16 +
             (i / lag) % 2 * 8;
    };
  };
  const struct {
    const char* expression;
    std::function<std::uint64_t(std::uint64_t)> index;
    double ncu_bytes;
  } cases[] = {
      {"i * 32", [](std::uint64_t i) { return i * 32; }, 1073778000},
      {"(i % 32) * 32 + i / 32", [](std::uint64_t i) { return i % 32 * 32 + i / 32; }, 2111000},
      {"(i * 2654435761) % n", [n](std::uint64_t i) { return i * 2654435761u % n; }, 895943000},
      {"(i / 1024) * 1024 + (i * 37) % 1024",
       [](std::uint64_t i) { return i / 1024 * 1024 + i * 37 % 1024; }, 67131000},
      {"i * 3", [](std::uint64_t i) { return i * 3; }, 201346000},
      {"i / 2", [](std::uint64_t i) { return i / 2; }, 33564000},
      {"mixed hash", mix, 1063788000},
      {"pairs 131072 apart", pair(131072), 538.5e6},
      {"pairs 262144 apart", pair(262144), 623.0e6},
      {"pairs 524288 apart", pair(524288), 1054.4e6},
  };
  for (const auto& c : cases) {
    const double replayed = gather_reads(c.index);
    std::printf("%s: replayed %.1f MB, Nsight Compute %.1f MB (%.3f)\n", c.expression,
                replayed / 1e6, c.ncu_bytes / 1e6, replayed / c.ncu_bytes);
    // The pairs 262,144 threads apart: 0.925 (the replay keeps more of them in the L2 than the
    // GPU does).
    const double within = std::string(c.expression) == "pairs 262144 apart" ? 0.08 : 0.05;
    EXPECT_NEAR(replayed / c.ncu_bytes, 1.0, within) << c.expression << ": " << replayed;
  }
}

TEST(L2Replay, ReadsWhatNsightComputeMeasuredOnAnH100) {
  // results/nvidia-h100-80gb-hbm3/20261127-155827-pattern-model/ncu-patterns.csv
  const std::uint64_t n = std::uint64_t(1) << 29;
  const std::size_t l2 = std::size_t(50) << 20;
  const double hash = gather_reads([n](std::uint64_t i) { return i * 2654435761u % n; }, l2);
  const double transposed = gather_reads([](std::uint64_t i) { return i % 32 * 32 + i / 32; }, l2);
  std::printf("H100: the hash replayed %.1f MB (Nsight Compute 970.9), the transpose index "
              "%.3f MB (2.105)\n", hash / 1e6, transposed / 1e6);
  EXPECT_NEAR(hash / 970.9e6, 1.0, 0.05);
  EXPECT_NEAR(transposed / 2105088, 1.0, 0.05);
}

}  // namespace
}  // namespace gmb
