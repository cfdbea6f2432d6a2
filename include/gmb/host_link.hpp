#pragma once
// The host link and the host-visible memories of the host/ and managed/ families: the link's
// theoretical rate (PCIe generation x width, from NVML or else Linux sysfs; NVLink-C2C only
// detected), whether this GPU can map pinned host memory or migrate managed pages, how large
// managed arrays may be, and RAII buffers for both kinds of memory. Host only.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmb/cuda_check.hpp"
#include "gmb/device_info.hpp"
#include "gmb/nvml.hpp"
#include "gmb/sizing.hpp"

namespace gmb {

// ---- PCIe rates (pure) ----

/// Transfers per second of one lane (GT/s) of PCIe generation `gen` (1..7); 0 when unknown.
inline double pcie_gts(int gen) {
  switch (gen) {
    case 1:
      return 2.5;
    case 2:
      return 5.0;
    case 3:
      return 8.0;
    case 4:
      return 16.0;
    case 5:
      return 32.0;
    case 6:
      return 64.0;
    case 7:
      return 128.0;
    default:
      return 0.0;
  }
}

/// The share of the line's bits that carry packets: 8b/10b (gen 1, 2), 128b/130b (gen 3-5),
/// FLIT mode (gen 6, 7: 242 of every 256 bytes, the rest CRC and FEC); 0 when unknown.
inline double pcie_encoding(int gen) {
  if (gen == 1 || gen == 2) return 8.0 / 10.0;
  if (gen >= 3 && gen <= 5) return 128.0 / 130.0;
  if (gen == 6 || gen == 7) return 242.0 / 256.0;
  return 0.0;
}

/// The theoretical rate of a PCIe link in each direction, bytes per second: GT/s x lanes x
/// encoding / 8 bits (gen5 x16: 63.0 GB/s). Packet headers are not subtracted: that overhead
/// is part of what a copy measures. 0 when the generation or the width is unknown.
inline double pcie_bytes_per_second(int gen, int width) {
  if (width <= 0) return 0.0;
  return pcie_gts(gen) * 1e9 * width * pcie_encoding(gen) / 8.0;
}

/// The generation whose lane rate is `gts` GT/s (2.5, 5, 8, 16, ...); 0 if none is.
inline int pcie_gen_from_gts(double gts) {
  for (int gen = 1; gen <= 7; ++gen) {
    const double rate = pcie_gts(gen);
    if (gts > 0.99 * rate && gts < 1.01 * rate) return gen;
  }
  return 0;
}

/// Linux sysfs's link speed ("32.0 GT/s PCIe", "8 GT/s", "Unknown") as a generation; 0 if none.
inline int pcie_gen_from_sysfs(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double gts = std::strtod(begin, &end);
  if (end == begin) return 0;
  return pcie_gen_from_gts(gts);
}

/// A PCI bus id as CUDA ("0000:3B:00.0") or NVML ("00000000:3B:00.0") writes it, as sysfs
/// names the device: lower case, the domain in at least four digits ("0000:3b:00.0").
inline std::string sysfs_pci_address(const std::string& bus_id) {
  std::string out;
  for (unsigned char c : bus_id) out += static_cast<char>(std::tolower(c));
  const std::size_t colon = out.find(':');
  if (colon == std::string::npos) return out;
  std::size_t zeros = 0;
  while (colon - zeros > 4 && out[zeros] == '0') ++zeros;
  return out.substr(zeros);
}

// ---- The link of one GPU ----

/// What is known of a GPU's link to the host. Generations and widths are 0 where unknown.
struct host_link_info {
  std::string source = "none";     // where the PCIe numbers come from: "nvml", "sysfs", "none"
  int gen = 0, width = 0;          // the link now: an idle link may have trained down
  int gen_max = 0, width_max = 0;  // the most this GPU in this system trains to: the peak's
  int gpu_gen_max = 0;             // the most the GPU itself supports (NVML only)
  int c2c_links = 0;               // active NVLink-C2C links to the CPU (Grace Hopper)
  double c2c_max_mbps = 0;         // NVML's maximum bandwidth summed over them, MB/s, as reported
  std::string why;                 // why the PCIe numbers are missing ("" when they are not)

