#pragma once
// The warp traffic model of docs/design.md: simulate a warp's 32 addresses per load/store
// instruction and count distinct 32-B sectors (what L1/L2 move) and 64-B chunks (what DRAM
// moves on H100/H200), from the same index maps the kernels use.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace gmb {

inline constexpr unsigned kWarpSize = 32;
inline constexpr unsigned kSectorBytes = 32;
/// What one DRAM read moves: 64 B, measured on the H100 and H200; on other GPUs unverified
/// (gmb/arch_facts.hpp), and each run measures it (the report's DRAM granule line).
inline constexpr unsigned kDramChunkBytes = 64;
/// Consecutive warps in each window the model samples (model_windows).
inline constexpr std::size_t kModelWindowWarps = 64;

enum class access_kind { kLoad, kStore };

/// One warp instruction: `width` bytes at each active lane's byte address.
struct warp_access {
  unsigned sectors = 0;          // distinct 32-B sectors touched
  unsigned dram_chunks = 0;      // distinct 64-B chunks touched
  unsigned requested_bytes = 0;  // distinct bytes the lanes asked for
};

inline warp_access model_warp(std::vector<std::uint64_t> lane_addresses, unsigned width) {
  // Sorted by start, a unit (byte, sector, chunk) is new exactly when it lies past the furthest
  // one any earlier lane reached: the lane that reached it started no later than this one.
  std::sort(lane_addresses.begin(), lane_addresses.end());
  warp_access acc;
  std::uint64_t bytes_to = 0, sectors_to = 0, chunks_to = 0;  // one past the furthest counted
  for (std::uint64_t a : lane_addresses) {
    const std::uint64_t end = a + width;
    acc.requested_bytes += static_cast<unsigned>(end - std::min(end, std::max(a, bytes_to)));
    bytes_to = std::max(bytes_to, end);
    const std::uint64_t s0 = a / kSectorBytes, s1 = (end - 1) / kSectorBytes + 1;
    acc.sectors += static_cast<unsigned>(s1 - std::min(s1, std::max(s0, sectors_to)));
    sectors_to = std::max(sectors_to, s1);
    const std::uint64_t c0 = a / kDramChunkBytes, c1 = (end - 1) / kDramChunkBytes + 1;
    acc.dram_chunks += static_cast<unsigned>(c1 - std::min(c1, std::max(c0, chunks_to)));
    chunks_to = std::max(chunks_to, c1);
  }
  return acc;
}

/// Warp instructions and the 32-B sectors they touch (L1's view, as Nsight Compute counts).
struct request_count {
  double requests = 0;
  double sectors = 0;
  double per_request() const { return requests > 0 ? sectors / requests : 0; }
};

/// What the model predicts for one access stream of a kernel (or several, combined).
struct traffic_prediction {
  request_count loads, stores;
  double dram_bytes = 0;    // bytes between L2 and DRAM
  double useful_bytes = 0;  // bytes the application asked for

  /// Sectors per request (docs/design.md): the loads', or the stores' of a kernel that only writes.
  double sectors_per_request() const {
    return loads.requests > 0 ? loads.per_request() : stores.per_request();
  }
  double efficiency() const { return dram_bytes > 0 ? useful_bytes / dram_bytes : 0; }
};

inline traffic_prediction operator+(traffic_prediction a, const traffic_prediction& b) {
  a.loads.requests += b.loads.requests;
  a.loads.sectors += b.loads.sectors;
  a.stores.requests += b.stores.requests;
  a.stores.sectors += b.stores.sectors;
  a.dram_bytes += b.dram_bytes;
  a.useful_bytes += b.useful_bytes;
  return a;
}

