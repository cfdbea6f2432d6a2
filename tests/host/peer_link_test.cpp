// The peer link's rate chosen from made-up NVML readings (which links count, which answer gives
// the speed, when PCIe is the link), and --gmb_peer's selection of benchmarks: no GPU.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "gmb/peer_link.hpp"
#include "gmb/peer_scope.hpp"

namespace gmb {
namespace {

const pci_address kPartner{0, 0x1b, 0};
const pci_address kThird{0, 0x43, 0};
const pci_address kFourth{0, 0x52, 0};

nvml_answer not_supported() {
  return nvml_answer::failed("Not Supported");
}

/// An active link to an NVSwitch that answers only what `speed` and `version` say.
nvlink_reading switch_link(nvml_answer speed, nvml_answer version) {
  nvlink_reading l;
  l.active = nvml_answer::of(1);
  l.remote_type = nvml_answer::of(nvml::kNvlinkRemoteSwitch);
  l.speed_mbps = speed;
  l.field_speed_mbps = not_supported();
  l.version = version;
  return l;
}

/// An active link straight to the GPU at `remote`, with NVLINK_GET_SPEED answering `mbps`.
nvlink_reading gpu_link(pci_address remote, unsigned mbps) {
  nvlink_reading l;
  l.active = nvml_answer::of(1);
  l.remote_type = nvml_answer::of(nvml::kNvlinkRemoteGpu);
  l.remote = remote;
  l.speed_mbps = nvml_answer::of(mbps);
  l.field_speed_mbps = not_supported();
  l.version = nvml_answer::of(6);
  return l;
}

nvlink_readings readings(std::vector<nvlink_reading> links, nvml_answer common = not_supported()) {
  nvlink_readings r;
  r.link_count = nvml_answer::of(static_cast<unsigned>(links.size()));
  r.common_mbps = common;
  r.links = std::move(links);
  return r;
}

host_link_info pcie_gen5_x16() {
  host_link_info host;
  host.source = "nvml";
  host.gen_max = 5;
  host.width_max = 16;
  return host;
}

TEST(PeerLink, EighteenSwitchLinksWithOnlyTheVersionUseTheTableAndSaySo) {
  // The H200 pair's driver: count and state answer, no speed field does.
  const auto r = readings(std::vector<nvlink_reading>(
      18, switch_link(not_supported(), nvml_answer::of(6))));  // nvmlNvlinkVersion_t 6: 4.0
  const peer_link link = select_peer_link(r, {kPartner}, pcie_gen5_x16());
  EXPECT_EQ(link.kind, "nvlink");
  EXPECT_EQ(link.links, 18);
  EXPECT_DOUBLE_EQ(link.bytes_per_second, 18 * 25e9);
  EXPECT_EQ(link.describe, "nvlink 18 x 25000 MB/s");
  EXPECT_EQ(link.source, "table: NVLink version 4.0 (nvmlNvlinkVersion_t 6; no speed from NVML)");
}

TEST(PeerLink, PerLinkSpeedComesFirst) {
  auto r = readings(
      std::vector<nvlink_reading>(18, switch_link(nvml_answer::of(26562), nvml_answer::of(6))),
      nvml_answer::of(25000));
  const peer_link link = select_peer_link(r, {kPartner}, pcie_gen5_x16());
  EXPECT_EQ(link.describe, "nvlink 18 x 26562 MB/s");
  EXPECT_DOUBLE_EQ(link.bytes_per_second, 18 * 26562e6);
  EXPECT_EQ(link.source, "NVML field NVLINK_GET_SPEED (164) per link");
  std::map<std::string, std::string> context;
  for (const auto& [key, value] : peer_link_context(link)) context[key] = value;
  EXPECT_EQ(context.at("gpu_peer_link"), "nvlink 18 x 26562 MB/s");
  EXPECT_EQ(context.at("gpu_peer_link_gbs"), "478.12");
  EXPECT_EQ(context.at("gpu_peer_links"), "18");
  EXPECT_EQ(context.at("gpu_peer_link_source"), "NVML field NVLINK_GET_SPEED (164) per link");
}

TEST(PeerLink, CommonSpeedWhenNoLinkHasItsOwn) {
  const auto r =
      readings(std::vector<nvlink_reading>(12, switch_link(not_supported(), nvml_answer::of(4))),
               nvml_answer::of(25781));
  const peer_link link = select_peer_link(r, {kPartner}, pcie_gen5_x16());
  EXPECT_EQ(link.describe, "nvlink 12 x 25781 MB/s");
  EXPECT_EQ(link.source, "NVML field NVLINK_SPEED_MBPS_COMMON (90)");
}

TEST(PeerLink, FixedPerLinkFieldsAfterTheCommonSpeed) {
  std::vector<nvlink_reading> links(4, switch_link(not_supported(), not_supported()));
  links[0].field_speed_mbps = nvml_answer::of(25000);
  links[1].field_speed_mbps = nvml_answer::of(25000);
  links[2].field_speed_mbps = nvml_answer::of(20000);
  links[3].field_speed_mbps = nvml_answer::of(20000);
  const peer_link link = select_peer_link(readings(links), {kPartner}, pcie_gen5_x16());
  EXPECT_EQ(link.links, 4);
  EXPECT_DOUBLE_EQ(link.bytes_per_second, 90000e6);
  EXPECT_EQ(link.describe, "nvlink 4 links, 90000 MB/s together");
  EXPECT_EQ(link.source, "NVML fields NVLINK_SPEED_MBPS_L<n> (84-89, 132-137)");
  // One link without its field: that answer is not used (nor is any other here).
  links[3].field_speed_mbps = not_supported();
  const peer_link partial = select_peer_link(readings(links), {kPartner}, pcie_gen5_x16());
  EXPECT_EQ(partial.kind, "nvlink");
  EXPECT_EQ(partial.bytes_per_second, 0.0);
  EXPECT_EQ(partial.describe, "nvlink 4 links, rate unknown");
  EXPECT_EQ(partial.source.rfind("none: ", 0), 0u);
}

TEST(PeerLink, FourGpuMeshCountsOnlyTheLinksToThePeers) {
  // 12 direct links, 4 to each of three GPUs.
  std::vector<nvlink_reading> links;
  for (const pci_address& to : {kPartner, kThird, kFourth}) {
    for (int i = 0; i < 4; ++i) links.push_back(gpu_link(to, 25000));
  }
  const auto r = readings(links);
  const peer_link pair = select_peer_link(r, {kThird}, pcie_gen5_x16());
  EXPECT_EQ(pair.links, 4);
  EXPECT_DOUBLE_EQ(pair.bytes_per_second, 4 * 25e9);
  EXPECT_EQ(pair.describe, "nvlink 4 x 25000 MB/s");
  // dir:from_all / to_all: this GPU's links to every peer.
  const peer_link all = select_peer_link(r, {kPartner, kThird, kFourth}, pcie_gen5_x16());
  EXPECT_EQ(all.links, 12);
  EXPECT_DOUBLE_EQ(all.bytes_per_second, 12 * 25e9);
  // A GPU none of the links reaches goes over PCIe.
  const peer_link other = select_peer_link(r, {pci_address{1, 0x1b, 0}}, pcie_gen5_x16());
  EXPECT_EQ(other.kind, "pcie");
  EXPECT_EQ(other.describe, "pcie gen5 x16");
  EXPECT_NE(other.source.find("12 active NVLink(s), none known to reach the peer"),
            std::string::npos)
      << other.source;
  // A GPU link whose remote address NVML does not give is not counted.
  auto unknown_remote = r;
  unknown_remote.links[4].remote.reset();
  EXPECT_EQ(select_peer_link(unknown_remote, {kThird}, pcie_gen5_x16()).links, 3);
}

TEST(PeerLink, InactiveLinksLeavePcie) {
  std::vector<nvlink_reading> links(18, switch_link(nvml_answer::of(26562), nvml_answer::of(6)));
  for (auto& l : links) l.active = nvml_answer::of(0);
  const peer_link link = select_peer_link(readings(links), {kPartner}, pcie_gen5_x16());
  EXPECT_EQ(link.kind, "pcie");
  EXPECT_EQ(link.links, 0);
  EXPECT_NEAR(link.bytes_per_second, 63.015e9, 1e6);
  EXPECT_EQ(link.describe, "pcie gen5 x16");
  EXPECT_EQ(link.source, "the host link's rate (nvml); no active NVLink");
}

TEST(PeerLink, NoNvlinkIsPcie) {
  const peer_link link = select_peer_link(readings({}), {kPartner}, pcie_gen5_x16());
  EXPECT_EQ(link.kind, "pcie");
  EXPECT_EQ(link.describe, "pcie gen5 x16");
  EXPECT_NEAR(link.bytes_per_second, 63.015e9, 1e6);
}

TEST(PeerLink, WithoutNvmlThePcieRateComesFromSysfsAndSaysWhy) {
  nvlink_readings r;
  r.nvml_missing = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
  host_link_info host = pcie_gen5_x16();
  host.source = "sysfs";
  const peer_link link = select_peer_link(r, {kPartner}, host);
  EXPECT_EQ(link.kind, "pcie");
  EXPECT_EQ(link.source,
            "the host link's rate (sysfs); NVML: libnvidia-ml.so.1 not found (no NVIDIA driver)");
  // And with no host link rate either: unknown, and pct_peak falls back to memory's peak.
  const peer_link none = select_peer_link(r, {kPartner}, host_link_info{});
  EXPECT_EQ(none.kind, "unknown");
  EXPECT_EQ(none.bytes_per_second, 0.0);
  EXPECT_NE(none.source.find("GPU memory's peak"), std::string::npos);
  EXPECT_EQ(r.describe(), "NVML: libnvidia-ml.so.1 not found (no NVIDIA driver)");
}

TEST(PeerLink, VersionTableKnowsOnlyUnambiguousVersions) {
  EXPECT_DOUBLE_EQ(nvlink_version_table(1).bytes_per_second, 20e9);
  EXPECT_DOUBLE_EQ(nvlink_version_table(6).bytes_per_second, 25e9);
  EXPECT_DOUBLE_EQ(nvlink_version_table(7).bytes_per_second, 50e9);
  EXPECT_EQ(nvlink_version_table(5).bytes_per_second, 0.0);  // 3.1: A100 and GA102 alike
  EXPECT_EQ(nvlink_version_table(0).bytes_per_second, 0.0);
  EXPECT_EQ(nvlink_version_table(99).bytes_per_second, 0.0);
}

TEST(PeerLink, FixedSpeedFieldIdsFollowNvmlH) {
  EXPECT_EQ(nvml::nvlink_speed_field(0), 84u);
  EXPECT_EQ(nvml::nvlink_speed_field(5), 89u);
  EXPECT_EQ(nvml::nvlink_speed_field(6), 132u);
  EXPECT_EQ(nvml::nvlink_speed_field(11), 137u);
  EXPECT_EQ(nvml::nvlink_speed_field(12), 0u);
}

TEST(PeerLink, ReadingsGroupAlikeLinksForGmbInfo) {
  auto r =
      readings(std::vector<nvlink_reading>(3, switch_link(not_supported(), nvml_answer::of(6))));
  r.links[2].active = nvml_answer::of(0);
  EXPECT_EQ(r.describe(),
            "link count(91) 3; common speed(90) Not Supported; links 0-1: active 1, remote type 2, "
            "speed(164) Not Supported, speed(L<n>) Not Supported, version 6; link 2: active 0, "
            "remote type 2, speed(164) Not Supported, speed(L<n>) Not Supported, version 6");
}

TEST(PeerScope, ParsesTheFlagAndSelectsByTouchingAnotherGpu) {
  EXPECT_EQ(parse_peer_scope("all"), peer_scope::kAll);
  EXPECT_EQ(parse_peer_scope("skip"), peer_scope::kSkip);
  EXPECT_EQ(parse_peer_scope("only"), peer_scope::kOnly);
  EXPECT_FALSE(parse_peer_scope("none"));
  EXPECT_FALSE(parse_peer_scope(""));
  for (const char* name : {"peer/copy/f32x4/ilp:4/dir:pull", "peer/chase/ws:1048576/lanes:1",
                           "ref/memcpy_peer/dir:both"}) {
    EXPECT_TRUE(touches_another_gpu(name)) << name;
    EXPECT_FALSE(in_peer_scope(peer_scope::kSkip, name)) << name;
    EXPECT_TRUE(in_peer_scope(peer_scope::kOnly, name)) << name;
    EXPECT_TRUE(in_peer_scope(peer_scope::kAll, name)) << name;
  }
  for (const char* name : {"ref/memcpy_d2d", "copy/f32x4/ilp:1/grid:full", "host/read/f32x4/ilp:4",
                           "latency/chase/ws:16384/lanes:1"}) {
    EXPECT_FALSE(touches_another_gpu(name)) << name;
    EXPECT_TRUE(in_peer_scope(peer_scope::kSkip, name)) << name;
    EXPECT_FALSE(in_peer_scope(peer_scope::kOnly, name)) << name;
  }
}

}  // namespace
}  // namespace gmb
