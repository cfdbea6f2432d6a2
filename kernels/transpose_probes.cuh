#pragma once
// The prediction model's probes of the tiled transposes (model/transpose/..., docs/model.md):
// a tiled rung's time taken apart. Each runs a tiled rung's blocks (its plan: tile order,
// threads, elements per thread) with one part of the rung left out:
// - moved: each tile loaded as the rung loads it, then stored to its transposed place with its
//   rows kept (no shared memory): the rung's DRAM traffic, tile by tile, without the exchange;
// - exchange: no load (each element's value made from its index, as the input holds it), the
//   tile through the padded shared tile and out transposed, as the rung stores it: the
//   exchange alone;
// - stores: the same values stored where the exchange stores them, straight from registers.
// Plain loads and stores, as the rungs' (the flavors' -dlcm applies).
// Bytes: moved read + write rows*cols*4; exchange and stores write rows*cols*4.
#include <cstddef>
#include <cstdint>

#include "gmb/cache_op.cuh"
#include "gmb/transpose_plan.hpp"
#include "gmb/words.cuh"

namespace gmb {

enum class tile_probe { kMoved, kExchange, kStores };

constexpr const char* name(tile_probe p) {
  switch (p) {
    case tile_probe::kMoved:
      return "moved";
    case tile_probe::kExchange:
      return "exchange";
    case tile_probe::kStores:
      return "stores";
  }
  return "?";
}

/// Where `moved` puts input element (r, c) of a square matrix of side n (a multiple of 32):
/// the tile (r / 32, c / 32) at (c / 32, r / 32), each row of it a row there. Its own inverse.
GMB_HD std::size_t moved_index(std::size_t r, std::size_t c, std::size_t n) {
  const std::size_t t = kTransposeTile;
  return ((c / t) * t + r % t) * n + (r / t) * t + c % t;
}

/// One tile per block of the rung's plan (kTilePadded: 32 x 32 threads, one element each;
/// kTileRows8: 32 x 8, four), its shared tile padded. `in` holds pattern's words.
template <tile_probe Probe, transpose_rung Rung>
__global__ void __launch_bounds__(1024) transpose_probe(const std::uint32_t* in, std::uint32_t* out,
                                                        transpose_plan plan, word_pattern pattern) {
  constexpr transpose_plan kShape{Rung, 0, 0};
  constexpr unsigned kSlots = kShape.rows_per_thread();
  std::size_t gx, gy;
  plan.tile_of(blockIdx.x, gx, gy);
  if constexpr (Probe == tile_probe::kMoved) {
    std::uint32_t v[kSlots];
#pragma unroll
    for (unsigned s = 0; s < kSlots; ++s) {
      const matrix_element e = plan.loaded_in_tile(gx, gy, threadIdx.x, threadIdx.y, s);
      v[s] = load<cache_op::kDefault>(in + plan.in_index(e));
    }
#pragma unroll
    for (unsigned s = 0; s < kSlots; ++s) {
      const matrix_element e = plan.loaded_in_tile(gx, gy, threadIdx.x, threadIdx.y, s);
      out[moved_index(e.r, e.c, plan.cols)] = v[s];
    }
  } else if constexpr (Probe == tile_probe::kStores) {
#pragma unroll
    for (unsigned s = 0; s < kSlots; ++s) {
      const matrix_element e = plan.stored_in_tile(gx, gy, threadIdx.x, threadIdx.y, s);
      out[plan.out_index(e)] = pattern(plan.in_index(e));
    }
  } else {
    __shared__ std::uint32_t tile[kTransposeTile][kTransposeTile + 1];
#pragma unroll
    for (unsigned s = 0; s < kSlots; ++s) {
      const matrix_element e = plan.loaded_in_tile(gx, gy, threadIdx.x, threadIdx.y, s);
      tile[threadIdx.y + s * kShape.block_y()][threadIdx.x] = pattern(plan.in_index(e));
    }
    __syncthreads();
#pragma unroll
    for (unsigned s = 0; s < kSlots; ++s) {
      const matrix_element e = plan.stored_in_tile(gx, gy, threadIdx.x, threadIdx.y, s);
      out[plan.out_index(e)] = tile[threadIdx.x][threadIdx.y + s * kShape.block_y()];
    }
  }
}

/// Launches a probe over the plan's square matrix (a multiple of 32 on a side).
template <tile_probe Probe, transpose_rung Rung>
void launch_transpose_probe(const transpose_plan& plan, const std::uint32_t* in, std::uint32_t* out,
                            word_pattern pattern, cudaStream_t stream) {
  const dim3 block(plan.block_x(), plan.block_y());
  transpose_probe<Probe, Rung>
      <<<static_cast<unsigned>(plan.blocks()), block, 0, stream>>>(in, out, plan, pattern);
}

}  // namespace gmb
