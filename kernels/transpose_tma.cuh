#pragma once
// The transpose ladder's TMA rung (Hopper and newer): a 32x32 tile of the input is copied into
// shared memory by the tensor memory accelerator (cp.async.bulk.tensor.2d, one thread starts
// it, completed on an mbarrier) with the 128-B swizzle, transposed in shared memory by 32x8
// threads (four elements each: a column of the swizzled tile spans eight 16-B chunks, so its
// reads are 4-way bank conflicts, not 32-way), and the transposed tile is copied out by the
// same unit (cp.async.bulk.tensor.2d shared -> global). No thread holds a global element in a
// register, and no load or store of global memory is an LDG or STG: -dlcm does not apply
// (namespace gmb::built_once: the SASS tests read it as the same in every build).
// Edge tiles: the copy in fills elements outside the matrix with zeros, the copy out skips them.
// The tensor maps (gmb/tensor_map.hpp) describe the input (rows x cols) and the output
// (cols x rows), both in 32x32 tiles. Below sm_90 the body traps (the host never launches it
// there: gpu_feature::kBulkCopy).
#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "gmb/bulk_ptx.cuh"
#include "gmb/tensor_map.hpp"
#include "gmb/transpose_plan.hpp"

namespace gmb::built_once {

inline constexpr unsigned kTmaTile = kTransposeTile;  // 32 x 32 floats: 128-B rows

__global__ void __launch_bounds__(256)
    transpose_tma(const __grid_constant__ CUtensorMap in_map,
                  const __grid_constant__ CUtensorMap out_map, std::size_t rows,
                  std::size_t cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ alignas(1024) float in_tile[kTmaTile * kTmaTile];  // swizzled, as the input map
  __shared__ alignas(128) float out_tile[kTmaTile * kTmaTile];  // plain rows, as the output's
  __shared__ alignas(8) std::uint64_t arrived;
  const transpose_plan plan{transpose_rung::kTileTma, rows, cols};
  std::size_t gx, gy;
  plan.tile_of(blockIdx.x, gx, gy);
  const int col0 = static_cast<int>(gx * kTmaTile), row0 = static_cast<int>(gy * kTmaTile);
  const bool starter = threadIdx.x == 0 && threadIdx.y == 0;
  if (starter) {
    bulk_ptx::barrier_init(&arrived, 1);
    bulk_ptx::barrier_init_fence();
  }
  __syncthreads();
  if (starter) {
    bulk_ptx::arrive_expect_tx(&arrived, sizeof in_tile);  // the whole box, edges included
    bulk_ptx::copy_tile_to_shared(in_tile, &in_map, col0, row0, &arrived);
  }
  bulk_ptx::wait_parity(&arrived, 0);
  // out_tile[j][i] = input (row0 + i, col0 + j): lanes along i write one output row
#pragma unroll
  for (unsigned s = 0; s < kTmaTile / 8; ++s) {
    const unsigned j = threadIdx.y + 8 * s, i = threadIdx.x;
    out_tile[j * kTmaTile + i] = in_tile[swizzled_128b(i, j)];
  }
  bulk_ptx::fence_shared_for_async();  // the tile's writes before the copy unit reads them
  __syncthreads();
  if (starter) {
    bulk_ptx::copy_tile_to_global(&out_map, row0, col0, out_tile);  // output (col0.., row0..)
    bulk_ptx::commit_group();
    bulk_ptx::wait_group_read<0>();  // the tile stays until the unit has read it
  }
#else
  __trap();
#endif
}

/// The maps of a plan's input and output (32x32 tiles; the input's swizzled).
struct transpose_tma_maps {
  CUtensorMap in, out;
};

inline transpose_tma_maps make_transpose_tma_maps(const transpose_plan& plan, const float* in,
                                                  float* out) {
  return {matrix_tensor_map(in, plan.rows, plan.cols, 4, kTmaTile, kTmaTile, tile_swizzle::k128B),
          matrix_tensor_map(out, plan.cols, plan.rows, 4, kTmaTile, kTmaTile, tile_swizzle::kNone)};
}

inline void launch_transpose_tma(const transpose_plan& plan, const transpose_tma_maps& maps,
                                 cudaStream_t stream) {
  transpose_tma<<<static_cast<unsigned>(plan.blocks()), dim3(32, 8), 0, stream>>>(
      maps.in, maps.out, plan.rows, plan.cols);
}

}  // namespace gmb::built_once
