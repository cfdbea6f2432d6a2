#pragma once
// What the suite needs to know about a GPU, read from the device (never hard-coded), and how it
// is written into results: theoretical peak, a folder-safe slug, version strings.
#include <cuda_runtime_api.h>

#include <cctype>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "gmb/arch_facts.hpp"
#include "gmb/cuda_check.hpp"

namespace gmb {

struct device_info {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sms = 0;
  std::size_t l2_bytes = 0;
  std::size_t max_shared_per_sm_bytes = 0;  // the most shared memory an SM can be given
  int max_sm_clock_khz = 0;  // the SM's maximum clock (not the clock during a run)
  int mem_clock_khz = 0;  // memory clock (cudaDevAttrMemoryClockRate)
  int bus_bits = 0;
  bool ecc = false;
  std::size_t total_mem_bytes = 0;
  int driver_version = 0;   // e.g. 13000 for 13.0
  int runtime_version = 0;  // e.g. 13000 for 13.0

  /// Bytes per second: two transfers per memory clock over the whole bus.
  double peak_bytes_per_second() const {
    return 2.0 * mem_clock_khz * 1000.0 * (bus_bits / 8.0);
  }
  std::string compute_capability() const {
    return std::to_string(cc_major) + "." + std::to_string(cc_minor);
  }
};

/// The unified L1/shared size for the context: bytes, or "unknown" for an architecture the table
/// lacks (figures and summaries then say so rather than draw a wrong line).
inline std::string l1_shared_text(const device_info& d) {
  const std::size_t bytes = unified_l1_shared_per_sm_bytes(d.cc_major, d.cc_minor);
  return bytes == 0 ? "unknown" : std::to_string(bytes);
}

/// The carve-out's shared-memory steps per SM in KiB ("0,8,...,228"), or "unknown".
inline std::string carveout_text(const device_info& d) {
  const arch_facts* row = facts_for(d.cc_major, d.cc_minor);
  return row ? row->carveout_kib : "unknown";
}

/// "13.0" from CUDA's 13000 encoding.
inline std::string format_cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": lower case, one '-' between words.
inline std::string device_slug(const std::string& name) {
  std::string slug;
  for (unsigned char c : name) {
    if (std::isalnum(c)) {
      slug += static_cast<char>(std::tolower(c));
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "unknown-gpu" : slug;
}

/// GB/s (1e9 bytes per second) with two decimals, as context values are strings.
inline std::string format_gbs(double bytes_per_second) {
  const long long centi = static_cast<long long>(bytes_per_second / 1e7 + 0.5);
  std::string frac = std::to_string(centi % 100);
  return std::to_string(centi / 100) + "." + (frac.size() < 2 ? "0" + frac : frac);
}

/// The docs/design.md context keys describing the device, in a stable order.
inline std::vector<std::pair<std::string, std::string>> context_entries(const device_info& d) {
  return {
      {"gpu_name", d.name},
      {"gpu_slug", device_slug(d.name)},
      {"gpu_ordinal", std::to_string(d.ordinal)},
      {"gpu_cc", d.compute_capability()},
      {"gpu_sms", std::to_string(d.sms)},
      {"gpu_l2_bytes", std::to_string(d.l2_bytes)},
      {"gpu_l1_shared_per_sm_bytes", l1_shared_text(d)},
      {"gpu_max_shared_per_sm_bytes", std::to_string(d.max_shared_per_sm_bytes)},
      {"gpu_carveout_kib", carveout_text(d)},
      {"gpu_facts", facts_status(d.cc_major, d.cc_minor)},
      {"gpu_peak_gbs", format_gbs(d.peak_bytes_per_second())},
      {"gpu_mem_clock_khz", std::to_string(d.mem_clock_khz)},
      {"gpu_max_sm_clock_khz", std::to_string(d.max_sm_clock_khz)},
      {"gpu_bus_bits", std::to_string(d.bus_bits)},
      {"gpu_mem_bytes", std::to_string(d.total_mem_bytes)},
      {"ecc", d.ecc ? "on" : "off"},
      {"driver", format_cuda_version(d.driver_version)},
      {"cuda_runtime", format_cuda_version(d.runtime_version)},
  };
}

inline device_info query_device(int ordinal) {
  device_info d;
  d.ordinal = ordinal;
  cudaDeviceProp prop{};
  GMB_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  d.name = prop.name;
  d.total_mem_bytes = prop.totalGlobalMem;
  auto attr = [ordinal](cudaDeviceAttr a) {
    int v = 0;
    GMB_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, ordinal));
    return v;
  };
  d.cc_major = attr(cudaDevAttrComputeCapabilityMajor);
  d.cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  d.sms = attr(cudaDevAttrMultiProcessorCount);
  d.l2_bytes = static_cast<std::size_t>(attr(cudaDevAttrL2CacheSize));
  d.max_shared_per_sm_bytes =
      static_cast<std::size_t>(attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  d.max_sm_clock_khz = attr(cudaDevAttrClockRate);
  d.mem_clock_khz = attr(cudaDevAttrMemoryClockRate);
  d.bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  d.ecc = attr(cudaDevAttrEccEnabled) != 0;
  GMB_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  GMB_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

}  // namespace gmb
