#pragma once
// NVML, the library the NVIDIA driver ships (libnvidia-ml.so.1), loaded at run time: the
// binaries must still start (and say "no CUDA device") where no driver is installed, and CI's
// toolkit has no nvml.h. The few types and entry points used are declared here as the NVML
// C API defines them (nvml.h, CUDA 12/13); an entry point the driver lacks stays null.
#include <dlfcn.h>

#include <initializer_list>
#include <memory>
#include <string>

namespace gmb::nvml {

using result = int;  // nvmlReturn_t
inline constexpr result kSuccess = 0;
inline constexpr result kInsufficientSize = 7;
using device = struct opaque_device*;  // nvmlDevice_t

inline constexpr int kClockSm = 1;   // NVML_CLOCK_SM
inline constexpr int kClockMem = 2;  // NVML_CLOCK_MEM
inline constexpr int kTemperatureGpu = 0;
inline constexpr int kEccCorrected = 0;    // NVML_MEMORY_ERROR_TYPE_CORRECTED
inline constexpr int kEccUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr int kEccVolatile = 0;     // NVML_VOLATILE_ECC: since the driver loaded
inline constexpr int kRetiredMultipleSbe = 0;
inline constexpr int kRetiredDbe = 1;

/// nvmlClocksEventReason* bits (formerly "throttle reasons").
namespace reason {
inline constexpr unsigned long long kGpuIdle = 0x1;
inline constexpr unsigned long long kApplicationsClocks = 0x2;
inline constexpr unsigned long long kSwPowerCap = 0x4;
inline constexpr unsigned long long kHwSlowdown = 0x8;
inline constexpr unsigned long long kSyncBoost = 0x10;
inline constexpr unsigned long long kSwThermal = 0x20;
inline constexpr unsigned long long kHwThermal = 0x40;
inline constexpr unsigned long long kHwPowerBrake = 0x80;
inline constexpr unsigned long long kDisplayClocks = 0x100;
}  // namespace reason

/// nvmlFieldValue_t (40 bytes): ask with field_id (and scope_id: a link), read value where
/// nvml_return is kSuccess. The C2C fields (NVLink-C2C, Grace Hopper) exist since R520.
struct field_value {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;
  result nvml_return;
  union {
    double d;
    unsigned int ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
    unsigned short us;
  } value;
};
static_assert(sizeof(field_value) == 40, "nvmlFieldValue_t is 40 bytes");
inline constexpr unsigned kFieldNvlinkSpeedMbps = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
inline constexpr unsigned kFieldNvlinkCount = 91;      // NVML_FI_DEV_NVLINK_LINK_COUNT
inline constexpr unsigned kFieldC2cLinkCount = 170;    // NVML_FI_DEV_C2C_LINK_COUNT
inline constexpr unsigned kFieldC2cLinkStatus = 171;   // NVML_FI_DEV_C2C_LINK_GET_STATUS: 1 active
inline constexpr unsigned kFieldC2cLinkMaxBw = 172;    // NVML_FI_DEV_C2C_LINK_GET_MAX_BW: MB/s

// NVLink speed per link, MB/s: NVML_FI_DEV_NVLINK_GET_SPEED with scope_id = the link (R520+),
// and the older fixed fields NVML_FI_DEV_NVLINK_SPEED_MBPS_L0..L5 (84-89), L6..L11 (132-137).
inline constexpr unsigned kFieldNvlinkGetSpeed = 164;
inline constexpr unsigned kFieldNvlinkSpeedMbpsL0 = 84;
inline constexpr unsigned kFieldNvlinkSpeedMbpsL6 = 132;
inline constexpr unsigned kNvlinkSpeedFieldLinks = 12;  // L0..L11: links past these have none
/// The field NVML_FI_DEV_NVLINK_SPEED_MBPS_L<link>, 0 for a link past L11.
inline constexpr unsigned nvlink_speed_field(unsigned link) {
  return link < 6                        ? kFieldNvlinkSpeedMbpsL0 + link
         : link < kNvlinkSpeedFieldLinks ? kFieldNvlinkSpeedMbpsL6 + (link - 6)
                                         : 0;
}
inline constexpr unsigned kMaxNvlinks = 18;  // NVML_NVLINK_MAX_LINKS (R535+)
// nvmlIntNvLinkDeviceType_t: what the far end of a link is.
inline constexpr unsigned kNvlinkRemoteGpu = 0x00;
inline constexpr unsigned kNvlinkRemoteSwitch = 0x02;

/// nvmlPciInfo_t (68 bytes), as nvmlDeviceGetNvLinkRemotePciInfo_v2 fills it.
struct pci_info {
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];
};
static_assert(sizeof(pci_info) == 68, "nvmlPciInfo_t is 68 bytes");

