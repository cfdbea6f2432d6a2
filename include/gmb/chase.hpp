#pragma once
// The pointer chase's chain (kernels/latency.cuh): 2^bits lines visited in the order of a hash
// permutation, line chase_line(k) pointing to chase_line(k + 1): one cycle through every line
// (or through one line per page, spaced out).
// Host and device share it: the kernels build and walk the chain, the host checks where a walk
// must end.
#include <cstddef>
#include <cstdint>

#include "gmb/host_device.hpp"
#include "gmb/pattern.cuh"

namespace gmb {

inline constexpr std::size_t kChaseLineBytes = 128;

/// Where lane `lane` of `lanes` starts on the cycle of n lines: evenly spread.
GMB_HD std::size_t chase_start(unsigned lane, unsigned lanes, std::size_t n) {
  return n / lanes * lane;
}

/// The line visited k-th on the cycle of n = 2^perm.bits slots (k taken modulo n). Slot s is
/// line s * spacing plus a skew below `spacing` (a power of two): spacing 1 walks every line
/// of a set; spacing = page / line puts one line in each page (the TLB family), at an offset
/// that moves from page to page, so the walk does not pile onto one DRAM channel or L2 slice.
GMB_HD std::uint32_t chase_line(const hash_permutation& perm, std::size_t n, std::size_t k,
                                std::uint32_t spacing = 1) {
  const std::uint32_t slot = perm(k & (n - 1));
  return slot * spacing + ((slot * 13u) & (spacing - 1));
}

}  // namespace gmb