  /// The peak of the host/ family: the PCIe rate at the most generation and width; 0 where
  /// unknown, and on NVLink-C2C, whose per-direction rate this suite has not verified.
  double bytes_per_second() const {
    return c2c_links > 0 ? 0.0 : pcie_bytes_per_second(gen_max, width_max);
  }
  /// "pcie gen5 x16", "nvlink-c2c (...)" or "unknown (why)".
  std::string describe() const {
    if (c2c_links > 0) {
      return "nvlink-c2c (" + std::to_string(c2c_links) + " active links, NVML's maximum " +
             std::to_string(static_cast<long long>(c2c_max_mbps)) +
             " MB/s in all; not used as the peak: host/ pct_peak is of the GPU memory's)";
    }
    if (bytes_per_second() <= 0) {
      return "unknown (" + (why.empty() ? std::string("no PCIe generation or width") : why) +
             "; host/ pct_peak is of the GPU memory's peak)";
    }
    return "pcie gen" + std::to_string(gen_max) + " x" + std::to_string(width_max);
  }
};

/// NVML's view of one CUDA device; null (and why) where NVML cannot see it.
class nvml_link_reader {
 public:
  static std::unique_ptr<nvml_link_reader> open(int cuda_device, std::string* why_not) {
    char bus_id[32] = {};
    const cudaError_t e = cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device);
    if (e != cudaSuccess) {
      cudaGetLastError();
      *why_not = std::string("cudaDeviceGetPCIBusId: ") + cudaGetErrorString(e);
      return nullptr;
    }
    auto api = nvml::api::open(why_not);
    if (!api) return nullptr;
    nvml::device dev = nullptr;
    const nvml::result r = api->handle_by_pci_bus_id(bus_id, &dev);
    if (r != nvml::kSuccess) {
      *why_not = std::string("NVML does not know the GPU at ") + bus_id + ": " + api->describe(r);
      return nullptr;
    }
    return std::unique_ptr<nvml_link_reader>(new nvml_link_reader(std::move(api), dev));
  }

  /// The PCIe link now: {generation, width}, 0 where NVML does not say.
  std::pair<int, int> current() const {
    return {read(api_->curr_pcie_link_generation), read(api_->curr_pcie_link_width)};
  }

  /// NVML itself and this GPU's handle (peer_link.hpp reads the NVLinks through them).
  const nvml::api& api() const { return *api_; }
  nvml::device device() const { return device_; }

  /// Fills the PCIe and C2C fields of `info` (source "nvml" where the maxima were read).
  void fill(host_link_info& info) const {
    std::tie(info.gen, info.width) = current();
    info.gen_max = read(api_->max_pcie_link_generation);
    info.width_max = read(api_->max_pcie_link_width);
    info.gpu_gen_max = read(api_->gpu_max_pcie_link_generation);
    if (info.gen_max > 0 && info.width_max > 0) info.source = "nvml";
    if (!api_->field_values) return;
    nvml::field_value count{};
    count.field_id = nvml::kFieldC2cLinkCount;
    if (api_->field_values(device_, 1, &count) != nvml::kSuccess ||
        count.nvml_return != nvml::kSuccess) {
      return;  // no C2C fields: a PCIe-only GPU or an older driver
    }
    for (unsigned link = 0; link < count.value.ui && link < 64; ++link) {
      nvml::field_value f[2] = {};
      f[0].field_id = nvml::kFieldC2cLinkStatus;
      f[1].field_id = nvml::kFieldC2cLinkMaxBw;
      f[0].scope_id = f[1].scope_id = link;
      if (api_->field_values(device_, 2, f) != nvml::kSuccess) continue;
      if (f[0].nvml_return == nvml::kSuccess && f[0].value.ui == 1) {
        ++info.c2c_links;
        if (f[1].nvml_return == nvml::kSuccess) info.c2c_max_mbps += f[1].value.ui;
      }
    }
  }

 private:
  nvml_link_reader(std::unique_ptr<nvml::api> api, nvml::device device)
      : api_(std::move(api)), device_(device) {}
  int read(nvml::result (*fn)(nvml::device, unsigned*)) const {
    unsigned value = 0;
    return fn && fn(device_, &value) == nvml::kSuccess ? static_cast<int>(value) : 0;
  }
  std::unique_ptr<nvml::api> api_;
  nvml::device device_;
};

namespace detail {
inline std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}
}  // namespace detail

