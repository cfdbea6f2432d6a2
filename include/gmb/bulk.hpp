#pragma once
// Bulk copies (benchmarks/bulk.cu, kernels/bulk.cuh): the shapes the family's sweeps visit
// (bytes per copy, copies in flight per block, blocks per SM), the shared memory each needs and
// the bytes each keeps in flight. Host only, so the tests check the arithmetic.
#include <cstddef>
#include <string>
#include <vector>

#include "gmb/naming.hpp"

namespace gmb {

enum class bulk_op { kRead, kWrite, kCopy };

inline const char* bulk_op_name(bulk_op op) {
  return op == bulk_op::kRead ? "read" : op == bulk_op::kWrite ? "write" : "copy";
}

/// One point of the sweep: each block keeps `stages` copies of `chunk_bytes` in flight, and an
/// SM holds `blocks_per_sm` blocks of `warps` warps (reads: the warps that check each chunk,
/// thread 0 issuing every copy; writes and copies are one warp).
struct bulk_shape {
  std::size_t chunk_bytes = 0;
  unsigned stages = 0;
  unsigned blocks_per_sm = 0;
  unsigned warps = 1;
};

/// The most warps of a bulk read's block (its kernel's launch bounds).
inline constexpr unsigned kBulkMostWarps = 4;

/// bulk/read/bytes:B/stages:S/bpsm:K/warps:W; writes and copies (one warp) have no warps axis.
inline std::string bulk_name(bulk_op op, const bulk_shape& s) {
  std::vector<name_param> axes = {{"bytes", static_cast<long long>(s.chunk_bytes)},
                                  {"stages", s.stages},
                                  {"bpsm", s.blocks_per_sm}};
  if (op == bulk_op::kRead) axes.emplace_back("warps", s.warps);
  return bench_name("bulk", bulk_op_name(op), axes);
}

/// Dynamic shared memory of a block: its stage buffers, then one 8-B mbarrier per stage.
inline constexpr std::size_t bulk_smem_bytes(std::size_t chunk_bytes, unsigned stages) {
  return chunk_bytes * stages + 8 * std::size_t(stages);
}

/// Bytes an SM keeps in flight: every resident block's stages, each one copy of chunk_bytes.
inline double bulk_bytes_in_flight_per_sm(const bulk_shape& s) {
  return double(s.chunk_bytes) * s.stages * s.blocks_per_sm;
}

/// Bytes per copy the sweeps know: 1 KiB, 2 KiB, ... 128 KiB.
inline constexpr std::size_t kBulkSmallestCopy = 1024;
inline constexpr std::size_t kBulkLargestCopy = 128 * 1024;

/// Whether an SM with `smem_per_block` bytes of shared memory per block at most and
/// `smem_per_sm` in all (less `reserved_per_block`, what the system keeps of each block's)
/// holds the shape's blocks. The occupancy API has the last word (benchmarks/bulk.cu).
inline bool bulk_fits(const bulk_shape& s, std::size_t smem_per_block, std::size_t smem_per_sm,
                      std::size_t reserved_per_block) {
  const std::size_t block = bulk_smem_bytes(s.chunk_bytes, s.stages);
  return block <= smem_per_block &&
         (block + reserved_per_block) * s.blocks_per_sm <= smem_per_sm;
}

/// The quick sweep's shapes of `op`. Reads by four warps per block, one block per SM: one
/// stage of 1 KiB, 4 stages of 1, 4, 8, 16 and 32 KiB (4 to 128 KiB in flight), 2 stages of 4
/// and 16 KiB, the biggest copy (128 KiB) alone; and by one warp: 4 stages of 1 and 32 KiB,
/// and 4 blocks of 4 stages of 1 KiB (16 KiB in flight). Writes and copies: 4 stages of 4 and
/// 32 KiB.
inline std::vector<bulk_shape> bulk_quick_shapes(bulk_op op) {
  if (op == bulk_op::kRead) {
    return {{1024, 1, 1, 4},  {1024, 4, 1, 4},   {4096, 2, 1, 4},  {4096, 4, 1, 4},
            {8192, 4, 1, 4},  {16384, 2, 1, 4},  {16384, 4, 1, 4}, {32768, 4, 1, 4},
            {131072, 1, 1, 4}, {1024, 4, 1, 1},  {32768, 4, 1, 1}, {1024, 4, 4, 1}};
  }
  return {{4096, 4, 1}, {32768, 4, 1}};
}

/// The full sweep's shapes of `op`: copies of 1 KiB to 128 KiB, 1, 2, 4 or 8 stages, 1, 2 or 4
/// blocks per SM, where the shared memory holds them; reads by 1, 2 and 4 warps per block.
inline std::vector<bulk_shape> bulk_full_shapes(bulk_op op, std::size_t smem_per_block,
                                                std::size_t smem_per_sm,
                                                std::size_t reserved_per_block) {
  const std::vector<unsigned> warps =
      op == bulk_op::kRead ? std::vector<unsigned>{1, 2, kBulkMostWarps} : std::vector<unsigned>{1};
  std::vector<bulk_shape> shapes;
  for (std::size_t bytes = kBulkSmallestCopy; bytes <= kBulkLargestCopy; bytes *= 2) {
    for (unsigned stages : {1u, 2u, 4u, 8u}) {
      for (unsigned per_sm : {1u, 2u, 4u}) {
        for (unsigned w : warps) {
          const bulk_shape s{bytes, stages, per_sm, w};
          if (bulk_fits(s, smem_per_block, smem_per_sm, reserved_per_block)) shapes.push_back(s);
        }
      }
    }
  }
  return shapes;
}

/// The latency probe's copy sizes: 1, 4, 16 and 64 KiB (quick); every power of two from 1 to
/// 64 KiB (full).
inline std::vector<std::size_t> bulk_latency_sizes(bool full) {
  if (!full) return {1024, 4096, 16384, 65536};
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = 1024; bytes <= 65536; bytes *= 2) sizes.push_back(bytes);
  return sizes;
}

/// Bulk reads keeping less than this in flight per SM read an eighth of the array (one launch
/// per iteration): the whole of it would take them tens of milliseconds.
inline constexpr double kBulkSlowBelowBytes = 16 * 1024;

}  // namespace gmb
