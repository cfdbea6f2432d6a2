#pragma once
// What DRAM reads for a launch whose loads re-use lines far apart, which the traffic model's
// windows of 64 warps do not see (traffic_model.hpp): the launch's accesses replayed, in the
// order the GPU makes them, through an L2 that keeps the lines last used.
//
// - Order: thread order, a block's threads at once, each block late by a share of the threads
//   in flight (a block starts when a slot frees, then waits on its loads: its accesses land
//   anywhere within one window of resident threads after its place), a fixed hash per block.
// - The L2: least recently used 128-B lines of 32-B sectors; a load that misses reads its
//   64-B granule (kDramChunkBytes), a store marks its sector. It holds two thirds of its bytes
//   for such a set: it is two partitions, and a line read by an SM of the far half is held in
//   the near half too (model/l2_partition: once an SM has read a line, it is near it), so a
//   line read from anywhere takes 1.5 places on average.
// Checked against Nsight Compute's DRAM reads on an H200 and an H100 (tests/host/
// l2_replay_test.cpp, docs/pattern.md): pairs of loads of one granule far apart, hashes, the
// transpose index's 2-MiB set.
//
// A large launch is replayed on a sample of its lines (a line hashed in or out, the L2 scaled
// down alike): about kReplaySampledAccesses accesses. Past kReplayMostSlots slots, or when a
// few hot lines keep more than kReplayMostTrace accesses, nothing is replayed (`replayed`).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "gmb/hash64.hpp"
#include "gmb/traffic_model.hpp"