/// Asks NVML, else Linux sysfs (/sys/bus/pci/devices/<address>/max_link_speed ...), for the
/// link of CUDA device `device`. Never throws.
inline host_link_info query_host_link(int device) {
  host_link_info info;
  std::string why_nvml;
  if (auto reader = nvml_link_reader::open(device, &why_nvml)) {
    reader->fill(info);
    if (info.source == "nvml") return info;
    why_nvml = "NVML gives no maximum PCIe generation or width";
  }
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device) != cudaSuccess) {
    cudaGetLastError();
    info.why = why_nvml;
    return info;
  }
  const std::string dir = "/sys/bus/pci/devices/" + sysfs_pci_address(bus_id) + "/";
  const int gen_max = pcie_gen_from_sysfs(detail::read_first_line(dir + "max_link_speed"));
  const int width_max = std::atoi(detail::read_first_line(dir + "max_link_width").c_str());
  if (gen_max > 0 && width_max > 0) {
    info.source = "sysfs";
    info.gen_max = gen_max;
    info.width_max = width_max;
    info.gen = pcie_gen_from_sysfs(detail::read_first_line(dir + "current_link_speed"));
    info.width = std::atoi(detail::read_first_line(dir + "current_link_width").c_str());
    return info;
  }
  info.why = "NVML: " + why_nvml + "; sysfs: no link speed in " + dir;
  return info;
}

/// query_host_link, asked once per device for the process (NVML's start costs milliseconds).
inline const host_link_info& host_link(int device) {
  static std::mutex mutex;
  static std::map<int, host_link_info> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device);
  if (it == cache.end()) it = cache.emplace(device, query_host_link(device)).first;
  return it->second;
}

/// The context keys of the link (values are strings; numbers "0" where unknown).
inline std::vector<std::pair<std::string, std::string>> host_link_context(
    const host_link_info& link) {
  auto number = [](int v) { return std::to_string(v > 0 ? v : 0); };
  return {
      {"gpu_host_link", link.describe()},
      {"gpu_host_link_source", link.source},
      {"gpu_host_link_gbs", format_gbs(link.bytes_per_second())},
      {"gpu_pcie_gen", number(link.gen)},
      {"gpu_pcie_width", number(link.width)},
      {"gpu_pcie_gen_max", number(link.gen_max)},
      {"gpu_pcie_width_max", number(link.width_max)},
      {"gpu_pcie_gen_gpu_max", number(link.gpu_gen_max)},
  };
}

// ---- Support checks: "yes", or "none (why)" ----

/// Whether kernels on `device` can read and write pinned host memory mapped into their
/// address space (zero-copy): the attribute, and a small mapped allocation that must work.
inline std::string host_mapped_support(int device) {
  int can_map = 0;
  cudaError_t e = cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, device);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("none (cudaDevAttrCanMapHostMemory: ") + cudaGetErrorString(e) + ")";
  }
  if (!can_map) return "none (the GPU cannot map host memory: cudaDevAttrCanMapHostMemory is 0)";
  void* host = nullptr;
  e = cudaHostAlloc(&host, 64 * 1024, cudaHostAllocMapped);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("none (cudaHostAlloc of mapped pinned memory failed: ") +
           cudaGetErrorString(e) + ")";
  }
  void* mapped = nullptr;
  e = cudaHostGetDevicePointer(&mapped, host, 0);
  cudaFreeHost(host);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("none (cudaHostGetDevicePointer failed: ") + cudaGetErrorString(e) + ")";
  }
  return "yes";
}

/// Whether `device` has managed memory whose pages migrate on demand while kernels run
/// (cudaDevAttrManagedMemory and cudaDevAttrConcurrentManagedAccess).
inline std::string managed_support(int device) {
  int managed = 0, concurrent = 0;
  cudaError_t e = cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, device);
  if (e == cudaSuccess) {
    e = cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("none (managed memory attributes: ") + cudaGetErrorString(e) + ")";
  }
  if (!managed) return "none (the GPU has no managed memory: cudaDevAttrManagedMemory is 0)";
  if (!concurrent) {
    return "none (no on-demand page migration: cudaDevAttrConcurrentManagedAccess is 0, as on "
           "Windows or before Pascal)";
  }
  return "yes";
}

// ---- Sizes (pure) ----

/// Host arrays of the host/ family: each launch moves this much over the link, milliseconds
/// at 25 to 64 GB/s; never more than the environment's arrays (the device side of each copy).
inline constexpr std::size_t kHostLinkBytes = 128 * kMiB;
inline std::size_t host_link_bytes(std::size_t array_bytes) {
  return std::min(array_bytes, kHostLinkBytes);
}

/// Managed arrays whose pages cross the link every iteration (migration on demand).
inline constexpr std::size_t kManagedMigrationBytes = 64 * kMiB;

/// Managed memory never takes more than this share of the GPU's free memory: oversubscribed
/// managed memory evicts pages and can hang the GPU, not only the process.
inline constexpr std::size_t kManagedFreeShare = 4;
inline std::size_t managed_limit_bytes(std::size_t free_bytes) {
  return free_bytes / kManagedFreeShare;
}

