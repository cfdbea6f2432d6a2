// The host link's theoretical rate, the PCIe facts it is computed from, and the sizes of the
// host/ and managed/ families: pure functions, no GPU.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "gmb/host_link.hpp"

namespace gmb {
namespace {

TEST(PcieRate, IsTransfersTimesLanesTimesEncodingPerDirection) {
  // gen1/2: 8b/10b; gen3-5: 128b/130b; the rates every PCIe table lists for x16.
  EXPECT_DOUBLE_EQ(pcie_bytes_per_second(1, 16), 4.0e9);
  EXPECT_DOUBLE_EQ(pcie_bytes_per_second(2, 16), 8.0e9);
  EXPECT_NEAR(pcie_bytes_per_second(3, 16), 15.754e9, 1e6);
  EXPECT_NEAR(pcie_bytes_per_second(4, 16), 31.508e9, 1e6);
  EXPECT_NEAR(pcie_bytes_per_second(5, 16), 63.015e9, 1e6);
  EXPECT_NEAR(pcie_bytes_per_second(6, 16), 121.0e9, 1e6);  // FLIT: 242 of 256 bytes
  EXPECT_NEAR(pcie_bytes_per_second(4, 8), pcie_bytes_per_second(4, 16) / 2, 1.0);
  EXPECT_NEAR(pcie_bytes_per_second(5, 8), pcie_bytes_per_second(4, 16), 1.0);
}

TEST(PcieRate, UnknownGenerationOrWidthIsZero) {
  EXPECT_EQ(pcie_bytes_per_second(0, 16), 0.0);
  EXPECT_EQ(pcie_bytes_per_second(8, 16), 0.0);
  EXPECT_EQ(pcie_bytes_per_second(-1, 16), 0.0);
  EXPECT_EQ(pcie_bytes_per_second(5, 0), 0.0);
}

TEST(PcieRate, GenerationFromSysfsSpeedText) {
  EXPECT_EQ(pcie_gen_from_sysfs("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(pcie_gen_from_sysfs("5.0 GT/s PCIe"), 2);
  EXPECT_EQ(pcie_gen_from_sysfs("8 GT/s"), 3);  // older kernels
  EXPECT_EQ(pcie_gen_from_sysfs("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(pcie_gen_from_sysfs("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(pcie_gen_from_sysfs("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(pcie_gen_from_sysfs("64.0 GT/s PCIe"), 6);
  EXPECT_EQ(pcie_gen_from_sysfs("Unknown"), 0);
  EXPECT_EQ(pcie_gen_from_sysfs(""), 0);
  EXPECT_EQ(pcie_gen_from_sysfs("12.0 GT/s PCIe"), 0);
}

TEST(PcieRate, SysfsAddressFromCudaAndNvmlBusIds) {
  EXPECT_EQ(sysfs_pci_address("0000:3B:00.0"), "0000:3b:00.0");      // cudaDeviceGetPCIBusId
  EXPECT_EQ(sysfs_pci_address("00000000:3B:00.0"), "0000:3b:00.0");  // NVML
  EXPECT_EQ(sysfs_pci_address("00010000:C1:00.0"), "10000:c1:00.0");
  EXPECT_EQ(sysfs_pci_address("0000:af:00.0"), "0000:af:00.0");
}

TEST(HostLinkInfo, PeakIsTheMostGenerationAndWidthNotTheIdleLink) {
  host_link_info link;
  link.source = "nvml";
  link.gen = 1;  // idle: trained down
  link.width = 16;
  link.gen_max = 5;
  link.width_max = 16;
  EXPECT_NEAR(link.bytes_per_second(), 63.015e9, 1e6);
  EXPECT_EQ(link.describe(), "pcie gen5 x16");
  std::map<std::string, std::string> context;
  for (const auto& [key, value] : host_link_context(link)) context[key] = value;
  EXPECT_EQ(context.at("gpu_host_link_gbs"), "63.02");
  EXPECT_EQ(context.at("gpu_pcie_gen"), "1");
  EXPECT_EQ(context.at("gpu_pcie_gen_max"), "5");
  EXPECT_EQ(context.at("gpu_pcie_width_max"), "16");
  EXPECT_EQ(context.at("gpu_pcie_gen_gpu_max"), "0");
  EXPECT_EQ(context.at("gpu_host_link_source"), "nvml");
}

TEST(HostLinkInfo, UnknownAndC2cLinksHaveNoPeakAndSayWhy) {
  host_link_info none;
  none.why = "NVML: not found";
  EXPECT_EQ(none.bytes_per_second(), 0.0);
  EXPECT_EQ(none.describe().rfind("unknown (NVML: not found", 0), 0u);
  std::map<std::string, std::string> context;
  for (const auto& [key, value] : host_link_context(none)) context[key] = value;
  EXPECT_EQ(context.at("gpu_host_link_gbs"), "0.00");
  EXPECT_EQ(context.at("gpu_pcie_gen_max"), "0");

  host_link_info c2c;
  c2c.gen_max = 5;
  c2c.width_max = 16;
  c2c.c2c_links = 10;
  c2c.c2c_max_mbps = 450000;
  EXPECT_EQ(c2c.bytes_per_second(), 0.0);  // not PCIe's rate, and C2C's is not verified
  EXPECT_EQ(c2c.describe().rfind("nvlink-c2c (10 active links", 0), 0u);
}

TEST(HostSizes, HostArraysAreAtMost128MiBAndAtMostTheEnvironmentsArrays) {
  EXPECT_EQ(host_link_bytes(4 * kMiB), 4 * kMiB);
  EXPECT_EQ(host_link_bytes(128 * kMiB), 128 * kMiB);
  EXPECT_EQ(host_link_bytes(std::size_t(2) << 30), 128 * kMiB);
}

TEST(ManagedSizes, AtMostAQuarterOfFreeMemory) {
  const std::size_t free_bytes = std::size_t(4) << 30;
  EXPECT_EQ(managed_limit_bytes(free_bytes), std::size_t(1) << 30);
  EXPECT_EQ(managed_request_error(std::size_t(1) << 30, free_bytes), "");
  EXPECT_EQ(managed_request_error(kMiB, free_bytes), "");
  const std::string error = managed_request_error((std::size_t(1) << 30) + 1, free_bytes);
  EXPECT_NE(error.find("refusing 1024 MiB"), std::string::npos) << error;
  EXPECT_NE(error.find("4096 MiB free, limit 1024 MiB"), std::string::npos) << error;
  EXPECT_NE(error.find("--gmb_bytes"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);  // one line
  EXPECT_NE(managed_request_error(kMiB, 0), "");   // nothing free: nothing allowed
}

}  // namespace
}  // namespace gmb