namespace gmb {

inline constexpr unsigned kL2LineBytes = 128;
inline constexpr double kL2HeldShare = 2.0 / 3.0;  // of the L2's bytes, for lines read anywhere
/// The page the address translation maps (cudaMalloc's 2 MiB on Hopper: tlb/chase/step:2097152).
inline constexpr std::uint64_t kTranslationPageBytes = std::uint64_t(2) << 20;
inline constexpr std::size_t kReplaySampledAccesses = std::size_t(1) << 22;
/// Bounds of the host's work: the slots it reads (a table of 1 GiB) and the accesses it keeps
/// (a few lines every warp touches, which the sample keeps or drops whole).
inline constexpr std::size_t kReplayMostSlots = std::size_t(1) << 28;
inline constexpr std::size_t kReplayMostTrace = std::size_t(1) << 24;
inline constexpr std::uint64_t kNoAccess = ~std::uint64_t(0);

/// The launch as the replay needs it.
struct l2_replay_launch {
  std::size_t threads = 0;
  unsigned k = 1;              // slots per thread
  unsigned block = 256;        // threads per block
  std::size_t in_flight = 0;   // threads resident at once (blocks per SM x block x SMs)
  std::size_t l2_bytes = 0;    // the device's
};

struct l2_replay_result {
  bool replayed = false;       // false: a launch past the replay's bounds (below), nothing known
  double set_bytes = 0;        // distinct 64-B granules the loads touch, x 64
  double set_pages = 0;        // distinct pages (kTranslationPageBytes) those granules lie on
  double load_dram_bytes = 0;  // what DRAM reads for the loads
};

namespace detail {
/// An LRU of 128-B lines, each with its valid 32-B sectors.
class lru_lines {
 public:
  explicit lru_lines(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {
    where_.reserve(capacity_ * 2);
  }
  /// The sector mask of `line`, made most recent (inserted empty, evicting the least recent).
  unsigned& touch(std::uint64_t line) {
    auto it = where_.find(line);
    if (it != where_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return order_.front().second;
    }
    if (where_.size() >= capacity_) {
      where_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(line, 0u);
    where_.emplace(line, order_.begin());
    return order_.front().second;
  }

 private:
  std::size_t capacity_;
  std::list<std::pair<std::uint64_t, unsigned>> order_;
  std::unordered_map<std::uint64_t, std::list<std::pair<std::uint64_t, unsigned>>::iterator>
      where_;
};
}  // namespace detail

/// Replays a launch whose slot s of thread t loads the `word_bytes` element e that
/// `fetch(first_slot, count)` names (the table, table[t * k + s], a chunk at a time), then
/// stores `word_bytes` at byte `store(t, s, e)` (kNoAccess: none; never in the loads' array).
template <class Fetch, class Store>
l2_replay_result replay_l2(const l2_replay_launch& launch, unsigned word_bytes, Fetch fetch,
                           Store store, std::size_t most_accesses = kReplaySampledAccesses) {
  struct access {
    double time;
    std::uint64_t sector;  // byte address / 32, the top bit set for a store
  };
  constexpr std::uint64_t kStoreBit = std::uint64_t(1) << 63;
  const std::uint64_t slots_in_all = std::uint64_t(launch.threads) * launch.k;
  if (slots_in_all > kReplayMostSlots || launch.k == 0) return {};
  // Sectors a word may span, loads and stores: the sample's share of them is most_accesses.
  const std::uint64_t sectors_per_word = (word_bytes + kSectorBytes - 1) / kSectorBytes + 1;
  const std::uint64_t accesses = slots_in_all * sectors_per_word * 2;
  const std::uint64_t sample =
      std::max<std::uint64_t>(1, (accesses + most_accesses - 1) / most_accesses);
  const auto sampled = [&](std::uint64_t line) { return mix64(line) % sample == 0; };
  const double window = double(std::max<std::size_t>(launch.in_flight, 1));

  // The set, exactly: a bit per granule of the loads' array (16 MiB for 8 GiB).
  std::vector<std::uint64_t> touched;
  double set_granules = 0;
  const auto mark = [&](std::uint64_t byte) {
    for (std::uint64_t g = byte / kDramChunkBytes; g <= (byte + word_bytes - 1) / kDramChunkBytes;
         ++g) {
      if (g / 64 >= touched.size()) touched.resize(g / 64 + 1, 0);
      std::uint64_t& bits = touched[g / 64];
      set_granules += (bits >> (g % 64) & 1) == 0;
      bits |= std::uint64_t(1) << (g % 64);
    }
  };
  std::vector<access> trace;
  // A sector a warp's slot touched for the lane before is the same request: kept once.
  std::vector<std::uint64_t> last(std::size_t(launch.k) * 2, kNoAccess);
  const auto add = [&](double time, std::uint64_t byte, bool is_store, unsigned slot) {
    std::uint64_t& previous = last[slot * 2 + (is_store ? 1 : 0)];
    for (std::uint64_t s = byte / kSectorBytes; s <= (byte + word_bytes - 1) / kSectorBytes; ++s) {
      if (s != previous && sampled(s * kSectorBytes / kL2LineBytes)) {
        trace.push_back({time, is_store ? (s | kStoreBit) : s});
      }
    }
    previous = (byte + word_bytes - 1) / kSectorBytes;
  };
  // Threads whose slots are copied at once: 4M slots.
  const std::size_t chunk = std::max<std::size_t>(1, (std::size_t(1) << 22) / launch.k);
  for (std::size_t first = 0; first < launch.threads; first += chunk) {
    const std::size_t count = std::min(chunk, launch.threads - first);
    const std::vector<std::uint32_t> slots = fetch(first * launch.k, count * launch.k);
    for (std::size_t t = first; t < first + count; ++t) {
      if (t % kWarpSize == 0) std::fill(last.begin(), last.end(), kNoAccess);
      if (trace.size() > kReplayMostTrace) return {};
      const std::uint64_t b = t / launch.block;
      const double late = double(mix64(b) >> 11) / double(std::uint64_t(1) << 53);
      const double time = double(t) + late * window;
      for (unsigned s = 0; s < launch.k; ++s) {
        const std::uint64_t byte = std::uint64_t(slots[(t - first) * launch.k + s]) * word_bytes;
        mark(byte);
        add(time, byte, false, s);
      }
      for (unsigned s = 0; s < launch.k; ++s) {
        const std::uint64_t e = slots[(t - first) * launch.k + s];
        if (const std::uint64_t a = store(t, s, e); a != kNoAccess) add(time + 0.5, a, true, s);
      }
    }
  }
  std::stable_sort(trace.begin(), trace.end(),
                   [](const access& x, const access& y) { return x.time < y.time; });

  const double lines = double(launch.l2_bytes) * kL2HeldShare / kL2LineBytes;
  detail::lru_lines l2(static_cast<std::size_t>(lines / double(sample)));
  double fills = 0;  // granules the sample reads
  const unsigned sectors_per_granule = kDramChunkBytes / kSectorBytes;
  for (const access& a : trace) {
    const bool is_store = (a.sector & kStoreBit) != 0;
    const std::uint64_t sector = a.sector & ~kStoreBit;
    const std::uint64_t line = sector * kSectorBytes / kL2LineBytes;
    const unsigned in_line = unsigned(sector % (kL2LineBytes / kSectorBytes));
    unsigned& valid = l2.touch(line);
    if (valid & (1u << in_line)) continue;
    if (is_store) {
      valid |= 1u << in_line;
      continue;
    }
    const unsigned granule_first = in_line / sectors_per_granule * sectors_per_granule;
    valid |= ((1u << sectors_per_granule) - 1) << granule_first;
    fills += 1;
  }
  double sampled_set = 0;  // the set's granules whose lines the sample holds
  double pages = 0;
  const std::uint64_t words_per_page = kTranslationPageBytes / kDramChunkBytes / 64;
  for (std::size_t w = 0; w < touched.size(); ++w) {
    if (w % words_per_page == 0) {  // a page with any granule of the set
      pages += std::any_of(touched.begin() + std::ptrdiff_t(w),
                           touched.begin() + std::ptrdiff_t(std::min<std::size_t>(
                                                 touched.size(), w + words_per_page)),
                           [](std::uint64_t bits) { return bits != 0; });
    }
    for (std::uint64_t bits = touched[w]; bits != 0; bits &= bits - 1) {
      const std::uint64_t g = w * 64 + std::uint64_t(__builtin_ctzll(bits));
      sampled_set += sampled(g * kDramChunkBytes / kL2LineBytes);
    }
  }
  // The sample's reads per granule of the set, times the exact set: a set of a few granules
  // is counted exactly whatever the sample holds of it.
  l2_replay_result out;
  out.set_bytes = set_granules * kDramChunkBytes;
  out.set_pages = pages;
  // A cold L2 reads every granule at least once (a sample may hold none of a small set).
  out.replayed = true;
  out.load_dram_bytes =
      std::max(out.set_bytes, sampled_set > 0 ? out.set_bytes * fills / sampled_set : 0.0);
  return out;
}

}  // namespace gmb