/// "" when `bytes` of managed memory may be allocated with `free_bytes` free, else a
/// one-line refusal a user can act on.
inline std::string managed_request_error(std::size_t bytes, std::size_t free_bytes) {
  const std::size_t limit = managed_limit_bytes(free_bytes);
  if (bytes <= limit) return "";
  return "managed memory: refusing " + std::to_string(bytes / kMiB) + " MiB: at most a quarter" +
         " of the GPU's free memory (" + std::to_string(free_bytes / kMiB) + " MiB free, limit " +
         std::to_string(limit / kMiB) + " MiB) is used, as oversubscribed managed memory can" +
         " hang the GPU; pass a smaller --gmb_bytes";
}

// ---- Buffers ----

/// Pinned host memory mapped into the device's address space (cudaHostAllocMapped): `host()`
/// for the CPU, `device()` for kernels (zero-copy: every access crosses the link).
class pinned_mapped_buffer {
 public:
  pinned_mapped_buffer() = default;
  explicit pinned_mapped_buffer(std::size_t bytes) {
    GMB_CUDA_CHECK(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped));
    bytes_ = bytes;
    const cudaError_t e = cudaHostGetDevicePointer(&device_, host_, 0);
    if (e != cudaSuccess) {
      cudaFreeHost(host_);
      host_ = nullptr;
      bytes_ = 0;
      GMB_CUDA_CHECK(e);
    }
  }
  ~pinned_mapped_buffer() {
    if (host_) cudaFreeHost(host_);  // quietly: may run at exit, after the runtime has gone
  }
  pinned_mapped_buffer(pinned_mapped_buffer&& o) noexcept { *this = std::move(o); }
  pinned_mapped_buffer& operator=(pinned_mapped_buffer&& o) noexcept {
    std::swap(host_, o.host_);
    std::swap(device_, o.device_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  pinned_mapped_buffer(const pinned_mapped_buffer&) = delete;
  pinned_mapped_buffer& operator=(const pinned_mapped_buffer&) = delete;

  template <class T = void>
  T* host() const {
    return static_cast<T*>(host_);
  }
  template <class T = void>
  T* device() const {
    return static_cast<T*>(device_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
  std::size_t bytes_ = 0;
};

/// cudaMallocManaged memory; refused with a std::runtime_error (one line, the harness's
/// benchmark error) above a quarter of the GPU's free memory.
class managed_buffer {
 public:
  managed_buffer() = default;
  explicit managed_buffer(std::size_t bytes) {
    std::size_t free_bytes = 0, total_bytes = 0;
    GMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::string error = managed_request_error(bytes, free_bytes);
    if (!error.empty()) throw std::runtime_error(error);
    GMB_CUDA_CHECK(cudaMallocManaged(&data_, bytes, cudaMemAttachGlobal));
    bytes_ = bytes;
  }
  ~managed_buffer() {
    if (data_) cudaFree(data_);
  }
  managed_buffer(managed_buffer&& o) noexcept { *this = std::move(o); }
  managed_buffer& operator=(managed_buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  managed_buffer(const managed_buffer&) = delete;
  managed_buffer& operator=(const managed_buffer&) = delete;

  template <class T = void>
  T* data() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Queues a prefetch of managed memory to GPU `device`, or to the host where `device` < 0.
/// (CUDA 13 takes a cudaMemLocation and flags; CUDA 12 a device ordinal or cudaCpuDeviceId.)
inline void prefetch_managed(const void* data, std::size_t bytes, int device, cudaStream_t stream) {
#if CUDART_VERSION >= 13000
  cudaMemLocation where{};
  where.type = device < 0 ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  where.id = device < 0 ? 0 : device;
  GMB_CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, where, 0, stream));
#else
  GMB_CUDA_CHECK(cudaMemPrefetchAsync(data, bytes, device < 0 ? cudaCpuDeviceId : device, stream));
#endif
}

/// Sets or clears cudaMemAdviseSetReadMostly (the location is ignored for this advice);
/// clearing collapses the read-only copies into one.
inline void advise_read_mostly(const void* data, std::size_t bytes, bool on, int device) {
  const cudaMemoryAdvise advice = on ? cudaMemAdviseSetReadMostly : cudaMemAdviseUnsetReadMostly;
#if CUDART_VERSION >= 13000
  cudaMemLocation where{};
  where.type = cudaMemLocationTypeDevice;
  where.id = device;
  GMB_CUDA_CHECK(cudaMemAdvise(data, bytes, advice, where));
#else
  GMB_CUDA_CHECK(cudaMemAdvise(data, bytes, advice, device));
#endif
}

}  // namespace gmb
