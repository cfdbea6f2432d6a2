// Inflight family (kernels/inflight.cuh): coalesced read and copy swept over the launch choices
// that set how many bytes an SM keeps in flight: threads per block, blocks an SM may hold
// (limited with dynamic shared memory; the occupancy API's count is the counter
// resident_blocks_per_sm), independent loads per thread (ilp) and word size (w, bytes), each
// on a persistent grid (the resident blocks loop over the array) and with one block per tile
// (grid:full: blocks live for one round of loads and retire). Counters: bytes_in_flight_per_sm
// = resident threads x ilp x w; persistent grids also count, in one extra launch, the blocks
// each SM really received (blocks_per_sm_min/max, sms_used). inflight/blocks times blocks that
// do nothing but write one word: how long a block holds an SM's slot (block_slot_ns), the cost
// one-block-per-tile grids pay on top of memory latency. Scripts hold the Little's-law model.
// Quick: 256-thread blocks, 1 to 8 per SM, w 4 and 16, ilp 1 and 4 (copy: ilp 1, 2 and 8 per
// SM), 64- and 1024-thread blocks at 2048 threads per SM, and one warp per SM on a persistent
// grid for each of those w and ilp (a round trip alone); full: every shape, w, ilp.
// Names: inflight/read/w:4/ilp:1/block:256/bpsm:8/grid:persistent,
// inflight/blocks/block:256/bpsm:8.
#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/residency.cuh"
#include "gmb/inflight.hpp"
#include "gmb/naming.hpp"
#include "kernels/inflight.cuh"

