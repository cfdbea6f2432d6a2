#pragma once
// The ids of the GPU's SMs (%smid need not be contiguous), found by one block on every SM
// (kernels/latency.cuh: mark_sm): the loaded chase gives SMs their roles by them, the L2
// partition probe its walks' order.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/builders/residency.cuh"
#include "benchmarks/harness/harness.cuh"
#include "kernels/latency.cuh"

namespace gmb {

inline constexpr unsigned kMarkBlock = 1024;

/// Every SM's id, ascending; `scratch` (at least kSmIdSlots + 1 words on the device) is
/// overwritten. Throws where the GPU cannot hold one block per SM or fewer ids turn up than
/// it has SMs.
inline std::vector<unsigned> present_sm_ids(environment& e, device_buffer& scratch) {
  if (scratch.bytes() < (kSmIdSlots + 1) * sizeof(unsigned)) {
    throw std::logic_error("present_sm_ids: the scratch buffer is too small");
  }
  const std::optional<std::size_t> smem = residency_smem(mark_sm, kMarkBlock, 1);
  if (!smem) throw std::runtime_error("cannot launch one block per SM to find the SM ids");
  GMB_CUDA_CHECK(cudaMemsetAsync(scratch.data<void>(), 0, scratch.bytes(), e.stream()));
  // The word past the table counts the blocks that arrived.
  mark_sm<<<e.device().sms, kMarkBlock, *smem, e.stream()>>>(scratch.data<unsigned>(),
                                                             scratch.data<unsigned>() + kSmIdSlots);
  GMB_CUDA_CHECK(cudaGetLastError());
  const auto present = scratch.copy_words_to_host(0, kSmIdSlots, e.stream());
  std::vector<unsigned> ids;
  for (unsigned id = 0; id < kSmIdSlots; ++id) {
    if (present[id] != 0) ids.push_back(id);
  }
  if (ids.size() != std::size_t(e.device().sms)) {
    throw std::runtime_error("found " + std::to_string(ids.size()) + " SM ids, expected " +
                             std::to_string(e.device().sms));
  }
  return ids;
}

}  // namespace gmb
