#pragma once
// Which SM a block runs on (%smid). The ids need not be contiguous: tables indexed by them
// hold kSmIdSlots entries.
#include <cstddef>

namespace gmb {

inline constexpr std::size_t kSmIdSlots = 1024;  // %smid is below this on every GPU the suite knows

__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

}  // namespace gmb
