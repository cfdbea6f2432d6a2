// Latency family (kernels/latency.cuh): pointer chases through working sets of 16 KiB (L1) to
// 16 GiB (DRAM), by one thread (lanes:1, nothing else in flight) and by one warp (lanes:32,
// 32 chains at once). Quick: 16K, 128K, 1M, 4M, 256M, 2G, 16G; full: every power of two from
// 4 KiB to the largest that fits (at most 64 GiB). 8 to 32 MiB take longer in their first
// repetition than in every later one (one thread, two H200s: 232 to 263 ns, then 158 to 161;
// results/nvidia-h200/20261202-074929-l2-partition): full sweep only.
// Sets of at most one launch's steps (256 KiB) are walked once untimed in each launch first:
// the L1 keeps nothing across launches. Counters, from the in-kernel clocks of every launch
// since the case's preparation: latency_ns and latency_cycles per load, sm_clock_mhz = cycles
// / ns (the clock the run had, not the maximum). Sets within the L2 run hot; larger ones are
// flushed before every timed iteration (building the chain leaves lines in the L2). Every run
// is verified: each lane must end on the line the host computes.
// Loaded latency (latency/loaded/load:read/sms:K), as Intel's Memory Latency Checker does for
// CPUs: one thread chases a chain of 512 MiB (at least 8x the L2, so DRAM) on an SM of its own
// while K other SMs stream reads, or copies (load:copy: DRAM then turns between reads and
// writes), or (the model's calibration only) reads with one byte written per four read
// (load:mix, a fifth of the traffic written, as a structure's four fields read and one word
// stored), one 1024-thread block each, two 16-B loads in flight per thread, from K = 0 (idle)
// to every other SM, the same K SMs in every launch, spread evenly (gmb/loaded_roles.hpp);
// load_gbs is what the streams moved (read + written) while they streamed, over every timed
// launch (their lifetimes span the timed chase). Quick: K = 0, 16, 32, 48, 64, 96 and all;
// full: every 8th K.
// The streams check every element they read; copies and mixes, the first tile each stream wrote
// (a mix: its first half).
// Names: latency/chase/ws:16384/lanes:1 (ws in bytes), latency/loaded/load:read/sms:32.
// The model family's chases and loaded chases (benchmarks/model_probes.cu) are made here:
// model/chase/ws:W/lanes:L, model/loaded/load:read|mix|copy/sms:K.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/builders/chase_chain.cuh"
#include "benchmarks/builders/residency.cuh"
#include "benchmarks/builders/sm_ids.cuh"
#include "benchmarks/families.hpp"
#include "gmb/loaded_roles.hpp"
#include "gmb/naming.hpp"
#include "gmb/sizing.hpp"
#include "kernels/latency.cuh"

namespace gmb {

namespace {

constexpr std::size_t kMemoryReserve = 1024 * kMiB;
constexpr std::size_t kLargestSet = std::size_t(64) << 30;

/// Bytes a chain may take: what the GPU has free, less a reserve for the run's own buffers.
std::size_t chain_budget() {
  std::size_t free_bytes = 0, total_bytes = 0;
  GMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes > kMemoryReserve ? free_bytes - kMemoryReserve : 0;
}

/// latency/chase/ws:W/lanes:L, or model/chase/... for the model's calibration (`calibration`).
bench_case chase_case(environment& env, std::size_t set_bytes, unsigned lanes,
                      bool calibration = false) {
  auto s = std::make_shared<chase_chain>(set_bytes / kChaseLineBytes, 1, lanes);
  const std::size_t n = s->n;
  const std::vector<name_param> params{{"ws", static_cast<long long>(set_bytes)}, {"lanes", lanes}};
  bench_case c;
  c.name =
      calibration ? bench_name("model", "chase", params) : bench_name("latency", "chase", params);
  chase_chain::describe(s, c);
  // Sets up to one launch's steps could sit in the L1: walked whole before the clock starts.
  const unsigned warm_steps = n <= kStepsPerLaunch ? static_cast<unsigned>(n) : 0;
  c.launch = [=](environment& e) { s->launch<cache_op::kDefault>(e, warm_steps); };
  c.cold_l2 = set_bytes > env.device().l2_bytes;
  return c;
}

// The loaded chase's streams: one 1024-thread block per SM, two 16-B loads in flight per thread.
using load_word = float4;
constexpr unsigned kLoadIlp = 2, kLoadBlock = 1024;
constexpr std::size_t kLoadedSetBytes = std::size_t(512) << 20;

/// latency/loaded/load:read|copy/sms:K: one thread chases a DRAM-sized chain (at least 8x the
/// L2) on an SM of its own while K other SMs stream reads (or copies) of the input array.
std::size_t loaded_set_bytes(const environment& env) {
  return std::max(kLoadedSetBytes, std::size_t(1)
                                       << log2_exact(kL2Multiple * env.device().l2_bytes));
}

/// What every loaded case uses: the chain, the streams' record and stop flags. Made once for
/// the family and kept while any of its cases lives, so no loaded case allocates (nor waits
/// for the GPU to settle after an allocation).
struct loaded_chain {
  chase_chain chain;
  device_buffer record, stop_flags, roles;
  std::vector<unsigned> sm_ids;  // of every SM, found once
  explicit loaded_chain(std::size_t set_bytes) : chain(set_bytes / kChaseLineBytes, 1, 1) {}

