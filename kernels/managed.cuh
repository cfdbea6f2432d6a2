#pragma once
// Managed family: cudaMallocManaged arrays read by a checking read (as coalesced_read: every
// element compared with the pattern it must hold, the wrong ones counted) and written by a
// coalesced write (the first touch of fresh pages). Bytes: read n*sizeof(T); write
// n*sizeof(T). Built once (namespace gmb::built_once), like every family of the other paths.
#include <cstddef>

#include "kernels/coalesced.cuh"  // kCoalescedBlock, load_slots

namespace gmb::built_once {

/// Reads n = tiles * kCoalescedBlock * Ilp elements, all Ilp loads of a thread issued before
/// any use, and counts in `bad_elements` those that differ from `expected`.
template <class T, unsigned Ilp>
__global__ void __launch_bounds__(kCoalescedBlock)
    managed_read(const T* in, std::size_t tiles, word_pattern expected,
                 unsigned long long* bad_elements) {
  const coalesced_map<kCoalescedBlock, Ilp> map;
  unsigned bad = 0;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t thread = tile * kCoalescedBlock + threadIdx.x;
    T v[Ilp];
    load_slots<cache_op::kDefault>(in, map, thread, v);
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) bad += element_mismatch(v[j], expected, map(thread, j)) != 0;
  }
  if (bad != 0) atomicAdd(bad_elements, static_cast<unsigned long long>(bad));
}

/// Writes the pattern to every element of n = tiles * kCoalescedBlock * Ilp.
template <class T, unsigned Ilp>
__global__ void __launch_bounds__(kCoalescedBlock)
    managed_write(T* out, std::size_t tiles, word_pattern value) {
  const coalesced_map<kCoalescedBlock, Ilp> map;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t thread = tile * kCoalescedBlock + threadIdx.x;
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) {
      const std::size_t e = map(thread, j);
      out[e] = make_element<T>(value, e);
    }
  }
}

}  // namespace gmb::built_once
