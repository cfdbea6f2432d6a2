#pragma once
// 2-D tensor maps (TMA: cp.async.bulk.tensor, Hopper and newer) of a row-major matrix, encoded
// by the driver's cuTensorMapEncodeTiled, reached through the runtime
// (cudaGetDriverEntryPointByVersion) so that nothing links libcuda. A map describes the matrix
// once (its base, sizes and row pitch) and the tile one copy moves (its box); kernels take it
// as a `const __grid_constant__ CUtensorMap` parameter.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gmb {

/// How the tile is laid out in shared memory: as in global memory (rows of box_cols elements),
/// or with the 128-B swizzle (each 16-B chunk of a 128-B row XORed with the row's index mod 8:
/// a column read by 32 lanes then spans 8 chunks, not one bank; needs 1024-B aligned tiles).
enum class tile_swizzle { kNone, k128B };

/// The shared-memory float index of element (row, col) of a tile of 32 floats per row laid out
/// with the 128-B swizzle (CU_TENSOR_MAP_SWIZZLE_128B): chunk (col / 4) XOR (row % 8).
__host__ __device__ constexpr unsigned swizzled_128b(unsigned row, unsigned col) {
  return row * 32 + (((col >> 2) ^ (row & 7)) << 2) + (col & 3);
}

/// A map of a rows x cols row-major matrix of `element_bytes` (4 or 8) elements at `base`,
/// copied in tiles of box_rows x box_cols. Throws one line naming what the driver refused.
inline CUtensorMap matrix_tensor_map(const void* base, std::size_t rows, std::size_t cols,
                                     unsigned element_bytes, unsigned box_rows,
                                     unsigned box_cols, tile_swizzle swizzle) {
  static const auto encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      fn = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (encode == nullptr) {
    throw std::runtime_error("tensor map: the driver has no cuTensorMapEncodeTiled (CUDA 12+)");
  }
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cols, rows};  // innermost first
  const cuuint64_t pitch[1] = {cols * element_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t steps[2] = {1, 1};
  const CUresult status = encode(
      &map, element_bytes == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
      2, const_cast<void*>(base), dims, pitch, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle == tile_swizzle::k128B ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) {
    throw std::runtime_error("tensor map: cuTensorMapEncodeTiled refused a " +
                             std::to_string(rows) + " x " + std::to_string(cols) + " matrix of " +
                             std::to_string(element_bytes) + "-B elements in " +
                             std::to_string(box_rows) + " x " + std::to_string(box_cols) +
                             " tiles (CUresult " + std::to_string(int(status)) + ")");
  }
  return map;
}

}  // namespace gmb
