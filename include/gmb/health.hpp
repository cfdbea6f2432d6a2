#pragma once
// Run health: what makes a bandwidth untrustworthy although the kernel was right — another
// process on the GPU, clocks held down (hardware, thermal or power-brake slowdown, the software
// power cap, a memory clock below its maximum), new uncorrected ECC errors, pages or rows
// waiting to be retired. Pure logic here (host-tested); health_monitor.hpp reads NVML.
#include <algorithm>
#include <climits>
#include <set>
#include <string>
#include <vector>

#include "gmb/nvml.hpp"

namespace gmb::health {

/// Bits of the `health_flags` counter (scripts/gmbtools/health.py decodes the same bits).
enum flag : unsigned {
  kOtherProcess = 1u << 0,        // another process had a CUDA context on the GPU
  kClockSlowdown = 1u << 1,       // hardware, thermal or power-brake slowdown of the clocks
  kPowerCap = 1u << 2,            // the software power cap held the SM clock down
  kMemClockLow = 1u << 3,         // memory clock under the one set for compute
  kEccErrors = 1u << 4,           // uncorrected ECC errors since the run started
  kPendingRetirement = 1u << 5,   // page retirement or row remapping pending (or failed)
};

struct flag_name {
  unsigned bit;
  const char* text;
};
inline constexpr flag_name kFlagNames[] = {
    {kOtherProcess, "another process on the GPU"},
    {kClockSlowdown, "clock slowdown (hardware, thermal or power brake)"},
    {kPowerCap, "software power cap"},
    {kMemClockLow, "memory clock under its set value"},
    {kEccErrors, "new uncorrected ECC errors"},
    {kPendingRetirement, "memory page retirement or row remapping pending"},
};

/// "another process on the GPU, software power cap"; "" for 0.
inline std::string describe(unsigned flags) {
  std::string text;
  for (const auto& f : kFlagNames) {
    if (flags & f.bit) text += (text.empty() ? "" : ", ") + std::string(f.text);
  }
  return text;
}

/// One NVML reading of the GPU at one moment.
struct reading {
  unsigned sm_mhz = 0;
  unsigned mem_mhz = 0;
  unsigned long long clock_event_reasons = 0;
  unsigned temp_c = 0;
  double power_w = 0;
  std::vector<unsigned> other_pids;  // compute processes on the GPU other than this one
};

/// The processes NVML lists, less this one. In a PID namespace NVML may list this process under
/// another PID: when `self` is absent, one listed process is taken to be this one.
inline std::vector<unsigned> other_processes(std::vector<unsigned> listed, unsigned self) {
  const auto mine = std::find(listed.begin(), listed.end(), self);
  if (mine != listed.end()) {
    listed.erase(mine);
  } else if (!listed.empty()) {
    listed.erase(listed.begin());
  }
  return listed;
}

/// The flags one reading raises. The memory clock is compared with the one the GPU is set to
/// run at (0: no verdict); the SM clock is not (its boost follows load and temperature by
/// design): only the reasons NVML gives for holding it down count.
inline unsigned flags_of(const reading& r, unsigned expected_mem_mhz) {
  namespace why = nvml::reason;
  unsigned flags = 0;
  if (!r.other_pids.empty()) flags |= kOtherProcess;
  if (r.clock_event_reasons & (why::kHwSlowdown | why::kSwThermal | why::kHwThermal |
                               why::kHwPowerBrake)) {
    flags |= kClockSlowdown;
  }
  if (r.clock_event_reasons & why::kSwPowerCap) flags |= kPowerCap;
  if (expected_mem_mhz != 0 && r.mem_mhz != 0 && r.mem_mhz < expected_mem_mhz) {
    flags |= kMemClockLow;
  }
  return flags;
}

/// What the readings taken while one benchmark ran add up to.
struct window {
  int readings = 0;
  unsigned flags = 0;
  unsigned sm_mhz_min = UINT_MAX;
  unsigned sm_mhz_max = 0;
  unsigned mem_mhz_min = UINT_MAX;
  unsigned temp_c_max = 0;
  double power_w_max = 0;
  std::set<unsigned> other_pids;

  void add(const reading& r, unsigned reading_flags) {
    ++readings;
    flags |= reading_flags;
    sm_mhz_min = std::min(sm_mhz_min, r.sm_mhz);
    sm_mhz_max = std::max(sm_mhz_max, r.sm_mhz);
    mem_mhz_min = std::min(mem_mhz_min, r.mem_mhz);
    temp_c_max = std::max(temp_c_max, r.temp_c);
    power_w_max = std::max(power_w_max, r.power_w);
    other_pids.insert(r.other_pids.begin(), r.other_pids.end());
  }
};

/// The one console line for a change of flags between benchmarks ("" when nothing changed).
inline std::string transition_message(unsigned before, unsigned now, int gpu,
                                      const std::string& benchmark,
                                      const std::set<unsigned>& other_pids) {
  if (before == now) return "";
  if (now == 0) {
    return "gmembench: note: GPU " + std::to_string(gpu) + " healthy again from " + benchmark;
  }
  std::string pids;
  for (unsigned pid : other_pids) pids += (pids.empty() ? " (pid " : ", ") + std::to_string(pid);
  if (!pids.empty()) pids += ")";
  return "gmembench: warning: GPU " + std::to_string(gpu) + ": " + describe(now) + pids +
         " while " + benchmark + " ran; such results are marked (health_flags " +
         std::to_string(now) + ")";
}

}  // namespace gmb::health
