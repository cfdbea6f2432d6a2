#pragma once
// The screening sweep (--gmb_sweep=screen): the few benchmarks of the quick sweep that expose a
// bad GPU, for runs on every GPU of a fleet (scripts/gmb fleet): the best coalesced read, write
// and copy and the driver's copy and fill (the memory's bandwidth), a strided read and a random
// gather (the memory system under scattered sectors), an L2-resident read (the L2) and the
// DRAM pointer chase (latency, with the TLB in reach); and a peer copy where there is a peer.
// One flavor takes seconds.
#include <algorithm>
#include <array>
#include <string_view>

namespace gmb {

inline constexpr std::array<std::string_view, 9> kScreenBenchmarks = {
    "read/f32x4/ilp:1/grid:full",
    "write/f32x4/ilp:1/grid:full",
    "copy/f32x4/ilp:1/grid:full",
    "ref/memcpy_d2d",
    "ref/memset",
    "stride/f32/read/s:32",
    "gather/random",
    "cache/read/ws:16777216",
    "latency/chase/ws:2147483648/lanes:1",
};

/// And where the GPU has a peer-access partner (the peer family exists): the link, by the SMs
/// and by the copy engine.
inline constexpr std::array<std::string_view, 2> kScreenPeerBenchmarks = {
    "peer/copy/f32x4/ilp:4/dir:pull",
    "ref/memcpy_peer/dir:pull",
};

inline bool in_screen(std::string_view name) {
  auto listed = [name](const auto& list) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  return listed(kScreenBenchmarks) || listed(kScreenPeerBenchmarks);
}

}  // namespace gmb