/// nvmlProcessInfo_v2_t, as nvmlDeviceGetComputeRunningProcesses_v2 fills it (24 bytes).
struct process_info {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

/// The loaded library and its entry points; `open()` returns null (and why) when there is none.
struct api {
  result (*init)() = nullptr;
  result (*shutdown)() = nullptr;
  const char* (*error_string)(result) = nullptr;
  result (*driver_version)(char*, unsigned) = nullptr;
  result (*handle_by_pci_bus_id)(const char*, device*) = nullptr;
  result (*uuid)(device, char*, unsigned) = nullptr;
  result (*clock)(device, int, unsigned*) = nullptr;
  result (*max_clock)(device, int, unsigned*) = nullptr;
  result (*applications_clock)(device, int, unsigned*) = nullptr;
  result (*clock_event_reasons)(device, unsigned long long*) = nullptr;
  result (*temperature)(device, int, unsigned*) = nullptr;
  result (*power_mw)(device, unsigned*) = nullptr;
  result (*compute_processes)(device, unsigned*, process_info*) = nullptr;
  result (*ecc_errors)(device, int, int, unsigned long long*) = nullptr;
  result (*retired_pages)(device, int, unsigned*, unsigned long long*) = nullptr;
  result (*remapped_rows)(device, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  // The PCIe link (host_link.hpp): now, the most this GPU in this system can train to, and
  // the most the GPU itself supports.
  result (*curr_pcie_link_generation)(device, unsigned*) = nullptr;
  result (*curr_pcie_link_width)(device, unsigned*) = nullptr;
  result (*max_pcie_link_generation)(device, unsigned*) = nullptr;
  result (*max_pcie_link_width)(device, unsigned*) = nullptr;
  result (*gpu_max_pcie_link_generation)(device, unsigned*) = nullptr;
  result (*field_values)(device, int, field_value*) = nullptr;
  // NVLink, per link (peer_link.hpp): active (nvmlEnableState_t 1), version
  // (nvmlNvlinkVersion_t), what the far end is (nvmlIntNvLinkDeviceType_t) and its PCI address.
  result (*nvlink_state)(device, unsigned, unsigned*) = nullptr;
  result (*nvlink_version)(device, unsigned, unsigned*) = nullptr;
  result (*nvlink_remote_type)(device, unsigned, unsigned*) = nullptr;
  result (*nvlink_remote_pci)(device, unsigned, pci_info*) = nullptr;

  ~api() {
    if (shutdown) shutdown();
    if (handle_) dlclose(handle_);
  }

  std::string describe(result r) const {
    return error_string ? error_string(r) : "NVML error " + std::to_string(r);
  }

  static std::unique_ptr<api> open(std::string* why_not) {
    auto a = std::make_unique<api>();
    a->handle_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a->handle_) {
      *why_not = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
      return nullptr;
    }
    a->bind(a->init, {"nvmlInit_v2"});
    a->bind(a->shutdown, {"nvmlShutdown"});
    a->bind(a->error_string, {"nvmlErrorString"});
    a->bind(a->driver_version, {"nvmlSystemGetDriverVersion"});
    a->bind(a->handle_by_pci_bus_id, {"nvmlDeviceGetHandleByPciBusId_v2"});
    a->bind(a->uuid, {"nvmlDeviceGetUUID"});
    a->bind(a->clock, {"nvmlDeviceGetClockInfo"});
    a->bind(a->max_clock, {"nvmlDeviceGetMaxClockInfo"});
    a->bind(a->applications_clock, {"nvmlDeviceGetApplicationsClock"});
    a->bind(a->clock_event_reasons, {"nvmlDeviceGetCurrentClocksEventReasons",
                                     "nvmlDeviceGetCurrentClocksThrottleReasons"});
    a->bind(a->temperature, {"nvmlDeviceGetTemperature"});
    a->bind(a->power_mw, {"nvmlDeviceGetPowerUsage"});
    // _v2 first: its entries are 24 bytes on every driver, _v3's are 32 on R535.
    a->bind(a->compute_processes, {"nvmlDeviceGetComputeRunningProcesses_v2",
                                   "nvmlDeviceGetComputeRunningProcesses_v3"});
    a->bind(a->ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
    a->bind(a->retired_pages, {"nvmlDeviceGetRetiredPages"});
    a->bind(a->remapped_rows, {"nvmlDeviceGetRemappedRows"});
    a->bind(a->curr_pcie_link_generation, {"nvmlDeviceGetCurrPcieLinkGeneration"});
    a->bind(a->curr_pcie_link_width, {"nvmlDeviceGetCurrPcieLinkWidth"});
    a->bind(a->max_pcie_link_generation, {"nvmlDeviceGetMaxPcieLinkGeneration"});
    a->bind(a->max_pcie_link_width, {"nvmlDeviceGetMaxPcieLinkWidth"});
    a->bind(a->gpu_max_pcie_link_generation, {"nvmlDeviceGetGpuMaxPcieLinkGeneration"});
    a->bind(a->field_values, {"nvmlDeviceGetFieldValues"});
    a->bind(a->nvlink_state, {"nvmlDeviceGetNvLinkState"});
    a->bind(a->nvlink_version, {"nvmlDeviceGetNvLinkVersion"});
    a->bind(a->nvlink_remote_type, {"nvmlDeviceGetNvLinkRemoteDeviceType"});
    a->bind(a->nvlink_remote_pci, {"nvmlDeviceGetNvLinkRemotePciInfo_v2"});
    if (!a->init || !a->handle_by_pci_bus_id) {
      *why_not = "libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2";
      return nullptr;
    }
    const result r = a->init();
    if (r != kSuccess) {
      *why_not = "nvmlInit failed: " + a->describe(r);
      a->shutdown = nullptr;  // nothing to shut down
      return nullptr;
    }
    return a;
  }

 private:
  void* handle_ = nullptr;

  template <class Fn>
  void bind(Fn& fn, std::initializer_list<const char*> names) {
    for (const char* name : names) {
      if (void* symbol = dlsym(handle_, name)) {
        fn = reinterpret_cast<Fn>(symbol);
        return;
      }
    }
  }
};

}  // namespace gmb::nvml
