// Run health rules: which readings flag a benchmark, and the console lines they give.
#include "gmb/health.hpp"

#include <gtest/gtest.h>

namespace gmb::health {
namespace {

reading quiet() {
  reading r;
  r.sm_mhz = 1980;
  r.mem_mhz = 3201;
  r.clock_event_reasons = nvml::reason::kGpuIdle;
  return r;
}

TEST(Health, AQuietReadingRaisesNothing) { EXPECT_EQ(flags_of(quiet(), 3201), 0u); }

TEST(Health, AnotherProcessIsFlagged) {
  reading r = quiet();
  r.other_pids = {4242};
  EXPECT_EQ(flags_of(r, 3201), kOtherProcess);
}

TEST(Health, SlowdownReasonsAndThePowerCapAreFlaggedApart) {
  for (auto why : {nvml::reason::kHwSlowdown, nvml::reason::kSwThermal,
                   nvml::reason::kHwThermal, nvml::reason::kHwPowerBrake}) {
    reading r = quiet();
    r.clock_event_reasons |= why;
    EXPECT_EQ(flags_of(r, 3201), kClockSlowdown) << why;
  }
  reading r = quiet();
  r.clock_event_reasons = nvml::reason::kSwPowerCap;
  EXPECT_EQ(flags_of(r, 3201), kPowerCap);
  r.clock_event_reasons = nvml::reason::kApplicationsClocks | nvml::reason::kSyncBoost;
  EXPECT_EQ(flags_of(r, 3201), 0u);
}

TEST(Health, MemoryClockUnderItsMaximum) {
  reading r = quiet();
  r.mem_mhz = 1593;
  EXPECT_EQ(flags_of(r, 3201), kMemClockLow);
  EXPECT_EQ(flags_of(r, 0), 0u);  // no applications clock (GeForce): no verdict
}

TEST(Health, ThisProcessIsNotAnother) {
  EXPECT_TRUE(other_processes({100}, 100).empty());
  EXPECT_EQ(other_processes({100, 200}, 100), std::vector<unsigned>{200});
  // In a PID namespace NVML lists this process under another PID: one entry is this one.
  EXPECT_TRUE(other_processes({7}, 100).empty());
  EXPECT_EQ(other_processes({7, 8}, 100).size(), 1u);
}

TEST(Health, WindowCollectsExtremesAndFlags) {
  window w;
  reading a = quiet(), b = quiet();
  b.sm_mhz = 1500;
  b.temp_c = 71;
  b.power_w = 650.5;
  b.other_pids = {9};
  w.add(a, 0);
  w.add(b, kOtherProcess);
  EXPECT_EQ(w.readings, 2);
  EXPECT_EQ(w.flags, kOtherProcess);
  EXPECT_EQ(w.sm_mhz_min, 1500u);
  EXPECT_EQ(w.sm_mhz_max, 1980u);
  EXPECT_EQ(w.temp_c_max, 71u);
  EXPECT_DOUBLE_EQ(w.power_w_max, 650.5);
  EXPECT_EQ(w.other_pids, std::set<unsigned>{9});
}

TEST(Health, OneLineOnlyWhenTheFlagsChange) {
  EXPECT_EQ(transition_message(0, 0, 0, "ref/memset", {}), "");
  EXPECT_EQ(transition_message(1, 1, 0, "ref/memset", {9}), "");
  EXPECT_EQ(transition_message(0, kOtherProcess, 0, "copy/f32x4/ilp:1/grid:full", {4242}),
            "gmembench: warning: GPU 0: another process on the GPU (pid 4242) while "
            "copy/f32x4/ilp:1/grid:full ran; such results are marked (health_flags 1)");
  EXPECT_EQ(transition_message(kOtherProcess, 0, 1, "ref/memset", {}),
            "gmembench: note: GPU 1 healthy again from ref/memset");
}

TEST(Health, DescribeNamesEveryFlag) {
  EXPECT_EQ(describe(0), "");
  EXPECT_EQ(describe(kOtherProcess | kPowerCap), "another process on the GPU, software power cap");
  for (const auto& f : kFlagNames) EXPECT_FALSE(describe(f.bit).empty());
}

}  // namespace
}  // namespace gmb::health
