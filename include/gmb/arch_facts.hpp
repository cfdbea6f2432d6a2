#pragma once
// What the suite knows of each GPU architecture that the device does not report (docs/gpus.md):
// the unified L1/shared size and the carve-out's steps, the DRAM read granule the traffic model
// assumes, whether the suite was measured there, and the features some kernels need. Every row
// names its source; a row the suite was not measured on says so in every summary and report.
#include <cstddef>
#include <string>

#include "gmb/traffic_model.hpp"

namespace gmb {

struct arch_facts {
  int cc;                    // compute capability x 10: 70, 75, 80, ..., 121
  const char* family;        // "Turing", "Ampere", ...
  unsigned l1_shared_kib;    // unified L1 + shared memory of one SM
  const char* carveout_kib;  // the shared-memory sizes per SM the carve-out chooses from
  bool measured;             // the suite's model was checked on a GPU of this row
  const char* source;        // where l1_shared_kib and carveout_kib come from
};

/// The traffic model's DRAM granule (kDramChunkBytes, 64 B) was measured on the H100 and H200
/// (stride/ and Nsight Compute); no guide states it for the others, so on them it is Hopper's,
/// unverified, and every run measures it again from the stride family (docs/gpus.md).
inline constexpr arch_facts kArchFacts[] = {
    {70, "Volta", 128, "0,8,16,32,64,96", false, "Volta Tuning Guide"},
    {75, "Turing", 96, "32,64", false, "Turing Tuning Guide"},
    {80, "Ampere", 192, "0,8,16,32,64,100,132,164", false, "Ampere Tuning Guide"},
    {86, "Ampere", 128, "0,8,16,32,64,100", false, "Ampere Tuning Guide"},
    {87, "Ampere", 192, "0,8,16,32,64,100,132,164", false, "CUDA C++ Programming Guide"},
    {89, "Ada", 128, "0,8,16,32,64,100", false, "Ada Tuning Guide"},
    {90, "Hopper", 256, "0,8,16,32,64,100,132,164,196,228", true, "Hopper Tuning Guide"},
    {100, "Blackwell", 256, "0,8,16,32,64,100,132,164,196,228", false, "Blackwell Tuning Guide"},
    {103, "Blackwell", 256, "0,8,16,32,64,100,132,164,196,228", false,
     "CUDA C++ Programming Guide"},
    {120, "Blackwell", 128, "0,8,16,32,64,100", false, "CUDA C++ Programming Guide"},
    {121, "Blackwell", 128, "0,8,16,32,64,100", false, "CUDA C++ Programming Guide"},
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

/// One line for the top of every summary and report: "measured" where the suite was measured
/// on the architecture, else what of its facts is a guide's, unknown or Hopper's.
inline std::string facts_status(int cc_major, int cc_minor) {
  const std::string sm = "sm_" + std::to_string(cc_major * 10 + cc_minor);
  const arch_facts* row = facts_for(cc_major, cc_minor);
  if (row != nullptr && row->measured) return "measured";
  const std::string where = row ? std::string(row->family) + ", " + sm : sm;
  const std::string sizes = row ? std::string("from the ") + row->source : "unknown";
  return where + " not measured by gmembench: L1 size and carve-out " + sizes +
         "; the model's DRAM granule is Hopper's (" + std::to_string(kDramChunkBytes) + " B)";
}

/// What some kernels need of the GPU beyond what every architecture since Turing has.
enum class gpu_feature {
  kNone,
  kAsyncCopy,  // cp.async: global -> shared without registers (LDGSTS), sm_80 and newer
  kBulkCopy,   // cp.async.bulk: one thread's copy of KiBs, global <-> shared (TMA, UBLKCP),
               // completed on an mbarrier; sm_90 and newer
};

/// The least compute capability (x 10) with the feature.
constexpr int min_cc(gpu_feature f) {
  return f == gpu_feature::kAsyncCopy ? 80 : f == gpu_feature::kBulkCopy ? 90 : 0;
}

constexpr const char* name(gpu_feature f) {
  return f == gpu_feature::kAsyncCopy  ? "cp.async (LDGSTS)"
         : f == gpu_feature::kBulkCopy ? "cp.async.bulk (TMA)"
                                       : "none";
}

/// "" where the GPU has the feature, else why a benchmark that needs it is skipped.
inline std::string unsupported_reason(gpu_feature f, int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  if (cc >= min_cc(f)) return "";
  return std::string(name(f)) + " needs sm_" + std::to_string(min_cc(f)) + ", this GPU is sm_" +
         std::to_string(cc);
}

}  // namespace gmb
