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
  GMB_HD unsigned slots() const { return Ilp; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    return thread / Block * (std::size_t(Block) * Ilp) + std::size_t(slot) * Block + thread % Block;
  }
};

/// Thread t takes element t * stride: lanes `stride` elements apart.
struct strided_map {
  GMB_HD unsigned slots() const { return 1; }
  std::size_t stride;
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const { return thread * stride; }
};

/// Thread t takes element t + offset: a coalesced run shifted off its natural alignment.
struct offset_map {
  GMB_HD unsigned slots() const { return 1; }
  std::size_t offset;
  GMB_HD std::size_t operator()(std::size_t thread, unsigned) const { return thread + offset; }
};

/// Every thread takes the same element.
struct broadcast_map {
  GMB_HD unsigned slots() const { return 1; }
  std::size_t element;
  GMB_HD std::size_t operator()(std::size_t, unsigned) const { return element; }
};

/// Structures of `stride` elements, `slots` of them loaded per thread: thread t's slot j is
/// element t * stride + j. With 4-B elements and one slot it is one field of an array of
/// structures; with the load width as the element it is a whole structure loaded in pieces.
struct aos_map {
  std::size_t stride;
  unsigned fields;
  GMB_HD unsigned slots() const { return fields; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    return thread * stride + slot;
  }
};

/// The same fields as a structure of arrays: field j of thread t is element j * n + t.
struct soa_map {
  std::size_t n;
  unsigned fields;
  GMB_HD unsigned slots() const { return fields; }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    return std::size_t(slot) * n + thread;
  }
};

}  // namespace gmb
