// Latency family (kernels/latency.cuh): pointer chases through working sets of 16 KiB (L1) to
// 16 GiB (DRAM), by one thread (lanes:1, nothing else in flight) and by one warp (lanes:32,
// 32 chains at once). Quick: 16K, 128K, 1M, 4M, 256M, 2G, 16G; full: every power of two from
// 4 KiB to the largest that fits (at most 64 GiB). 16 and 32 MiB, past what one L2 partition
// holds, move between runs (16 MiB, one thread: 143 to 297 ns on one H200): full sweep only.
// Sets of at most one launch's steps (256 KiB) are walked once untimed in each launch first:
// the L1 keeps nothing across launches. Counters, from the last launch's in-kernel clocks:
// latency_ns and latency_cycles per load, sm_clock_mhz = cycles / ns (the clock the run had,
// not the maximum). Sets within the L2 run hot; larger ones are flushed before every timed
// iteration (building the chain leaves lines in the L2). Every run is verified: each lane must
// end on the line the host computes.
// Names: latency/chase/ws:16384/lanes:1 (ws in bytes).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "gmb/naming.hpp"
#include "gmb/sizing.hpp"
#include "kernels/latency.cuh"

namespace gmb {

namespace {

constexpr unsigned kStepsPerLaunch = 2048;  // ~1.5 ms per launch at DRAM latency
constexpr std::size_t kMemoryReserve = 1024 * kMiB;
constexpr std::size_t kLargestSet = std::size_t(64) << 30;

unsigned log2_exact(std::size_t n) {
  unsigned bits = 0;
  while ((std::size_t(1) << bits) < n) ++bits;
  return bits;
}

bench_case chase_case(environment& env, std::size_t set_bytes, unsigned lanes) {
  const std::size_t n = set_bytes / kChaseLineBytes;
  const hash_permutation perm{log2_exact(n), 0x5EEDu};
  struct state {
    device_buffer lines, position, record;
    std::size_t launches = 0;  // since the chain was built: where every lane must be
  };
  auto s = std::make_shared<state>();

  bench_case c;
  c.name = bench_name("latency", "chase",
                      {{"ws", static_cast<long long>(set_bytes)}, {"lanes", lanes}});
  c.prepare = [=](environment& e) {
    if (s->record.bytes() == 0) {  // all three or none: a failed allocation leaves none
      device_buffer lines(set_bytes), position(32 * sizeof(std::uint32_t));
      s->record = device_buffer(round_up(sizeof(chase_record), 16));
      s->lines = std::move(lines);
      s->position = std::move(position);
    }
    const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(
        (n + 255) / 256, std::size_t(e.device().sms) * 8));
    build_chase<<<grid, 256, 0, e.stream()>>>(s->lines.data<std::uint32_t>(), perm, n);
    reset_chase<<<1, lanes, 0, e.stream()>>>(s->position.data<std::uint32_t>(), perm, n);
    s->record.poison(e.stream());
    GMB_CUDA_CHECK(cudaGetLastError());
    s->launches = 0;
  };
  // Sets up to one launch's steps could sit in the L1: walked whole before the clock starts.
  const unsigned warm_steps = n <= kStepsPerLaunch ? static_cast<unsigned>(n) : 0;
  c.launch = [=](environment& e) {
    chase<cache_op::kDefault><<<1, lanes, 0, e.stream()>>>(
        s->lines.data<std::uint32_t>(), s->position.data<std::uint32_t>(), warm_steps,
        kStepsPerLaunch, s->record.data<chase_record>());
    ++s->launches;
  };
  c.verify = [=](environment& e) -> std::string {
    const auto got = s->position.copy_words_to_host(0, lanes, e.stream());
    const std::size_t walked = s->launches * (warm_steps + kStepsPerLaunch);
    for (unsigned lane = 0; lane < lanes; ++lane) {
      const std::uint32_t expected = chase_line(perm, n, chase_start(lane, lanes, n) + walked);
      if (got[lane] != expected) {
        return "lane " + std::to_string(lane) + " ended on line " + std::to_string(got[lane]) +
               " after " + std::to_string(walked) + " steps, expected line " +
               std::to_string(expected);
      }
    }
    const auto rec = s->record.copy_words_to_host(0, 4, e.stream());
    if ((rec[0] == 0 && rec[1] == 0) || (rec[2] == 0 && rec[3] == 0) ||
        rec[0] == 0xFFFFFFFFu) {
      return "the chase recorded no time";
    }
    return "";
  };
  c.measured = [=](environment& e) -> std::vector<std::pair<std::string, double>> {
    const auto w = s->record.copy_words_to_host(0, 4, e.stream());
    const double cycles = double(w[0]) + 4294967296.0 * w[1];
    const double ns = double(w[2]) + 4294967296.0 * w[3];
    return {{"latency_ns", ns / kStepsPerLaunch},
            {"latency_cycles", cycles / kStepsPerLaunch},
            {"sm_clock_mhz", 1e3 * cycles / ns}};
  };
  c.release = [s](environment&) { *s = state{}; };
  c.bytes_read = double(lanes) * kStepsPerLaunch * sizeof(std::uint32_t);
  c.cold_l2 = set_bytes > env.device().l2_bytes;
  c.launches_per_iteration = 1;
  return c;
}

}  // namespace

std::vector<bench_case> latency_cases(environment& env, sweep s) {
  std::size_t free_bytes = 0, total_bytes = 0;
  GMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t budget = free_bytes > kMemoryReserve ? free_bytes - kMemoryReserve : 0;
  std::vector<std::size_t> sets;
  if (s == sweep::kQuick) {
    for (std::size_t kib : {16, 128, 1024, 4 * 1024, 256 * 1024, 2048 * 1024, 16384 * 1024}) {
      sets.push_back(kib * 1024);
    }
  } else {
    for (std::size_t b = 4096; b <= kLargestSet; b *= 2) sets.push_back(b);
  }
  std::vector<bench_case> cases;
  for (std::size_t bytes : sets) {
    if (bytes > budget) continue;  // the chain is a buffer of its own
    for (unsigned lanes : {1u, 32u}) cases.push_back(chase_case(env, bytes, lanes));
  }
  return cases;
}

}  // namespace gmb
