#pragma once
// Bytes in flight (benchmarks/inflight.cu): the launch shapes the sweep visits and the
// Little's-law quantities each one sets. Host only, so the tests check the arithmetic.
#include <cstddef>
#include <vector>

namespace gmb {

/// Threads per block and the blocks an SM is allowed to hold at once (the residency the
/// family imposes with dynamic shared memory).
struct launch_shape {
  unsigned block = 0;
  unsigned blocks_per_sm = 0;
  unsigned threads_per_sm() const { return block * blocks_per_sm; }
};

/// Block sizes 32 ... 1024 and blocks per SM 1, 2, 4, ... in every combination an SM can hold
/// (at most `max_threads_per_sm` threads and `max_blocks_per_sm` blocks), smallest first.
inline std::vector<launch_shape> launch_shapes(unsigned max_threads_per_sm,
                                               unsigned max_blocks_per_sm) {
  std::vector<launch_shape> shapes;
  for (unsigned block = 32; block <= 1024; block *= 2) {
    for (unsigned per_sm = 1; per_sm <= max_blocks_per_sm; per_sm *= 2) {
      if (block * per_sm <= max_threads_per_sm) shapes.push_back({block, per_sm});
    }
  }
  return shapes;
}

/// Load bytes an SM keeps in flight: every resident thread's `loads` independent loads of
/// `word_bytes`, all issued before the first is used.
inline double bytes_in_flight_per_sm(const launch_shape& shape, unsigned loads,
                                     std::size_t word_bytes) {
  return double(shape.threads_per_sm()) * loads * double(word_bytes);
}

/// How long one block occupies one of an SM's block slots, from a launch of `blocks` blocks
/// that took `seconds` on `sms` SMs holding `blocks_per_sm` each: every slot turned over
/// blocks / (sms * blocks_per_sm) times.
inline double block_slot_ns(double seconds, std::size_t blocks, unsigned sms,
                            unsigned blocks_per_sm) {
  return seconds * 1e9 * sms * blocks_per_sm / double(blocks);
}

}  // namespace gmb
