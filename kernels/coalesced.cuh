#pragma once
// Coalesced baselines: read, write and copy of n elements of T, Ilp elements per thread.
// Bytes: read n*sizeof(T); write n*sizeof(T); copy 2*n*sizeof(T).
// One kernel serves both grids: launched with one block per tile, its tile loop runs once
// ("full" grid); launched with only the resident blocks, it strides over the tiles ("persistent").
#include <cstddef>
#include <cstdint>

#include "gmb/cache_op.cuh"
#include "gmb/pattern.cuh"
#include "gmb/words.cuh"

namespace gmb {

inline constexpr unsigned kCoalescedBlock = 256;

/// Issues all Ilp loads of a thread before any use, so Ilp requests are in flight at once.
template <cache_op Load, class T, unsigned Ilp, class Map>
__device__ __forceinline__ void load_slots(const T* in, const Map& map, std::size_t thread,
                                           T (&v)[Ilp]) {
#pragma unroll
  for (unsigned j = 0; j < Ilp; ++j) v[j] = load<Load>(in + map(thread, j));
}

/// Reads every element and compares it with the expected pattern; the comparison keeps the
/// loads alive without a reduction and doubles as verification: elements with a wrong word are
/// counted in `bad_elements` (one atomic per warp that found any). All Ilp loads are issued
/// before the first use.
template <class T, unsigned Ilp, cache_op Load>
__device__ __forceinline__ void checking_read(const T* in, std::size_t tiles, word_pattern expected,
                                              unsigned long long* bad_elements) {
  const coalesced_map<kCoalescedBlock, Ilp> map;
  unsigned bad = 0;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t thread = tile * kCoalescedBlock + threadIdx.x;
    T v[Ilp];
    load_slots<Load>(in, map, thread, v);
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) bad += element_mismatch(v[j], expected, map(thread, j)) != 0;
  }
  if (bad != 0) add_bad(bad_elements, bad);
}

template <class T, unsigned Ilp, cache_op Load>
__global__ void __launch_bounds__(kCoalescedBlock)
    coalesced_read(const T* in, std::size_t tiles, word_pattern expected,
                   unsigned long long* bad_elements) {
  checking_read<T, Ilp, Load>(in, tiles, expected, bad_elements);
}

/// Writes the output pattern to every element.
template <class T, unsigned Ilp, store_op Store>
__device__ __forceinline__ void pattern_write(T* out, std::size_t tiles, word_pattern value) {
  const coalesced_map<kCoalescedBlock, Ilp> map;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t thread = tile * kCoalescedBlock + threadIdx.x;
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) {
      const std::size_t e = map(thread, j);
      store<Store>(out + e, make_element<T>(value, e));
    }
  }
}

template <class T, unsigned Ilp, store_op Store>
__global__ void __launch_bounds__(kCoalescedBlock)
    coalesced_write(T* out, std::size_t tiles, word_pattern value) {
  pattern_write<T, Ilp, Store>(out, tiles, value);
}

/// Copies one tile: out[e] = in[e] for this thread's Ilp elements of it, all loads issued
/// before the first store.
template <class T, unsigned Ilp, cache_op Load, store_op Store>
__device__ __forceinline__ void copy_tile(const T* in, T* out, std::size_t tile) {
  const coalesced_map<kCoalescedBlock, Ilp> map;
  const std::size_t thread = tile * kCoalescedBlock + threadIdx.x;
  T v[Ilp];
  load_slots<Load>(in, map, thread, v);
#pragma unroll
  for (unsigned j = 0; j < Ilp; ++j) store<Store>(out + map(thread, j), v[j]);
}

/// out[e] = in[e] for every element.
template <class T, unsigned Ilp, cache_op Load, store_op Store>
__global__ void __launch_bounds__(kCoalescedBlock)
    coalesced_copy(const T* in, T* out, std::size_t tiles) {
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    copy_tile<T, Ilp, Load, Store>(in, out, tile);
  }
}

/// Up to kMaxSlices (source, destination) array pairs, passed by value to sliced_copy (a GPU
/// has at most 8 peer connections).
inline constexpr unsigned kMaxSlices = 8;
template <class T>
struct slice_table {
  const T* from[kMaxSlices];
  T* to[kMaxSlices];
};

/// Tile t moves between table.from[t % slices] and table.to[t % slices], at the same element
/// indices: one launch in which every pair of arrays is busy from the first blocks on (one GPU
/// to all others, or back).
template <class T, unsigned Ilp, cache_op Load, store_op Store>
__global__ void __launch_bounds__(kCoalescedBlock)
    sliced_copy(slice_table<T> table, unsigned slices, std::size_t tiles) {
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const auto s = static_cast<unsigned>(tile % slices);
    copy_tile<T, Ilp, Load, Store>(table.from[s], table.to[s], tile);
  }
}

/// The model's instruction probe (model/instructions/f32/extra:K): the f32 copy of one element
/// per thread with `Extra` dependent multiply-adds on its index before the load. `one` is 1 and
/// `zero` 0 at run time, so the index is unchanged and ptxas can neither fold nor merge them:
/// the warp issues Extra more instructions (model_warp_instructions says how many in all).
template <unsigned Extra>
__global__ void __launch_bounds__(kCoalescedBlock)
    instruction_copy(const float* in, float* out, std::size_t tiles, unsigned one, unsigned zero) {
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    unsigned lane = threadIdx.x;
#pragma unroll
    for (unsigned k = 0; k < Extra; ++k) {
      asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(lane) : "r"(one), "r"(zero));
    }
    const std::size_t e = tile * kCoalescedBlock + lane;
    out[e] = in[e];
  }
}

}  // namespace gmb
