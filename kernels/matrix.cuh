#pragma once
// 2-D arrays: copy a height x width matrix of f32 stored row by row with `pitch` elements per
// row, traversed row-major (a warp takes 32 neighbours in a row) or column-major (a warp takes
// 32 rows of one column, `pitch` elements apart). Bytes: read + write height*width*4 each.
// 32x8 blocks; the second grid dimension strides, since rows can outnumber its limit.
#include <cstddef>

#include "gmb/cache_op.cuh"

namespace gmb {

inline constexpr unsigned kMatrixBlockX = 32, kMatrixBlockY = 8;

template <bool ColumnMajor, cache_op Load>
__global__ void __launch_bounds__(kMatrixBlockX* kMatrixBlockY)
    matrix_copy(const float* in, float* out, unsigned width, unsigned height, std::size_t pitch) {
  const unsigned x = blockIdx.x * kMatrixBlockX + threadIdx.x;
  const unsigned y_end = ColumnMajor ? width : height;
  for (unsigned y = blockIdx.y * kMatrixBlockY + threadIdx.y; y < y_end;
       y += gridDim.y * kMatrixBlockY) {
    const unsigned row = ColumnMajor ? x : y, col = ColumnMajor ? y : x;
    if (row < height && col < width) {
      const std::size_t i = std::size_t(row) * pitch + col;
      out[i] = load<Load>(in + i);
    }
  }
}

}  // namespace gmb
