#pragma once
// Access patterns as index maps: (linear thread id, slot) -> element index. A thread issues one
// load or store per slot (its elements per thread, "ILP"). Kernels, the host traffic model and
// the tests all call these same functions.
#include <cstddef>

#include "gmb/host_device.hpp"

namespace gmb {

/// Coalesced with Ilp elements per thread: in every slot the lanes of a warp take consecutive
/// elements (one contiguous run per warp instruction), and a block of Block threads covers
/// Block * Ilp consecutive elements.
template <unsigned Block, unsigned Ilp>
struct coalesced_map {
  static constexpr unsigned kSlots = Ilp;
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    return thread / Block * (std::size_t(Block) * Ilp) + std::size_t(slot) * Block + thread % Block;
  }
};

/// Thread t takes element t * stride: lanes `stride` elements apart.
struct strided_map {
  static constexpr unsigned kSlots = 1;
  std::size_t stride;
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const { return thread * stride; }
};

/// Thread t takes element t + offset: a coalesced run shifted off its natural alignment.
struct offset_map {
  static constexpr unsigned kSlots = 1;
  std::size_t offset;
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const { return thread + offset; }
};

/// Every thread takes the same element.
struct broadcast_map {
  static constexpr unsigned kSlots = 1;
  std::size_t element;
  GMB_HD std::size_t operator()(std::size_t, unsigned) const { return element; }
};

}  // namespace gmb
