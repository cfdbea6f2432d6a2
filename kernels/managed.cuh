#pragma once
// Managed family: cudaMallocManaged arrays read by a checking read (as coalesced_read: every
// element compared with the pattern it must hold, the wrong ones counted) and written by a
// coalesced write (the first touch of fresh pages). Bytes: read n*sizeof(T); write
// n*sizeof(T). Built once (namespace gmb::built_once), like every family of the other paths.
#include <cstddef>

#include "kernels/coalesced.cuh"  // kCoalescedBlock, checking_read, pattern_write

namespace gmb::built_once {

/// coalesced_read and coalesced_write under names of their own (built once), plain loads.
template <class T, unsigned Ilp>
__global__ void __launch_bounds__(kCoalescedBlock)
    managed_read(const T* in, std::size_t tiles, word_pattern expected,
                 unsigned long long* bad_elements) {
  checking_read<T, Ilp, cache_op::kDefault>(in, tiles, expected, bad_elements);
}

template <class T, unsigned Ilp>
__global__ void __launch_bounds__(kCoalescedBlock)
    managed_write(T* out, std::size_t tiles, word_pattern value) {
  pattern_write<T, Ilp, store_op::kDefault>(out, tiles, value);
}

}  // namespace gmb::built_once
