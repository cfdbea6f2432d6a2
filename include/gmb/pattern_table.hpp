#pragma once
// The pattern family's index table as the traffic model sees it: the expression evaluated on
// the GPU (table[t * K + k], the element thread t touches in slot k) is copied to the host for
// the warps the model samples (model_windows), and read there as an index map, exactly as the
// built-in maps are. Also what a person reads about a warp: the step between lanes, the
// distinct elements per request, the alignment.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gmb/traffic_model.hpp"

namespace gmb {

/// Elements of `word_bytes` are loaded in pieces of `align` bytes (the struct's alignment, at
/// most 16): `parts` instructions per element. The maps below count in those pieces.
struct word_shape {
  unsigned word_bytes = 4;
  unsigned align = 4;
  unsigned parts() const { return word_bytes / align; }
};

/// The alignment the compiler gives a structure of `bytes` (a multiple of 4): the largest
/// power of two dividing it, at most 16.
inline unsigned word_alignment(unsigned bytes) {
  unsigned a = 4;
  while (a < 16 && bytes % (a * 2) == 0) a *= 2;
  return a;
}

/// Slots of the sampled warps: for each window, its first thread and table[t * k + s].
struct sampled_table {
  unsigned k = 1;
  std::vector<std::pair<std::size_t, std::vector<std::uint32_t>>> windows;

  std::uint32_t at(std::size_t thread, unsigned slot) const {
    for (const auto& [first, values] : windows) {
      if (thread >= first && (thread - first) * k + slot < values.size()) {
        return values[(thread - first) * k + slot];
      }
    }
    throw std::out_of_range("pattern table: thread outside the sampled windows");
  }
};

/// The slots of the warps predict_traffic samples, read through `fetch(first_slot, count)`
/// (a copy from the GPU's table, or a map evaluated on the host).
template <class Fetch>
sampled_table sample_windows(std::size_t threads, unsigned k, Fetch fetch) {
  sampled_table s;
  s.k = k;
  for (std::size_t warp : model_windows(threads)) {
    const std::size_t first = warp * kWarpSize;
    const std::size_t count = std::min(threads - first, kModelWindowWarps * kWarpSize) * k;
    s.windows.emplace_back(first, fetch(first * k, count));
  }
  return s;
}

/// The table as an index map in load pieces (traffic_model.hpp's predict_traffic).
struct sampled_table_map {
  const sampled_table* table;
  word_shape word;
  unsigned slots() const { return table->k * word.parts(); }
  std::size_t operator()(std::size_t thread, unsigned slot) const {
    const unsigned parts = word.parts();
    return std::size_t(table->at(thread, slot / parts)) * parts + slot % parts;
  }
};

/// The coalesced side of a gather or scatter (the kernel's gmb_coalesced), in load pieces.
struct coalesced_slots_map {
  unsigned block;
  unsigned k;
  word_shape word;
  unsigned slots() const { return k * word.parts(); }
  std::size_t operator()(std::size_t t, unsigned slot) const {
    const unsigned parts = word.parts();
    const std::size_t e =
        t / block * (std::size_t(block) * k) + std::size_t(slot / parts) * block + t % block;
    return e * parts + slot % parts;
  }
};

/// What one warp instruction of the pattern does, averaged over the sampled requests.
struct warp_shape {
  /// Elements between consecutive lanes when every sampled request has one constant step
  /// (0: all lanes on one element); NaN when the step varies.
  double lane_step = std::numeric_limits<double>::quiet_NaN();
  double distinct_per_request = 0;  // distinct elements the 32 lanes touch
  double lines_per_request = 0;     // distinct 128-B lines their words touch (the L1's cycles)
  /// Of the requests whose lanes take consecutive elements (step 1 or -1), the fraction that
  /// starts on a 128-B boundary; NaN when there are none.
  double aligned_fraction = std::numeric_limits<double>::quiet_NaN();
};

inline warp_shape describe_warps(const sampled_table& table, std::size_t threads,
                                 unsigned word_bytes) {
  warp_shape shape;
  bool constant = true, first = true;
  long long step = 0;
  double requests = 0, distinct = 0, lines = 0, contiguous = 0, aligned = 0;
  for (const auto& [first_thread, values] : table.windows) {
    const std::size_t window_threads = values.size() / table.k;
    for (std::size_t w = 0; w * kWarpSize < window_threads; ++w) {
      for (unsigned s = 0; s < table.k; ++s) {
        std::vector<long long> lanes;
        for (unsigned l = 0; l < kWarpSize; ++l) {
          const std::size_t t = first_thread + w * kWarpSize + l;
          if (t >= threads || (t - first_thread) >= window_threads) break;
          lanes.push_back(table.at(t, s));
        }
        if (lanes.empty()) continue;
        requests += 1;
        distinct += double(std::set<long long>(lanes.begin(), lanes.end()).size());
        std::set<long long> touched;  // each word's lines, from its first byte's to its last's
        for (const long long e : lanes) {
          for (long long l = e * word_bytes / 128; l <= ((e + 1) * word_bytes - 1) / 128; ++l) {
            touched.insert(l);
          }
        }
        lines += double(touched.size());
        bool same = true;
        for (std::size_t l = 1; l < lanes.size(); ++l) {
          const long long d = lanes[l] - lanes[l - 1];
          if (first) step = d, first = false;
          same = same && d == step;
        }
        constant = constant && same;
        const long long lo = std::min(lanes.front(), lanes.back());
        if (same && lanes.size() > 1 && (step == 1 || step == -1)) {
          contiguous += 1;
          aligned += (lo * word_bytes) % 128 == 0;
        }
      }
    }
  }
  if (requests == 0) return shape;
  if (constant && !first) shape.lane_step = double(step);
  if (constant && first) shape.lane_step = 0;  // one lane per request: no step to see
  shape.distinct_per_request = distinct / requests;
  shape.lines_per_request = lines / requests;
  if (contiguous > 0) shape.aligned_fraction = aligned / contiguous;
  return shape;
}

}  // namespace gmb
