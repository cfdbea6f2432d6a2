#pragma once
// The link between this GPU and its peer(s) and its theoretical rate one way, the pct_peak of
// peer/ and ref/memcpy_peer: the active NVLinks of this GPU that reach a peer (a link to a GPU
// whose PCI address is the peer's, or to an NVSwitch, which reaches every GPU), each at the
// speed NVML reports, else at its NVLink version's published rate; with no NVLink to the peer,
// the PCIe host link's rate (host_link.hpp). The choice is pure (select_peer_link, host-tested
// with made-up readings); read_nvlinks asks NVML, which answers differently per driver (an
// H200 pair's driver answers the link count and state but "Not Supported" for the common and
// fixed per-link speed fields): every answer is kept, so --gmb_info shows what a driver says.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmb/device_info.hpp"
#include "gmb/host_link.hpp"
#include "gmb/nvml.hpp"

namespace gmb {

/// One answer of NVML: a value, or NVML's words for why there is none.
struct nvml_answer {
  bool ok = false;
  unsigned value = 0;
  std::string error = "not asked";
  static nvml_answer of(unsigned v) { return {true, v, ""}; }
  static nvml_answer failed(std::string why) { return {false, 0, std::move(why)}; }
  std::string describe() const { return ok ? std::to_string(value) : error; }
  /// A positive value (a speed, a count).
  bool positive() const { return ok && value > 0; }
};

/// A PCI address as CUDA (cudaDevAttrPci*Id) and NVML (nvmlPciInfo_t) both give it.
struct pci_address {
  unsigned domain = 0, bus = 0, device = 0;
  bool operator==(const pci_address& o) const {
    return domain == o.domain && bus == o.bus && device == o.device;
  }
  std::string describe() const {
    char text[32];
    std::snprintf(text, sizeof(text), "%08x:%02x:%02x", domain, bus, device);
    return text;
  }
};

/// What NVML says of one NVLink of this GPU.
struct nvlink_reading {
  nvml_answer active;                 // nvmlDeviceGetNvLinkState: 1 active
  nvml_answer remote_type;            // nvmlDeviceGetNvLinkRemoteDeviceType
  std::optional<pci_address> remote;  // nvmlDeviceGetNvLinkRemotePciInfo_v2
  nvml_answer speed_mbps;             // field NVLINK_GET_SPEED (164), scope: this link
  nvml_answer field_speed_mbps;       // fields NVLINK_SPEED_MBPS_L0..L11 (links 0-11)
  nvml_answer version;                // nvmlDeviceGetNvLinkVersion (nvmlNvlinkVersion_t)
  bool is_active() const { return active.ok && active.value == 1; }
  /// Whether traffic to a GPU at one of `peers` can take this link.
  bool reaches(const std::vector<pci_address>& peers) const {
    if (!is_active() || !remote_type.ok) return false;
    if (remote_type.value == nvml::kNvlinkRemoteSwitch) return true;
    return remote_type.value == nvml::kNvlinkRemoteGpu && remote &&
           std::find(peers.begin(), peers.end(), *remote) != peers.end();
  }
  std::string describe() const {
    std::string text = "active " + active.describe() + ", remote type " + remote_type.describe();
    if (remote) text += " at " + remote->describe();
    return text + ", speed(164) " + speed_mbps.describe() + ", speed(L<n>) " +
           field_speed_mbps.describe() + ", version " + version.describe();
  }
};

/// Everything NVML says of this GPU's NVLinks.
struct nvlink_readings {
  std::string nvml_missing;  // why NVML could not be asked; "" where it could
  nvml_answer link_count;    // field NVLINK_LINK_COUNT (91)
  nvml_answer common_mbps;   // field NVLINK_SPEED_MBPS_COMMON (90)
  std::vector<nvlink_reading> links;

