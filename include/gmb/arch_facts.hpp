#pragma once
// What the suite knows of each GPU architecture that the device does not report (docs/gpus.md):
// the unified L1/shared size and the carve-out's steps, the DRAM read granule the traffic model
// assumes, whether the suite was measured there, and the features some kernels need. Every row
// names its source; a row the suite was not measured on says so in every summary and report.
#include <cstddef>
#include <string>

namespace gmb {

struct arch_facts {
  int cc;                       // compute capability x 10: 75, 80, ..., 120
  const char* family;           // "Turing", "Ampere", ...
  unsigned l1_shared_kib;       // unified L1 + shared memory of one SM
  const char* carveout_kib;     // the shared-memory sizes per SM the carve-out chooses from
  unsigned dram_granule_bytes;  // what one DRAM read moves, in the traffic model
  bool measured;                // the suite's model was checked on a GPU of this row
  const char* source;           // where l1_shared_kib and carveout_kib come from
};

/// Hopper's DRAM granule (64 B) was measured on the H100 and H200 (stride/ and Nsight Compute);
/// no guide states it for the others, so they carry Hopper's value, unverified: every run
/// measures it again from the stride family (gmb report prints it; docs/gpus.md).
inline constexpr unsigned kMeasuredDramGranule = 64;

inline constexpr arch_facts kArchFacts[] = {
    {75, "Turing", 96, "32,64", kMeasuredDramGranule, false, "Turing Tuning Guide"},
    {80, "Ampere", 192, "0,8,16,32,64,100,132,164", kMeasuredDramGranule, false,
     "Ampere Tuning Guide"},
    {86, "Ampere", 128, "0,8,16,32,64,100", kMeasuredDramGranule, false, "Ampere Tuning Guide"},
    {87, "Ampere (Orin)", 192, "0,8,16,32,64,100,132,164", kMeasuredDramGranule, false,
     "CUDA C++ Programming Guide, compute capability 8.x"},
    {89, "Ada", 128, "0,8,16,32,64,100", kMeasuredDramGranule, false, "Ada Tuning Guide"},
    {90, "Hopper", 256, "0,8,16,32,64,100,132,164,196,228", kMeasuredDramGranule, true,
     "Hopper Tuning Guide"},
    {100, "Blackwell", 256, "0,8,16,32,64,100,132,164,196,228", kMeasuredDramGranule, false,
     "Blackwell Tuning Guide"},
    {103, "Blackwell", 256, "0,8,16,32,64,100,132,164,196,228", kMeasuredDramGranule, false,
     "CUDA C++ Programming Guide, compute capability 10.x"},
    {120, "Blackwell (GeForce, RTX PRO)", 128, "0,8,16,32,64,100", kMeasuredDramGranule, false,
     "CUDA C++ Programming Guide, compute capability 12.x"},
    {121, "Blackwell (GB10)", 128, "0,8,16,32,64,100", kMeasuredDramGranule, false,
     "CUDA C++ Programming Guide, compute capability 12.x"},
};

/// The row of a compute capability; nullptr for one the table lacks (no guess from a neighbour).
inline const arch_facts* facts_for(int cc_major, int cc_minor) {
  for (const arch_facts& row : kArchFacts) {
    if (row.cc == cc_major * 10 + cc_minor) return &row;
  }
  return nullptr;
}

/// The unified L1 / shared memory of one SM in bytes; 0 where unknown. The L1 is what the
/// carve-out leaves of it: all of it with no shared memory, at best.
inline std::size_t unified_l1_shared_per_sm_bytes(int cc_major, int cc_minor) {
  const arch_facts* row = facts_for(cc_major, cc_minor);
  return row ? std::size_t(row->l1_shared_kib) * 1024 : 0;
}

/// One line for the top of every summary and report: whether the architecture's facts were
/// measured by the suite, taken from a guide, or unknown.
inline std::string facts_status(int cc_major, int cc_minor) {
  const std::string sm = "sm_" + std::to_string(cc_major * 10 + cc_minor);
  const arch_facts* row = facts_for(cc_major, cc_minor);
  if (row == nullptr) {
    return "no facts for " + sm + ": L1 size and model parameters unknown, not measured";
  }
  if (row->measured) return "measured";
  return "model parameters for " + sm + " are from the " + row->source +
         " and Hopper's DRAM granule, not measured";
}

/// What some kernels need of the GPU beyond what every architecture since Turing has.
enum class gpu_feature {
  kNone,
  kAsyncCopy,  // cp.async: global -> shared without registers (LDGSTS), sm_80 and newer
};

/// The least compute capability (x 10) with the feature.
constexpr int min_cc(gpu_feature f) {
  return f == gpu_feature::kAsyncCopy ? 80 : 0;
}

constexpr const char* name(gpu_feature f) {
  return f == gpu_feature::kAsyncCopy ? "cp.async (LDGSTS)" : "none";
}

/// "" where the GPU has the feature, else why a benchmark that needs it is skipped.
inline std::string unsupported_reason(gpu_feature f, int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  if (cc >= min_cc(f)) return "";
  return std::string(name(f)) + " needs sm_" + std::to_string(min_cc(f)) + ", this GPU is sm_" +
         std::to_string(cc);
}

}  // namespace gmb