/// Marks bytes [a, a + width) in a map of sector -> bitmask of the sector's bytes.
inline void mark_bytes(std::map<std::uint64_t, std::uint32_t>& sector_bytes, std::uint64_t a,
                       unsigned width) {
  const std::uint64_t end = a + width;
  for (std::uint64_t s = a / kSectorBytes; s <= (end - 1) / kSectorBytes; ++s) {
    const std::uint64_t lo = std::max(a, s * kSectorBytes) - s * kSectorBytes;
    const std::uint64_t hi = std::min(end, (s + 1) * kSectorBytes) - s * kSectorBytes;
    const std::uint64_t bits = hi - lo == 32 ? 0xFFFFFFFFull : ((1ull << (hi - lo)) - 1) << lo;
    sector_bytes[s] |= static_cast<std::uint32_t>(bits);
  }
}

/// The first warps of the windows predict_traffic samples: the launch's first `window_warps`
/// warps and as many from its middle (one window when they coincide). A map that is costly to
/// evaluate everywhere (an index table on the GPU) need only be known there.
inline std::vector<std::size_t> model_windows(std::size_t threads,
                                              std::size_t window_warps = kModelWindowWarps) {
  const std::size_t warps = (threads + kWarpSize - 1) / kWarpSize;
  window_warps = std::min(window_warps, warps);
  if (window_warps == 0) return {};
  const std::size_t middle = (warps - window_warps) / 2;
  return middle == 0 ? std::vector<std::size_t>{0} : std::vector<std::size_t>{0, middle};
}

/// Predicts a whole launch of `threads` threads from windows of consecutive warps (exact for
/// the periodic patterns of the suite): sectors per request from each warp instruction; DRAM
/// bytes from the distinct chunks a window touches, i.e. a line shared by neighbouring warps
/// comes from DRAM once. A store that covers only part of a sector costs a sector read too.
template <class Map>
traffic_prediction predict_traffic(const Map& map, std::size_t threads, unsigned element_bytes,
                                   access_kind kind, std::size_t window_warps = kModelWindowWarps) {
  const std::size_t warps = (threads + kWarpSize - 1) / kWarpSize;
  window_warps = std::min(window_warps, warps);
  if (window_warps == 0) return {};
  const std::vector<std::size_t> starts = model_windows(threads, window_warps);
  const std::size_t windows = starts.size();

  traffic_prediction sampled;
  request_count& counts = kind == access_kind::kLoad ? sampled.loads : sampled.stores;
  for (std::size_t w = 0; w < windows; ++w) {
    std::map<std::uint64_t, std::uint32_t> sector_bytes;  // sector -> mask of bytes touched
    for (std::size_t warp = starts[w]; warp < starts[w] + window_warps; ++warp) {
      for (unsigned slot = 0; slot < map.slots(); ++slot) {
        std::vector<std::uint64_t> lanes;
        for (unsigned lane = 0; lane < kWarpSize; ++lane) {
          const std::size_t t = warp * kWarpSize + lane;
          if (t >= threads) break;
          const std::uint64_t a = std::uint64_t(map(t, slot)) * element_bytes;
          lanes.push_back(a);
          mark_bytes(sector_bytes, a, element_bytes);
        }
        const warp_access acc = model_warp(lanes, element_bytes);
        counts.requests += 1;
        counts.sectors += acc.sectors;
      }
    }
    std::set<std::uint64_t> chunks;
    double partial_sectors = 0;
    for (const auto& [sector, mask] : sector_bytes) {
      sampled.useful_bytes += __builtin_popcount(mask);
      chunks.insert(sector * kSectorBytes / kDramChunkBytes);
      partial_sectors += mask != 0xFFFFFFFFu;
    }
    // Loads bring whole 64-B chunks; stores write whole sectors, and a sector they cover only
    // in part is read first (32 B: what Nsight Compute measured for strided f32 stores on an
    // H200, where loads of the same spacing read 64 B).
    sampled.dram_bytes += kind == access_kind::kLoad
                              ? double(chunks.size()) * kDramChunkBytes
                              : double(sector_bytes.size() + partial_sectors) * kSectorBytes;
  }
  const double scale = double(warps) / double(window_warps * windows);
  counts.requests *= scale;
  counts.sectors *= scale;
  sampled.dram_bytes *= scale;
  sampled.useful_bytes *= scale;
  return sampled;
}

}  // namespace gmb
