#pragma once
// 2-D arrays: copy a height x width matrix of f32 stored row by row with `pitch` elements per
// row, traversed row-major (a warp takes 32 neighbours in a row) or column-major (a warp takes
// 32 rows of one column, `pitch` elements apart). Bytes: read + write height*width*4 each.
// 32x8 blocks; the second grid dimension strides, since rows can outnumber its limit.
#include <cstddef>

#include "gmb/cache_op.cuh"
#include "gmb/pattern.cuh"

namespace gmb {

inline constexpr unsigned kMatrixBlockX = matrix_map::kBlockX;
inline constexpr unsigned kMatrixBlockY = matrix_map::kBlockY;

/// x runs along the traversal (threadIdx.x: the lanes of a warp), y across it.
template <cache_op Load>
__global__ void __launch_bounds__(kMatrixBlockX* kMatrixBlockY)
    matrix_copy(const float* in, float* out, matrix_map map) {
  const std::size_t along = blockIdx.x * kMatrixBlockX + threadIdx.x;
  for (std::size_t across = blockIdx.y * kMatrixBlockY + threadIdx.y; across < map.across_extent();
       across += gridDim.y * kMatrixBlockY) {
    const std::size_t i = map.element(along, across);
    if (i != matrix_map::kNone) out[i] = load<Load>(in + i);
  }
}

}  // namespace gmb
