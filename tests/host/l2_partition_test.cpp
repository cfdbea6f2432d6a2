// The L2 partition probe's split of the SMs (gmb/l2_partition.hpp).
#include "gmb/l2_partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace gmb {
namespace {

std::map<std::string, double> counters_of(const std::vector<partition_walk>& sms) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : partition_counters(sms)) out[key] = value;
  return out;
}

TEST(TwoGroupThreshold, SplitsTwoClustersBetweenThem) {
  const auto t = two_group_threshold({1.0, 1.02, 0.99, 1.6, 1.55, 1.62, 1.01}, 1.1);
  ASSERT_TRUE(t.has_value());
  EXPECT_GT(*t, 1.02);
  EXPECT_LT(*t, 1.55);
}

TEST(TwoGroupThreshold, FindsOneGroupWhereTheValuesAreAlike) {
  EXPECT_FALSE(two_group_threshold({1.0, 1.03, 0.98, 1.05, 1.01}, 1.1).has_value());
  EXPECT_FALSE(two_group_threshold({1.0}, 1.1).has_value());
}

TEST(PartitionCounters, NamesTheFarSideItsSmsAndTheirFirstWalks) {
  std::vector<partition_walk> sms;
  for (int i = 0; i < 6; ++i) sms.push_back({140.0 + i, 140.0 + i, 260.0});  // home's side
  for (int i = 0; i < 4; ++i) sms.push_back({200.0 + 10 * i, 142.0, 263.0});  // the far side
  auto c = counters_of(sms);
  EXPECT_EQ(c["l2_far_side_sms"], 4);
  EXPECT_DOUBLE_EQ(c["l2_first_far_side_ns"], 215.0);
  EXPECT_DOUBLE_EQ(c["l2_first_far_side_ns_min"], 200.0);
  EXPECT_DOUBLE_EQ(c["l2_first_far_side_ns_max"], 230.0);
  EXPECT_DOUBLE_EQ(c["l2_first_ns"], 142.5);
  EXPECT_DOUBLE_EQ(c["latency_ns"], 142.0);
  EXPECT_DOUBLE_EQ(c["l2_near_ns_min"], 140.0);
  EXPECT_DOUBLE_EQ(c["l2_near_ns_max"], 145.0);
}

TEST(PartitionCounters, OneL2HasNoFarSide) {
  std::vector<partition_walk> sms;
  for (int i = 0; i < 8; ++i) sms.push_back({150.0 + i, 148.0 + i, 280.0});
  auto c = counters_of(sms);
  EXPECT_EQ(c["l2_far_side_sms"], 0);
  EXPECT_EQ(c.count("l2_first_far_side_ns"), 0u);
  EXPECT_DOUBLE_EQ(c["l2_first_ns"], 153.5);
}

TEST(PartitionCounters, OneSlowSmIsNoiseNotAPartition) {
  std::vector<partition_walk> sms;
  for (int i = 0; i < 31; ++i) sms.push_back({140.0 + (i % 3), 140.0, 280.0});
  sms.push_back({175.0, 140.0, 280.0});
  EXPECT_EQ(counters_of(sms)["l2_far_side_sms"], 0);
}

TEST(PartitionCounters, AHomeSmThatFindsItsOwnLinesFarSplitsNothing) {
  std::vector<partition_walk> sms;
  for (int i = 0; i < 8; ++i) sms.push_back({i < 4 ? 200.0 : 142.0, 142.0, 280.0});
  EXPECT_EQ(counters_of(sms)["l2_far_side_sms"], 0);
  std::reverse(sms.begin(), sms.end());  // the home SM near: half far
  EXPECT_EQ(counters_of(sms)["l2_far_side_sms"], 4);
}

}  // namespace
}  // namespace gmb
