#pragma once
// The loaded chase's roles by SM (kernels/latency.cuh): the chase on the lowest SM id, K
// streams spread evenly over the others in id order, the rest idle. Chosen by SM, not by block
// index, so that every launch of a case loads the same SMs, spread over the whole GPU (the
// block scheduler need not place block b on the same SM twice).
#include <algorithm>
#include <cstddef>
#include <vector>

namespace gmb {

inline constexpr unsigned kIdleRole = 0;
inline constexpr unsigned kChaseRole = 1;
inline constexpr unsigned kFirstStreamRole = 2;  // stream i has role kFirstStreamRole + i

/// roles[id] for every SM id in `sm_ids` (the ids present; any order), `slots` entries: the
/// chase, `streams` streams (at most all other SMs) numbered in id order, idle.
inline std::vector<unsigned> loaded_roles(std::vector<unsigned> sm_ids, unsigned streams,
                                          std::size_t slots) {
  std::vector<unsigned> roles(slots, kIdleRole);
  std::sort(sm_ids.begin(), sm_ids.end());
  if (sm_ids.empty()) return roles;
  roles[sm_ids[0]] = kChaseRole;
  const std::size_t others = sm_ids.size() - 1;
  unsigned next = 0;
  for (std::size_t i = 0; i < others; ++i) {
    // SM i of the others streams where floor(i * K / others) steps: K of them, evenly apart.
    if ((i + 1) * streams / others > i * streams / others) {
      roles[sm_ids[i + 1]] = kFirstStreamRole + next++;
    }
  }
  return roles;
}

}  // namespace gmb
