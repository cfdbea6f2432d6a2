// The loaded chase's roles: one chase, exactly K streams spread evenly, on whatever SM ids the
// GPU has.
#include "gmb/loaded_roles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace gmb {
namespace {

std::vector<unsigned> ids(unsigned n, unsigned step = 1) {
  std::vector<unsigned> v;
  for (unsigned i = 0; i < n; ++i) v.push_back(i * step);
  return v;
}

TEST(LoadedRoles, OneChaseOnTheLowestIdAndExactlyKStreamsNumberedInIdOrder) {
  for (unsigned k = 0; k <= 131; ++k) {
    const auto roles = loaded_roles(ids(132), k, 1024);
    EXPECT_EQ(roles[0], kChaseRole);
    EXPECT_EQ(std::count(roles.begin(), roles.end(), kChaseRole), 1);
    std::vector<unsigned> streams;
    for (unsigned r : roles) {
      if (r >= kFirstStreamRole) streams.push_back(r - kFirstStreamRole);
    }
    ASSERT_EQ(streams.size(), k);
    for (unsigned i = 0; i < k; ++i) EXPECT_EQ(streams[i], i);  // ids ascending, streams 0..K-1
  }
}

TEST(LoadedRoles, StreamsSpreadEvenlyOverTheOtherSms) {
  // 132 SMs, 33 streams: every 4th of the 131 others, never two gaps differing by more than one.
  const auto roles = loaded_roles(ids(132), 33, 1024);
  std::vector<unsigned> at;
  for (unsigned id = 0; id < 132; ++id) {
    if (roles[id] >= kFirstStreamRole) at.push_back(id);
  }
  unsigned least = ~0u, most = 0;
  for (std::size_t i = 1; i < at.size(); ++i) {
    least = std::min(least, at[i] - at[i - 1]);
    most = std::max(most, at[i] - at[i - 1]);
  }
  EXPECT_LE(most - least, 1u);
  EXPECT_GE(least, 3u);
}

TEST(LoadedRoles, IdsNeedNotBeContiguousNorSortedNorStartAtZero) {
  std::vector<unsigned> v;
  for (unsigned id = 6; id < 6 + 2 * 66; id += 2) v.push_back(id);  // every other id from 6
  std::reverse(v.begin(), v.end());
  const auto roles = loaded_roles(v, 65, 1024);
  EXPECT_EQ(roles[6], kChaseRole);
  for (unsigned i = 1; i < 66; ++i) EXPECT_EQ(roles[6 + 2 * i], kFirstStreamRole + i - 1) << i;
  for (unsigned id = 0; id < 1024; ++id) {
    if (id < 6 || id % 2 == 1 || id >= 6 + 2 * 66) EXPECT_EQ(roles[id], kIdleRole) << id;
  }
}

}  // namespace
}  // namespace gmb
