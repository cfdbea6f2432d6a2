#pragma once
// The transpose ladder (gmb/transpose_plan.hpp holds every rung's index math): out = in^T for an
// input of rows x cols elements of T. Direct rungs move each element from where they load it to
// its transposed place; tiled rungs load a 32x32 tile coalesced along input rows into shared
// memory, then write it coalesced along output rows, reading the tile down its columns (an
// unpadded 32-word-wide tile puts a column in one bank: 32-way conflicts; 33 words: none).
// Bytes: read + write rows*cols*sizeof(T). Plain loads and stores (the flavors' -dlcm applies).
#include <cuda_pipeline.h>

#include <cstddef>

#include "gmb/cache_op.cuh"
#include "gmb/transpose_plan.hpp"

namespace gmb {

/// Two elements as one word: the top rung's loads and stores.
template <class T>
struct pair_of;
template <>
struct pair_of<float> {
  using type = float2;
};
template <>
struct pair_of<double> {
  using type = double2;
};
template <class T>
using pair_of_t = typename pair_of<T>::type;

/// Direct rungs: thread_per_col, naive_rows, naive_cols, warp_per_col.
template <class T, transpose_rung Rung>
__global__ void __launch_bounds__(256)
    transpose_direct(const T* in, T* out, std::size_t rows, std::size_t cols) {
  const transpose_plan plan{Rung, rows, cols};
  const std::size_t slots = plan.slots();
  for (std::size_t slot = 0; slot < slots; ++slot) {
    const matrix_element e = plan.loaded(blockIdx.x, threadIdx.x, threadIdx.y, slot);
    if (e.valid) out[plan.out_index(e)] = load<cache_op::kDefault>(in + plan.in_index(e));
  }
}

/// Tiled rungs (and the copy roof, which skips shared memory): Pad 0 or 1 extra column.
template <class T, transpose_rung Rung, unsigned Pad>
__global__ void __launch_bounds__(1024)
    transpose_tiled(const T* in, T* out, std::size_t rows, std::size_t cols) {
  constexpr transpose_plan kShape{Rung, 0, 0};
  constexpr unsigned kSlots = kShape.rows_per_thread();
  const transpose_plan plan{Rung, rows, cols};
  std::size_t gx, gy;
  plan.tile_of(blockIdx.x, gx, gy);
  if constexpr (Rung == transpose_rung::kCopy) {
    T v[kSlots];
#pragma unroll
    for (unsigned s = 0; s < kSlots; ++s) {
      const matrix_element e = plan.loaded_in_tile(gx, gy, threadIdx.x, threadIdx.y, s);
      if (e.valid) v[s] = load<cache_op::kDefault>(in + plan.in_index(e));
    }
#pragma unroll
    for (unsigned s = 0; s < kSlots; ++s) {
      const matrix_element e = plan.stored_in_tile(gx, gy, threadIdx.x, threadIdx.y, s);
      if (e.valid) out[plan.out_index(e)] = v[s];
    }
  } else {
    constexpr unsigned kSide = kShape.tile_side(), kPair = kShape.pair_width();
    __shared__ T tile[kSide][kSide + Pad];
    // Pairs move as one word where both elements exist and the word is aligned (even widths).
    const bool words = kPair == 2 && cols % 2 == 0 && rows % 2 == 0;
    // Every load into registers first, then into the tile: a branch between a load and its
    // shared-memory store would let each load wait for the one before (measured: the top
    // rung lost 8% that way).
    T first[kSlots], second[kSlots];
#pragma unroll
    for (unsigned s = 0; s < kSlots; ++s) {
      const matrix_element e = plan.loaded_in_tile(gx, gy, threadIdx.x, threadIdx.y, s);
      if (!e.valid) continue;
      const T* from = in + plan.in_index(e);
      if constexpr (Rung == transpose_rung::kTileAsync) {
        __pipeline_memcpy_async(&tile[threadIdx.y + s * kShape.block_y()][threadIdx.x], from,
                                sizeof(T));
      } else if constexpr (kPair == 2) {
        if (words && e.c + 1 < cols) {
          const auto v = load<cache_op::kDefault>(reinterpret_cast<const pair_of_t<T>*>(from));
          first[s] = v.x;
          second[s] = v.y;
        } else {
          first[s] = load<cache_op::kDefault>(from);
          if (e.c + 1 < cols) second[s] = load<cache_op::kDefault>(from + 1);
        }
      } else {
        first[s] = load<cache_op::kDefault>(from);
      }
    }
    if constexpr (Rung != transpose_rung::kTileAsync) {
#pragma unroll
      for (unsigned s = 0; s < kSlots; ++s) {
        T* slot = &tile[threadIdx.y + s * kShape.block_y()][threadIdx.x * kPair];
        slot[0] = first[s];  // elements outside the matrix: never stored, so never read
        if constexpr (kPair == 2) slot[1] = second[s];
      }
    }
    if constexpr (Rung == transpose_rung::kTileAsync) {
      __pipeline_commit();
      __pipeline_wait_prior(0);
    }
    __syncthreads();
#pragma unroll
    for (unsigned s = 0; s < kSlots; ++s) {
      const matrix_element e = plan.stored_in_tile(gx, gy, threadIdx.x, threadIdx.y, s);
      if (!e.valid) continue;
      const unsigned column = threadIdx.y + s * kShape.block_y();
      const T a = tile[threadIdx.x * kPair][column];
      if constexpr (kPair == 2) {  // the places of (r, c) and (r + 1, c): one output word
        const T b = tile[threadIdx.x * kPair + 1][column];
        if (words && e.r + 1 < rows) {
          *reinterpret_cast<pair_of_t<T>*>(out + plan.out_index(e)) = {a, b};
        } else {
          out[plan.out_index(e)] = a;
          if (e.r + 1 < rows) out[plan.out_index(e) + 1] = b;
        }
      } else {
        out[plan.out_index(e)] = a;
      }
    }
  }
}

/// Launches a rung over the plan's matrix (a grid of plan.blocks() blocks).
template <class T, transpose_rung Rung>
void launch_transpose(const transpose_plan& plan, const T* in, T* out, cudaStream_t stream) {
  const dim3 block(plan.block_x(), plan.block_y());
  const auto grid = static_cast<unsigned>(plan.blocks());
  if constexpr (Rung == transpose_rung::kCopy || Rung >= transpose_rung::kTile) {
    constexpr unsigned kPad = Rung == transpose_rung::kTile ? 0 : 1;
    transpose_tiled<T, Rung, kPad><<<grid, block, 0, stream>>>(in, out, plan.rows, plan.cols);
  } else {
    transpose_direct<T, Rung><<<grid, block, 0, stream>>>(in, out, plan.rows, plan.cols);
  }
}

}  // namespace gmb
