// How device facts become result fields: peak, slug, versions, context keys.
#include "gmb/device_info.hpp"

#include <gtest/gtest.h>

#include <set>

namespace gmb {
namespace {

TEST(DeviceInfo, PeakIsTwoTransfersPerClockOverTheBus) {
  device_info d;
  d.mem_clock_khz = 1000000;  // 1 GHz
  d.bus_bits = 1024;          // 128 bytes
  EXPECT_DOUBLE_EQ(d.peak_bytes_per_second(), 2.0 * 1e9 * 128);
}

TEST(DeviceInfo, Slug) {
  EXPECT_EQ(device_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(device_slug("  NVIDIA  H200 (SXM) "), "nvidia-h200-sxm");
  EXPECT_EQ(device_slug("***"), "unknown-gpu");
}

TEST(DeviceInfo, Versions) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12080), "12.8");
}

TEST(DeviceInfo, GigabytesPerSecond) {
  EXPECT_EQ(format_gbs(256e9), "256.00");
  EXPECT_EQ(format_gbs(1234.567e9), "1234.57");
  EXPECT_EQ(format_gbs(1.05e9), "1.05");
}

TEST(DeviceInfo, ContextHasTheDesignKeys) {
  device_info d;
  d.name = "Test GPU";
  d.cc_major = 9;
  std::set<std::string> keys;
  for (const auto& [key, value] : context_entries(d)) {
    EXPECT_TRUE(keys.insert(key).second) << "duplicate " << key;
    EXPECT_FALSE(value.empty()) << key;
  }
  for (const char* k :
       {"gpu_name", "gpu_cc", "gpu_sms", "gpu_l2_bytes", "gpu_peak_gbs", "gpu_mem_clock_khz",
        "gpu_bus_bits", "ecc", "driver", "cuda_runtime", "gpu_l1_shared_per_sm_bytes",
        "gpu_max_shared_per_sm_bytes", "gpu_carveout_kib", "gpu_facts"}) {
    EXPECT_EQ(keys.count(k), 1u) << k;
  }
}

TEST(DeviceInfo, UnifiedL1SharedMemoryFromTheComputeCapability) {
  EXPECT_EQ(unified_l1_shared_per_sm_bytes(9, 0), 256u * 1024);  // H100, H200
  EXPECT_EQ(unified_l1_shared_per_sm_bytes(8, 0), 192u * 1024);  // A100
  EXPECT_EQ(unified_l1_shared_per_sm_bytes(8, 9), 128u * 1024);  // Ada
  EXPECT_EQ(unified_l1_shared_per_sm_bytes(12, 7), 0u);          // unknown: no guess
  device_info future;
  future.cc_major = 12;
  future.cc_minor = 7;
  EXPECT_EQ(l1_shared_text(future), "unknown");
  future.cc_major = 9;
  future.cc_minor = 0;
  EXPECT_EQ(l1_shared_text(future), "262144");
}

TEST(DeviceInfo, ContextSaysWhetherTheArchitectureWasMeasured) {
  device_info d;
  d.cc_major = 10;
  auto value_of = [&d](const std::string& key) {
    for (const auto& [k, v] : context_entries(d)) {
      if (k == key) return v;
    }
    return std::string();
  };
  EXPECT_NE(value_of("gpu_facts").find("not measured"), std::string::npos);
  EXPECT_EQ(value_of("gpu_carveout_kib"), "0,8,16,32,64,100,132,164,196,228");
  d.cc_major = 9;
  EXPECT_EQ(value_of("gpu_facts"), "measured");
  d.cc_major = 12;
  d.cc_minor = 7;
  EXPECT_EQ(value_of("gpu_carveout_kib"), "unknown");
}

}  // namespace
}  // namespace gmb