  /// One line for --gmb_info; links that read alike are grouped ("links 0-17: ...").
  std::string describe() const {
    if (!nvml_missing.empty()) return "NVML: " + nvml_missing;
    std::string text =
        "link count(91) " + link_count.describe() + "; common speed(90) " + common_mbps.describe();
    for (std::size_t first = 0; first < links.size();) {
      std::size_t last = first;
      const std::string what = links[first].describe();
      while (last + 1 < links.size() && links[last + 1].describe() == what) ++last;
      text +=
          "; " + (first == last ? "link " + std::to_string(first)
                                : "links " + std::to_string(first) + "-" + std::to_string(last));
      text += ": " + what;
      first = last + 1;
    }
    return text;
  }
};

/// An NVLink version's published rate per link, one way, by nvmlNvlinkVersion_t (which numbers
/// versions 1.0, 2.0, 2.2, 3.0, 3.1, 4.0, 5.0 as 1 to 7); {"", 0} where none can be given.
struct nvlink_version_rate {
  const char* name;
  double bytes_per_second;
};
inline nvlink_version_rate nvlink_version_table(unsigned version) {
  switch (version) {
    case 1:  // P100 whitepaper: 4 links, 160 GB/s in both directions together
      return {"1.0", 20e9};
    case 2:  // V100 whitepaper: 6 links, 300 GB/s in both directions together
      return {"2.0", 25e9};
    case 4:  // A100 whitepaper: 12 links, 600 GB/s in both directions together
      return {"3.0", 25e9};
    case 6:  // H100 whitepaper (and H200): 18 links, 900 GB/s in both directions together
      return {"4.0", 25e9};
    case 7:  // Blackwell (B200) datasheet: 18 links, 1.8 TB/s in both directions together
      return {"5.0", 50e9};
    // 3 (2.2) has no published per-link figure; 3 and 5 (3.1) are reported by GPUs with
    // different link rates (hwloc issue 658: an A100 reports 5; GA102 bridges are 3.1 too).
    default:
      return {"", 0};
  }
}

/// The link between this GPU and its peer(s), and its theoretical rate one way.
struct peer_link {
  std::string kind = "unknown";  // "nvlink", "pcie" or "unknown"
  int links = 0;                 // NVLinks counted
  double bytes_per_second = 0;   // one way, all counted links together; 0: unknown
  std::string describe;          // gpu_peer_link: "nvlink 18 x 26562 MB/s", "pcie gen5 x16"
  std::string source;            // gpu_peer_link_source: which NVML answer gave the rate
};

namespace detail {
/// The counted links' speeds in MB/s from one per-link answer, or nothing unless every link
/// has one.
template <class Field>
std::optional<std::vector<double>> every_link(const std::vector<const nvlink_reading*>& counted,
                                              Field field) {
  std::vector<double> mbps;
  for (const nvlink_reading* link : counted) {
    const nvml_answer& answer = link->*field;
    if (!answer.positive()) return std::nullopt;
    mbps.push_back(answer.value);
  }
  return mbps;
}

inline std::string describe_nvlinks(const std::vector<double>& mbps) {
  double sum = 0;
  for (double m : mbps) sum += m;
  const bool alike = std::all_of(mbps.begin(), mbps.end(), [&](double m) { return m == mbps[0]; });
  const auto whole = [](double v) { return std::to_string(static_cast<long long>(v)); };
  return alike
             ? "nvlink " + std::to_string(mbps.size()) + " x " + whole(mbps[0]) + " MB/s"
             : "nvlink " + std::to_string(mbps.size()) + " links, " + whole(sum) + " MB/s together";
}
}  // namespace detail

/// The link to `peers` (one partner, or every GPU of dir:from_all/to_all) from NVML's readings
/// and the host link. Speeds, in this order: NVLINK_GET_SPEED per link, the common speed, the
/// fixed per-link fields, the version's published rate; each used only where it answers for
/// every counted link. MB/s are 10^6 bytes per second (nvidia-smi prints 26562 as 26.562 GB/s).
inline peer_link select_peer_link(const nvlink_readings& r, const std::vector<pci_address>& peers,
                                  const host_link_info& host) {
  std::vector<const nvlink_reading*> counted;
  int active = 0;
  for (const nvlink_reading& link : r.links) {
    active += link.is_active();
    if (link.reaches(peers)) counted.push_back(&link);
  }
  peer_link out;
  if (!counted.empty()) {
    out.kind = "nvlink";
    out.links = static_cast<int>(counted.size());
    std::optional<std::vector<double>> mbps;
    if ((mbps = detail::every_link(counted, &nvlink_reading::speed_mbps))) {
      out.source = "NVML field NVLINK_GET_SPEED (164) per link";
    } else if (r.common_mbps.positive()) {
      mbps = std::vector<double>(counted.size(), r.common_mbps.value);
      out.source = "NVML field NVLINK_SPEED_MBPS_COMMON (90)";
    } else if ((mbps = detail::every_link(counted, &nvlink_reading::field_speed_mbps))) {
      out.source = "NVML fields NVLINK_SPEED_MBPS_L<n> (84-89, 132-137)";
    } else if (const auto version = detail::every_link(counted, &nvlink_reading::version)) {
      const bool alike = std::all_of(version->begin(), version->end(),
                                     [&](double v) { return v == version->front(); });
      const auto v = static_cast<unsigned>(version->front());
      const nvlink_version_rate rate = nvlink_version_table(v);
      if (alike && rate.bytes_per_second > 0) {
        mbps = std::vector<double>(counted.size(), rate.bytes_per_second / 1e6);
        out.source = std::string("table: NVLink version ") + rate.name + " (nvmlNvlinkVersion_t " +
                     std::to_string(v) + "; no speed from NVML)";
      }
    }
    if (mbps) {
      for (double m : *mbps) out.bytes_per_second += m * 1e6;
      out.describe = detail::describe_nvlinks(*mbps);
    } else {
      out.describe = "nvlink " + std::to_string(out.links) + " links, rate unknown";
      out.source =
          "none: NVML gives these links no speed and no version with a published rate"
          " (peer/ pct_peak is of the GPU memory's peak)";
    }
    return out;
  }
  std::string why;
  if (!r.nvml_missing.empty()) {
    why = "NVML: " + r.nvml_missing;
  } else if (active == 0) {
    why = "no active NVLink";
  } else {
    why = std::to_string(active) + " active NVLink(s), none known to reach the peer";
  }
  out.bytes_per_second = host.bytes_per_second();
  if (out.bytes_per_second > 0) {
    out.kind = "pcie";
    out.describe = host.describe();
    out.source = "the host link's rate (" + host.source + "); " + why;
  } else {
    out.describe = host.describe();
    out.source = why + "; no host link rate (peer/ pct_peak is of the GPU memory's peak)";
  }
  return out;
}

/// The PCI address of CUDA device `device`.
inline pci_address cuda_pci_address(int device) {
  int domain = 0, bus = 0, slot = 0;
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, device));
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, device));
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, device));
  return {static_cast<unsigned>(domain), static_cast<unsigned>(bus), static_cast<unsigned>(slot)};
}

