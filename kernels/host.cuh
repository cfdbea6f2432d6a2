#pragma once
// Host family: kernels moving data over the host link through pinned, mapped host memory
// (zero-copy). link_copy does out[W(t)] = in[R(t)] for t < threads; one side is host memory
// (host/read: the source, host/write: the destination), the other a device array.
// Bytes: the link's side only, threads * sizeof(T) (the device side's traffic is free beside
// the link). Built once (namespace gmb::built_once): no -dlcm flavor can change a host access.
#include <cstddef>

#include "gmb/host_device.hpp"
#include "gmb/pattern.cuh"

namespace gmb::built_once {

inline constexpr unsigned kLinkBlock = 256;

/// An index map of pattern.cuh under this namespace: every kernel instantiated with it, the
/// checks of mapped_check.cuh included, is then named as built once, which the SASS tests
/// read as "the flavors' -dlcm does not apply" (binary_test.cpp, loads_outside_dlcm).
template <class Map>
struct link_map {
  Map map;
  GMB_HD unsigned slots() const { return map.slots(); }
  GMB_HD std::size_t operator()(std::size_t thread, unsigned slot) const {
    return map(thread, slot);
  }
};

/// out[W(t)] = in[R(t)]. Each thread takes Ilp logical threads, a block's slots in turn
/// (coalesced_map, as mapped_copy), so every warp instruction has the pattern's 32
/// consecutive logical threads, and issues all Ilp loads before its first store: Ilp
/// requests in flight per thread, which the link's latency needs. The tile loop lets one
/// kernel run on a full grid (one pass) or a persistent one (the resident blocks).
template <class T, unsigned Ilp, class ReadMap, class WriteMap>
__global__ void __launch_bounds__(kLinkBlock)
    link_copy(const T* in, T* out, std::size_t threads, ReadMap read, WriteMap write) {
  const coalesced_map<kLinkBlock, Ilp> slots;
  constexpr std::size_t kTile = std::size_t(kLinkBlock) * Ilp;
  const std::size_t tiles = (threads + kTile - 1) / kTile;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t thread = tile * kLinkBlock + threadIdx.x;
    T v[Ilp];
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) {
      const std::size_t t = slots(thread, j);
      if (t < threads) v[j] = in[read(t, 0)];
    }
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) {
      const std::size_t t = slots(thread, j);
      if (t < threads) out[write(t, 0)] = v[j];
    }
  }
}

/// Tiles (blocks of a full grid) of link_copy<..., Ilp> for `threads` logical threads.
inline std::size_t link_tiles(std::size_t threads, unsigned ilp) {
  const std::size_t tile = std::size_t(kLinkBlock) * ilp;
  return (threads + tile - 1) / tile;
}

}  // namespace gmb::built_once
