#pragma once
// A pointer chase's chain on the device (kernels/latency.cuh) and what every chasing case does
// with it: build it, walk it, check where each lane ended, read the in-kernel clocks. The
// latency and tlb families share it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "benchmarks/harness/harness.cuh"
#include "gmb/chase.hpp"
#include "gmb/scoped_device.hpp"
#include "gmb/sizing.hpp"
#include "kernels/latency.cuh"

namespace gmb {

inline constexpr unsigned kStepsPerLaunch = 2048;  // ~0.7 ms per launch at DRAM latency

inline unsigned log2_exact(std::size_t n) {
  unsigned bits = 0;
  while ((std::size_t(1) << bits) < n) ++bits;
  return bits;
}

/// A chain of `set_bytes` and the lanes walking it: built by prepare, checked by verify (every
/// lane must end on the line the host computes), read by measured (the clocks of every launch
/// since prepare).
struct chase_chain {
  std::size_t n;          // slots on the cycle (a power of two)
  std::uint32_t spacing;  // lines per slot: 1, or a page's lines (one line per page)
  hash_permutation perm;
  unsigned lanes;
  device_buffer lines, position, record;
  std::size_t walked = 0;  // steps per lane since the chain was built
  int home = -1;           // the GPU the lines live on: -1 this one, else a peer's (peer/chase)

  chase_chain(std::size_t slots, std::uint32_t spacing, unsigned lanes)
      : n(slots), spacing(spacing), perm{log2_exact(slots), 0x5EEDu}, lanes(lanes) {}

  std::size_t bytes() const { return n * spacing * kChaseLineBytes; }

  void prepare(environment& e) {
    if (record.bytes() == 0) {  // all three or none: a failed allocation leaves none
      device_buffer l, p(32 * sizeof(std::uint64_t));
      if (home < 0) {
        l = device_buffer(bytes());
      } else {
        const scoped_device there(home);
        l = device_buffer(bytes());
      }
      record = device_buffer(round_up(sizeof(chase_record), 16));
      lines = std::move(l);
      position = std::move(p);
    }
    const unsigned grid = static_cast<unsigned>(
        std::min<std::size_t>((n + 255) / 256, std::size_t(e.device().sms) * 8));
    build_chase<<<grid, 256, 0, e.stream()>>>(lines.data<std::uint64_t>(), perm, n, spacing);
    reset_chase<<<1, lanes, 0, e.stream()>>>(lines.data<const std::uint64_t>(),
                                             position.data<std::uint64_t>(), perm, n, spacing);
    GMB_CUDA_CHECK(cudaMemsetAsync(record.data<void>(), 0, sizeof(chase_record), e.stream()));
    GMB_CUDA_CHECK(cudaGetLastError());
    walked = 0;
  }

  std::string verify(environment& e) const {
    const auto words = position.copy_words_to_host(0, 2 * lanes, e.stream());
    const auto base = reinterpret_cast<std::uint64_t>(lines.data<void>());
    for (unsigned lane = 0; lane < lanes; ++lane) {
      const std::uint64_t address = words[2 * lane] | std::uint64_t(words[2 * lane + 1]) << 32;
      const std::uint32_t expected =
          chase_line(perm, n, chase_start(lane, lanes, n) + walked, spacing);
      if (address != base + std::uint64_t(expected) * kChaseLineBytes) {
        const long long line =
            (static_cast<long long>(address - base)) / static_cast<long long>(kChaseLineBytes);
        return "lane " + std::to_string(lane) + " ended on line " + std::to_string(line) +
               " after " + std::to_string(walked) + " steps, expected line " +
               std::to_string(expected);
      }
    }
    const chase_record r = recorded(e);
    if (r.cycles == 0 || r.ns == 0 || r.launches == 0) return "the chase recorded no time";
    return "";
  }

  /// Per step, over every launch since prepare.
  measurements measured(environment& e) const {
    const chase_record r = recorded(e);
    const double steps = double(r.launches) * kStepsPerLaunch;
    return {{"latency_ns", r.ns / steps},
            {"latency_cycles", r.cycles / steps},
            {"sm_clock_mhz", 1e3 * double(r.cycles) / double(r.ns)}};
  }

  chase_record recorded(environment& e) const {
    return record.copy_record_to_host<chase_record>(e.stream());
  }

  void release() {
    int here = 0;  // a peer's lines freed with it current; never throws (runs in destructors)
    if (home >= 0 && lines.bytes() != 0 && cudaGetDevice(&here) == cudaSuccess &&
        cudaSetDevice(home) == cudaSuccess) {
      lines = device_buffer();
      cudaSetDevice(here);
    }
    lines = device_buffer();
    position = device_buffer();
    record = device_buffer();
  }

  /// One launch of the chase by `lanes` lanes: `warm_steps` untimed, kStepsPerLaunch timed.
  template <cache_op Load>
  void launch(environment& e, unsigned warm_steps) {
    chase<Load><<<1, lanes, 0, e.stream()>>>(position.data<std::uint64_t>(), warm_steps,
                                             kStepsPerLaunch, record.data<chase_record>());
    walked += warm_steps + kStepsPerLaunch;
  }

  /// prepare, verify, measured and release of a case walking this chain (its launch is its
  /// own), and its bytes: 8 per load (an address).
  static void describe(const std::shared_ptr<chase_chain>& s, bench_case& c) {
    c.prepare = [s](environment& e) { s->prepare(e); };
    c.verify = [s](environment& e) { return s->verify(e); };
    c.measured = [s](environment& e) { return s->measured(e); };
    c.release = [s](environment&) { s->release(); };
    c.bytes_read = double(s->lanes) * kStepsPerLaunch * sizeof(std::uint64_t);
    c.launches_per_iteration = 1;
  }
};

}  // namespace gmb
