#pragma once
// One 64-bit mixer for the suite's fixed pseudo-random choices (splitmix64's finalizer): a
// reduction's input words, the L2 replay's sampled lines and blocks' lateness. Host and device.
#include <cstdint>

#include "gmb/host_device.hpp"

namespace gmb {

GMB_HD std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace gmb