namespace detail {
inline nvml_answer ask(const nvml::api& api, nvml::result (*fn)(nvml::device, unsigned, unsigned*),
                       nvml::device device, unsigned link) {
  if (!fn) return nvml_answer::failed("not in this driver's NVML");
  unsigned value = 0;
  const nvml::result r = fn(device, link, &value);
  return r == nvml::kSuccess ? nvml_answer::of(value) : nvml_answer::failed(api.describe(r));
}

inline nvml_answer field(const nvml::api& api, nvml::device device, unsigned id, unsigned scope) {
  if (!api.field_values) return nvml_answer::failed("no nvmlDeviceGetFieldValues");
  nvml::field_value f{};
  f.field_id = id;
  f.scope_id = scope;
  const nvml::result r = api.field_values(device, 1, &f);
  if (r != nvml::kSuccess) return nvml_answer::failed(api.describe(r));
  if (f.nvml_return != nvml::kSuccess) return nvml_answer::failed(api.describe(f.nvml_return));
  return nvml_answer::of(f.value.ui);
}
}  // namespace detail

/// Asks NVML everything select_peer_link uses of CUDA device `device`'s NVLinks. Never throws.
inline nvlink_readings read_nvlinks(int device) {
  nvlink_readings r;
  auto reader = nvml_link_reader::open(device, &r.nvml_missing);
  if (!reader) return r;
  const nvml::api& api = reader->api();
  const nvml::device dev = reader->device();
  r.link_count = detail::field(api, dev, nvml::kFieldNvlinkCount, 0);
  r.common_mbps = detail::field(api, dev, nvml::kFieldNvlinkSpeedMbps, 0);
  const unsigned count =
      r.link_count.ok ? std::min(r.link_count.value, nvml::kMaxNvlinks) : nvml::kMaxNvlinks;
  for (unsigned link = 0; link < count; ++link) {
    nvlink_reading l;
    l.active = detail::ask(api, api.nvlink_state, dev, link);
    // Where the count is unknown, the first link NVML does not know ends the list.
    if (!r.link_count.ok && !l.active.ok) break;
    l.remote_type = detail::ask(api, api.nvlink_remote_type, dev, link);
    if (api.nvlink_remote_pci && l.is_active()) {
      nvml::pci_info pci{};
      if (api.nvlink_remote_pci(dev, link, &pci) == nvml::kSuccess) {
        l.remote = pci_address{pci.domain, pci.bus, pci.device};
      }
    }
    l.speed_mbps = detail::field(api, dev, nvml::kFieldNvlinkGetSpeed, link);
    const unsigned fixed = nvml::nvlink_speed_field(link);
    l.field_speed_mbps =
        fixed ? detail::field(api, dev, fixed, 0) : nvml_answer::failed("no such field past L11");
    l.version = detail::ask(api, api.nvlink_version, dev, link);
    r.links.push_back(std::move(l));
  }
  return r;
}

/// The link from CUDA device `device` to the CUDA devices `peers`, from NVML and the host link.
inline peer_link query_peer_link(int device, const std::vector<int>& peers) {
  std::vector<pci_address> addresses;
  for (const int peer : peers) addresses.push_back(cuda_pci_address(peer));
  return select_peer_link(read_nvlinks(device), addresses, host_link(device));
}

/// The context keys of the link (gpu_peer_link_gbs "0.00" where unknown).
inline std::vector<std::pair<std::string, std::string>> peer_link_context(const peer_link& link) {
  return {{"gpu_peer_link", link.describe},
          {"gpu_peer_link_gbs", format_gbs(link.bytes_per_second)},
          {"gpu_peer_links", std::to_string(link.links)},
          {"gpu_peer_link_source", link.source}};
}

}  // namespace gmb