namespace gmb {

namespace {

enum class operation { kRead, kCopy };
enum class grid_form { kPersistent, kFull };

constexpr std::size_t kSmIdSlots = 1024;  // %smid is below this on every GPU the suite knows

bool in_quick_sweep(operation op, std::size_t word, unsigned ilp, const launch_shape& s,
                    grid_form form) {
  const bool series =
      (word == 4 || word == 16) && (ilp == 1 || (ilp == 4 && op == operation::kRead));
  // One warp per SM, persistent: a round trip with nothing else in flight (the model's).
  if (s.block == 32 && s.blocks_per_sm == 1) return series && form == grid_form::kPersistent;
  const bool two_k_threads = s.threads_per_sm() == 2048 && (s.block == 64 || s.block == 1024);
  if (op == operation::kCopy) {
    return s.block == 256 && (s.blocks_per_sm == 2 || s.blocks_per_sm == 8) && ilp == 1 &&
           (word == 4 || word == 16);
  }
  if (two_k_threads) return word == 4 && ilp == 1;
  return s.block == 256 && (word == 4 || word == 16) && (ilp == 1 || ilp == 4);
}

/// Block-slot cases: every shape of the quick read sweep, and one block per SM for each of
/// its block sizes (a slot's own turnaround, with no launch-rate limit).
bool blocks_in_quick_sweep(const launch_shape& s) {
  return s.block == 256 || ((s.block == 64 || s.block == 1024) &&
                            (s.threads_per_sm() == 2048 || s.blocks_per_sm == 1));
}

/// Counters every inflight case reports, and what an extra counting launch of a persistent
/// grid found (where each block ran).
struct placement {
  std::shared_ptr<device_buffer> blocks_on_sm = std::make_shared<device_buffer>();
  measurements count(environment& env, const std::function<void(unsigned*)>& launch) const {
    if (blocks_on_sm->bytes() == 0) *blocks_on_sm = device_buffer(kSmIdSlots * sizeof(unsigned));
    GMB_CUDA_CHECK(
        cudaMemsetAsync(blocks_on_sm->data<void>(), 0, blocks_on_sm->bytes(), env.stream()));
    launch(blocks_on_sm->data<unsigned>());
    GMB_CUDA_CHECK(cudaGetLastError());
    const auto counts = blocks_on_sm->copy_words_to_host(0, kSmIdSlots, env.stream());
    unsigned used = 0, least = ~0u, most = 0;
    for (unsigned n : counts) {
      if (n == 0) continue;
      ++used;
      least = std::min(least, n);
      most = std::max(most, n);
    }
    if (used < unsigned(env.device().sms)) least = 0;
    return {{"sms_used", used}, {"blocks_per_sm_min", least}, {"blocks_per_sm_max", most}};
  }
};

template <class T, unsigned Ilp>
std::optional<bench_case> make_case(environment& env, operation op, launch_shape shape,
                                    grid_form form) {
  const std::size_t n = env.array_bytes() / sizeof(T);
  const std::size_t tile = std::size_t(shape.block) * Ilp;
  if (n % tile != 0) throw std::invalid_argument("inflight: array is not a whole number of tiles");
  const std::size_t tiles = n / tile;
  auto read = inflight_read<T, Ilp>;
  auto copy = inflight_copy<T, Ilp>;
  const std::optional<std::size_t> smem =
      op == operation::kRead ? residency_smem(read, shape.block, shape.blocks_per_sm)
                             : residency_smem(copy, shape.block, shape.blocks_per_sm);
  if (!smem) return std::nullopt;
  const bool persistent = form == grid_form::kPersistent;
  const unsigned grid = static_cast<unsigned>(
      persistent ? std::min(tiles, std::size_t(shape.blocks_per_sm) * env.device().sms) : tiles);
  const unsigned block = shape.block;
  const std::size_t bytes = *smem;

  bench_case c;
  c.name = bench_name("inflight", op == operation::kRead ? "read" : "copy",
                      {{"w", static_cast<long long>(sizeof(T))},
                       {"ilp", Ilp},
                       {"block", block},
                       {"bpsm", shape.blocks_per_sm},
                       {"grid", persistent ? "persistent" : "full"}});
  std::function<void(environment&, unsigned*)> launch_counting;
  if (op == operation::kRead) {
    const checking_read_launch launch = [=](environment& e, word_pattern expected) {
      read<<<grid, block, bytes, e.stream()>>>(e.in().data<const T>(), tiles, expected, e.counter(),
                                               nullptr);
    };
    c.prepare = [](environment& e) {
      e.in().fill(kInputPattern, e.stream());
      e.reset_counter();
    };
    c.launch = [launch](environment& e) { launch(e, kInputPattern); };
    c.verify = [launch, n](environment& e) {
      return verify_checking_read(e, e.in(), kInputPattern, n, launch);
    };
    launch_counting = [=](environment& e, unsigned* on_sm) {
      read<<<grid, block, bytes, e.stream()>>>(e.in().data<const T>(), tiles, kInputPattern,
                                               e.counter(), on_sm);
    };
    c.bytes_read = static_cast<double>(env.array_bytes());
  } else {
    c.prepare = [](environment& e) {
      e.in().fill(kInputPattern, e.stream());
      e.out().poison(e.stream());
    };
    launch_counting = [=](environment& e, unsigned* on_sm) {
      copy<<<grid, block, bytes, e.stream()>>>(e.in().data<const T>(), e.out().data<T>(), tiles,
                                               on_sm);
    };
    c.launch = [launch_counting](environment& e) { launch_counting(e, nullptr); };
    c.verify = [](environment& e) { return verify_words(e, e.out(), kInputPattern, "out"); };
    c.bytes_read = c.bytes_written = static_cast<double>(env.array_bytes());
  }
  const int resident = op == operation::kRead ? resident_blocks(read, block, bytes)
                                              : resident_blocks(copy, block, bytes);
  const measurements fixed = {
      {"bytes_in_flight_per_sm", bytes_in_flight_per_sm(shape, Ilp, sizeof(T))},
      {"resident_blocks_per_sm", resident},
      {"smem_per_block", double(bytes)}};
  const placement where;
  c.measured = [=](environment& e) {
    measurements m = fixed;
    if (persistent) {
      for (auto& kv : where.count(e, [&](unsigned* on_sm) { launch_counting(e, on_sm); })) {
        m.push_back(kv);
      }
    }
    return m;
  };
  c.release = [where](environment&) { *where.blocks_on_sm = device_buffer(); };
  // One or two warps per SM move an array in tens of milliseconds: one launch per iteration
  // (the back-to-back launches amortize costs of microseconds).
  if (shape.threads_per_sm() <= 64) c.launches_per_iteration = 1;
  return c;
}

/// inflight/blocks: as many blocks as the one-block-per-tile read of 4-B words, each writing
/// one word; block_slot_ns from eight more launches timed with events.
std::optional<bench_case> blocks_case(environment& env, launch_shape shape) {
  const std::optional<std::size_t> smem =
      residency_smem(inflight_blocks, shape.block, shape.blocks_per_sm);
  if (!smem) return std::nullopt;
  const std::size_t blocks = env.array_bytes() / sizeof(float) / shape.block;
  const unsigned block = shape.block;
  const std::size_t bytes = *smem;
  auto out = std::make_shared<device_buffer>();
  bench_case c;
  c.name = bench_name("inflight", "blocks", {{"block", block}, {"bpsm", shape.blocks_per_sm}});
  c.prepare = [=](environment& e) {
    if (out->bytes() == 0) *out = device_buffer(round_up(blocks * sizeof(std::uint32_t), 16));
    out->poison(e.stream());
  };
  auto launch = [=](environment& e) {
    inflight_blocks<<<static_cast<unsigned>(blocks), block, bytes, e.stream()>>>(
        out->data<std::uint32_t>(), kWritePattern);
  };
  c.launch = launch;
  c.verify = [=](environment& e) -> std::string {
    const auto got = out->copy_words_to_host(0, blocks, e.stream());
    for (std::size_t b = 0; b < blocks; ++b) {
      if (got[b] != kWritePattern(b)) return "block " + std::to_string(b) + " wrote nothing";
    }
    return "";
  };
  const unsigned sms = static_cast<unsigned>(env.device().sms);
  const int resident = resident_blocks(inflight_blocks, block, bytes);
  c.measured = [=](environment& e) -> measurements {
    constexpr int kLaunches = 8;
    e.timer().start(e.stream());
    for (int i = 0; i < kLaunches; ++i) launch(e);
    e.timer().stop(e.stream());
    const double seconds = e.timer().seconds() / kLaunches;
    return {{"block_slot_ns", block_slot_ns(seconds, blocks, sms, unsigned(resident))},
            {"blocks_per_us", blocks / (seconds * 1e6)},
            {"resident_blocks_per_sm", resident},
            {"smem_per_block", double(bytes)}};
  };
  c.release = [out](environment&) { *out = device_buffer(); };
  c.bytes_written = double(blocks) * sizeof(std::uint32_t);
  c.cold_l2 = false;
  return c;
}

template <class T>
struct type_tag {
  using type = T;
};

}  // namespace

std::vector<bench_case> inflight_cases(environment& env, sweep s) {
  int max_threads = 0, max_blocks = 0;
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor,
                                        env.device().ordinal));
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&max_blocks, cudaDevAttrMaxBlocksPerMultiprocessor,
                                        env.device().ordinal));
  const auto shapes = launch_shapes(unsigned(max_threads), unsigned(max_blocks));
  const bool full = s == sweep::kFull;
  std::vector<bench_case> cases;
  auto add = [&](std::optional<bench_case> c) {
    if (c) cases.push_back(std::move(*c));
  };
  auto per_word = [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto per_ilp = [&](auto ilp) {
      constexpr unsigned kIlp = decltype(ilp)::value;
      for (operation op : {operation::kRead, operation::kCopy}) {
        for (const launch_shape& shape : shapes) {
          for (grid_form form : {grid_form::kPersistent, grid_form::kFull}) {
            if (full || in_quick_sweep(op, sizeof(T), kIlp, shape, form)) {
              add(make_case<T, kIlp>(env, op, shape, form));
            }
          }
        }
      }
    };
    per_ilp(std::integral_constant<unsigned, 1>{});
    per_ilp(std::integral_constant<unsigned, 2>{});
    per_ilp(std::integral_constant<unsigned, 4>{});
    per_ilp(std::integral_constant<unsigned, 8>{});
  };
  per_word(type_tag<float>{});
  per_word(type_tag<float2>{});
  per_word(type_tag<float4>{});
  for (const launch_shape& shape : shapes) {
    if (full || blocks_in_quick_sweep(shape)) add(blocks_case(env, shape));
  }
  return cases;
}

}  // namespace gmb