  /// roles (gmb/loaded_roles.hpp) for K streams, on the device.
  void assign_roles(environment& e, unsigned streams) {
    if (sm_ids.empty()) sm_ids = present_sm_ids(e, roles);
    const auto table = loaded_roles(sm_ids, streams, kSmIdSlots);
    GMB_CUDA_CHECK(cudaMemcpyAsync(roles.data<void>(), table.data(),
                                   table.size() * sizeof(unsigned), cudaMemcpyHostToDevice,
                                   e.stream()));
    GMB_CUDA_CHECK(cudaStreamSynchronize(e.stream()));  // `table` dies here
  }

};

/// latency/loaded/load:read|copy/sms:K, or model/loaded/... (also load:mix) for the model's
/// calibration.
std::optional<bench_case> loaded_case(environment& env, const std::shared_ptr<loaded_chain>& shared,
                                      stream_load kind, unsigned load_sms,
                                      bool calibration = false) {
  auto kernel = kind == stream_load::kCopy  ? loaded_chase<load_word, kLoadIlp, stream_load::kCopy>
                : kind == stream_load::kMix ? loaded_chase<load_word, kLoadIlp, stream_load::kMix>
                                            : loaded_chase<load_word, kLoadIlp, stream_load::kRead>;
  const std::optional<std::size_t> smem = residency_smem(kernel, kLoadBlock, 1);
  if (!smem) return std::nullopt;
  const std::size_t tile_bytes = std::size_t(kLoadBlock) * kLoadIlp * sizeof(load_word);
  const std::size_t tiles = env.array_bytes() / tile_bytes;
  const unsigned grid = static_cast<unsigned>(env.device().sms);
  const std::size_t bytes = *smem;
  // Pointers into the shared state that keep it alive (shared_ptr's aliasing constructor).
  const std::shared_ptr<chase_chain> s(shared, &shared->chain);
  const std::shared_ptr<device_buffer> load(shared, &shared->record);
  const std::shared_ptr<device_buffer> stop_flags(shared, &shared->stop_flags);
  const std::shared_ptr<device_buffer> roles(shared, &shared->roles);
  const std::size_t flag_bytes = std::size_t(grid) * kStopFlagStride * sizeof(unsigned);
  constexpr unsigned kWarmSteps = 64;

  bench_case c;
  const char* load_name = kind == stream_load::kCopy  ? "copy"
                          : kind == stream_load::kMix ? "mix"
                                                      : "read";
  const std::vector<name_param> params{{"load", load_name}, {"sms", load_sms}};
  c.name =
      calibration ? bench_name("model", "loaded", params) : bench_name("latency", "loaded", params);
  c.prepare = [=](environment& e) {
    s->prepare(e);
    if (load->bytes() == 0) {
      *load = device_buffer(round_up(sizeof(load_record), 16));
      *stop_flags = device_buffer(flag_bytes);
      *roles = device_buffer(round_up((kSmIdSlots + 1) * sizeof(unsigned), 16));
    }
    shared->assign_roles(e, load_sms);
    GMB_CUDA_CHECK(cudaMemsetAsync(load->data<void>(), 0, sizeof(load_record), e.stream()));
    e.in().fill(kInputPattern, e.stream());
    e.out().poison(e.stream());
    e.reset_counter();
  };
  c.launch = [=](environment& e) {
    // This launch's part zeroed on the device (no host copy inside the timed iteration); the
    // totals go on from prepare.
    GMB_CUDA_CHECK(
        cudaMemsetAsync(load->data<void>(), 0, offsetof(load_record, streamed_bytes), e.stream()));
    GMB_CUDA_CHECK(cudaMemsetAsync(stop_flags->data<void>(), 0, flag_bytes, e.stream()));
    kernel<<<grid, kLoadBlock, bytes, e.stream()>>>(
        s->position.data<std::uint64_t>(), kWarmSteps, kStepsPerLaunch,
        s->record.data<chase_record>(), e.in().data<const load_word>(), e.out().data<load_word>(),
        tiles, load_sms, kInputPattern, e.counter(), load->data<load_record>(),
        stop_flags->data<unsigned>(), roles->data<const unsigned>());
    s->walked += kWarmSteps + kStepsPerLaunch;
  };
  auto recorded = [=](environment& e) {
    return load->copy_record_to_host<load_record>(e.stream());
  };
  c.verify = [=](environment& e) -> std::string {
    const std::string chase = s->verify(e);
    if (!chase.empty()) return chase;
    if (const unsigned long long bad = e.read_counter(); bad != 0) {
      return std::to_string(bad) + " streamed element(s) read wrong";
    }
    const load_record r = recorded(e);
    if (r.started != load_sms) {
      return std::to_string(r.started) + " of " + std::to_string(load_sms) +
             " streaming blocks started";
    }
    if (load_sms > 0 && r.streamed_bytes == 0) return "the streaming blocks read nothing";
    if (const auto chased = s->recorded(e).launches; load_sms > 0 && r.launches != chased) {
      return "every stream finished in " + std::to_string(r.launches) + " of " +
             std::to_string(chased) + " launches";
    }
    if (kind != stream_load::kRead) {  // every stream wrote its first tile at least: 0 ... K-1
      const std::size_t words = std::min<std::size_t>(load_sms, tiles) * tile_bytes / 4;
      const auto got = e.out().copy_words_to_host(0, words, e.stream());
      // a mix writes the first of its two words per thread: each tile's first half
      const std::size_t written =
          kind == stream_load::kMix ? tile_bytes / 4 / kLoadIlp : tile_bytes / 4;
      for (std::size_t w = 0; w < words; ++w) {
        if (w % (tile_bytes / 4) < written && got[w] != kInputPattern(w)) {
          return "copied word " + std::to_string(w) + " is wrong";
        }
      }
    }
    return "";
  };
  c.measured = [=](environment& e) {
    measurements m = s->measured(e);
    // Over every timed launch, as the latency: one launch is one sample, and single-launch
    // points fell off the curve near saturation (docs/inflight.md, loaded latency).
    const load_record r = recorded(e);
    const double gbs = r.streamed_ns > 0 ? double(r.streamed_bytes) / r.streamed_ns : 0.0;
    m.push_back({"load_gbs", gbs});
    m.push_back({"load_pct_peak", 100.0 * gbs * 1e9 / e.device().peak_bytes_per_second()});
    return m;
  };
  c.bytes_read = double(kStepsPerLaunch) * sizeof(std::uint64_t);
  c.cold_l2 = true;
  c.launches_per_iteration = 1;
  return c;
}

}  // namespace

std::vector<bench_case> chase_calibration_cases(environment& env) {
  // One working set per level, none of them a quick sweep's (a chain is a power of two, so
  // the full sweep has them too): 32 KiB (the L1), 2 MiB (the L2), 1 GiB (DRAM), where the
  // GPU has room for it.
  const std::size_t budget = chain_budget();
  std::vector<bench_case> cases;
  for (std::size_t bytes : {std::size_t(32) << 10, std::size_t(2) << 20, std::size_t(1) << 30}) {
    if (bytes > budget) continue;
    for (unsigned lanes : {1u, 32u}) cases.push_back(chase_case(env, bytes, lanes, true));
  }
  return cases;
}

std::vector<bench_case> loaded_calibration_cases(environment& env) {
  // Loads the quick sweep does not run (it has 0, 16, 32, 48, 64, 96 and every SM but the
  // chase's; its copies skip 48 and 96), up to 128 SMs, past which the curve is extrapolated.
  const unsigned sms = static_cast<unsigned>(env.device().sms);
  auto shared = std::make_shared<loaded_chain>(loaded_set_bytes(env));
  std::vector<bench_case> cases;
  for (stream_load kind : {stream_load::kRead, stream_load::kCopy, stream_load::kMix}) {
    const std::vector<unsigned> loads = kind == stream_load::kRead
                                            ? std::vector<unsigned>{8, 24, 40, 56, 80, 112, 128}
                                            : std::vector<unsigned>{8, 24, 48, 80, 112, 128};
    for (unsigned k : loads) {
      if (k + 1 >= sms) continue;
      if (auto c = loaded_case(env, shared, kind, k, true)) cases.push_back(std::move(*c));
    }
  }
  return cases;
}

std::vector<bench_case> latency_cases(environment& env, sweep s) {
  const std::size_t budget = chain_budget();
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
  const unsigned sms = static_cast<unsigned>(env.device().sms);
  std::vector<unsigned> load_sms;
  if (s == sweep::kQuick) {
    load_sms = {0, 16, 32, 48, 64, 96};
  } else {
    for (unsigned k = 0; k < sms; k += 8) load_sms.push_back(k);
  }
  load_sms.push_back(sms - 1);  // every SM but the chase's
  std::sort(load_sms.begin(), load_sms.end());
  load_sms.erase(std::unique(load_sms.begin(), load_sms.end()), load_sms.end());
  auto shared = std::make_shared<loaded_chain>(loaded_set_bytes(env));
  for (bool copy : {false, true}) {
    for (unsigned k : load_sms) {
      // Copies, quick: the curve bends earlier and smoothly; fewer points draw it.
      if (k >= sms || (copy && s == sweep::kQuick && (k == 48 || k == 96))) continue;
      const stream_load kind = copy ? stream_load::kCopy : stream_load::kRead;
      if (auto c = loaded_case(env, shared, kind, k)) cases.push_back(std::move(*c));
    }
  }
  return cases;
}

}  // namespace gmb
