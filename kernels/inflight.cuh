#pragma once
// Bytes in flight: coalesced read and copy with the block size chosen at launch and exactly
// Ilp independent loads of T in flight per thread. A tile is blockDim.x * Ilp elements; slot j
// of thread t in tile k is element k * blockDim.x * Ilp + j * blockDim.x + t. Launched with one
// block per tile, each block lives for one round of loads ("full"); launched with the resident
// blocks only, they loop over the tiles ("persistent"). The tile loop is never unrolled, so
// the next tile's loads wait for this tile's use: the loads in flight are Ilp per thread, no
// more. Dynamic shared memory, never touched, limits the blocks an SM holds.
// __launch_bounds__(1024, 1) lets ptxas give every thread the registers its Ilp loads need:
// held to 32 registers (what 2048 threads per SM allow), it interleaves the first loads' uses
// with the last loads and keeps only half of them in flight (16-B words, Ilp 4: measured).
// Shapes the registers cannot hold are not registered (the occupancy API says which).
// inflight_read_async stages the same loads through shared memory by cp.async (LDGSTS).
// inflight_write stores the output pattern, Ilp stores per thread per tile (no loads: its rate is
// what DRAM gives the grid's stores, the model's persistent write rate).
// Bytes: read n*sizeof(T); write n*sizeof(T); copy 2*n*sizeof(T).
#include <cuda_pipeline.h>

#include <cstddef>
#include <cstdint>

#include "gmb/cache_op.cuh"
#include "gmb/sm_id.cuh"
#include "gmb/words.cuh"

namespace gmb {

/// Counts the blocks each SM received (`blocks_on_sm` indexed by %smid; null: not counted).
__device__ __forceinline__ void count_block_on_sm(unsigned* blocks_on_sm) {
  if (blocks_on_sm != nullptr && threadIdx.x == 0) atomicAdd(blocks_on_sm + sm_id(), 1u);
}

/// Loads the Ilp elements of this thread in `tile`, all before any use, and counts those that
/// differ from `expected`.
template <class T, unsigned Ilp>
__device__ __forceinline__ unsigned read_tile(const T* in, std::size_t tile,
                                              word_pattern expected) {
  const std::size_t first = tile * blockDim.x * Ilp + threadIdx.x;
  T v[Ilp];
#pragma unroll
  for (unsigned j = 0; j < Ilp; ++j) v[j] = load<cache_op::kDefault>(in + first + j * blockDim.x);
  unsigned bad = 0;
#pragma unroll
  for (unsigned j = 0; j < Ilp; ++j) {
    bad += element_mismatch(v[j], expected, first + j * blockDim.x) != 0;
  }
  return bad;
}

/// Reads every element, counting those that differ from `expected` in `bad_elements`.
template <class T, unsigned Ilp>
__global__ void __launch_bounds__(1024, 1)
    inflight_read(const T* in, std::size_t tiles, word_pattern expected,
                  unsigned long long* bad_elements, unsigned* blocks_on_sm) {
  count_block_on_sm(blocks_on_sm);
  unsigned bad = 0;
#pragma unroll 1
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    bad += read_tile<T, Ilp>(in, tile, expected);
  }
  if (bad != 0) add_bad(bad_elements, bad);
}

/// As inflight_read, but each thread's Ilp elements of a tile travel to shared memory by cp.async
/// (LDGSTS, sm_80 on: no register holds them in flight), one commit, one wait, then the thread
/// checks its own elements there. Dynamic shared memory: at least blockDim.x * Ilp elements.
template <class T, unsigned Ilp>
__global__ void __launch_bounds__(1024, 1)
    inflight_read_async(const T* in, std::size_t tiles, word_pattern expected,
                        unsigned long long* bad_elements, unsigned* blocks_on_sm) {
  extern __shared__ __align__(16) unsigned char inflight_staging[];
  T* staged = reinterpret_cast<T*>(inflight_staging);
  count_block_on_sm(blocks_on_sm);
  unsigned bad = 0;
#pragma unroll 1
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t first = tile * blockDim.x * Ilp + threadIdx.x;
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) {
      __pipeline_memcpy_async(staged + j * blockDim.x + threadIdx.x, in + first + j * blockDim.x,
                              sizeof(T));
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) {
      bad += element_mismatch(staged[j * blockDim.x + threadIdx.x], expected,
                              first + j * blockDim.x) != 0;
    }
  }
  if (bad != 0) add_bad(bad_elements, bad);
}

/// out[e] = in[e]; all Ilp loads of a tile are issued before its first store.
template <class T, unsigned Ilp>
__global__ void __launch_bounds__(1024, 1)
    inflight_copy(const T* in, T* out, std::size_t tiles, unsigned* blocks_on_sm) {
  count_block_on_sm(blocks_on_sm);
#pragma unroll 1
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t first = tile * blockDim.x * Ilp + threadIdx.x;
    T v[Ilp];
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) v[j] = load<cache_op::kDefault>(in + first + j * blockDim.x);
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j)
      store<store_op::kDefault>(out + first + j * blockDim.x, v[j]);
  }
}

/// out[e] = the pattern's element e, Ilp stores per thread per tile.
template <class T, unsigned Ilp>
__global__ void __launch_bounds__(1024, 1)
    inflight_write(T* out, std::size_t tiles, word_pattern value, unsigned* blocks_on_sm) {
  count_block_on_sm(blocks_on_sm);
#pragma unroll 1
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::size_t first = tile * blockDim.x * Ilp + threadIdx.x;
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) {
      const std::size_t e = first + j * blockDim.x;
      store<store_op::kDefault>(out + e, make_element<T>(value, e));
    }
  }
}

/// Blocks that do almost nothing (thread 0 writes one word): what launching and retiring a
/// block costs, without memory latency. Word b of `out` becomes value(b).
static __global__ void inflight_blocks(std::uint32_t* out, word_pattern value) {
  if (threadIdx.x == 0) out[blockIdx.x] = value(blockIdx.x);
}

}  // namespace gmb
