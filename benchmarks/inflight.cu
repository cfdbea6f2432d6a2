// Inflight family (kernels/inflight.cuh): coalesced read, copy and write swept over the launch
// choices that set how many bytes an SM keeps in flight: threads per block, blocks an SM may hold
// (limited with dynamic shared memory; the occupancy API's count is the counter
// resident_blocks_per_sm), independent loads per thread (ilp) and word size (w, bytes), each
// on a persistent grid (the resident blocks loop over the array) and with one block per tile
// (grid:full: blocks live for one round of loads and retire). Counters: bytes_in_flight_per_sm
// = resident threads x ilp x w; persistent grids also count, in one extra launch, the blocks
// each SM really received (blocks_per_sm_min/max, sms_used). inflight/blocks times blocks that
// do nothing but write one word: how long a block holds an SM's slot (block_slot_ns), the cost
// one-block-per-tile grids pay on top of memory latency. Scripts hold the Little's-law model.
// Quick: reads of 4-B words, one per thread, in 256-thread blocks, 1 to 8 per SM, and 64- and
// 1024-thread blocks at 2048 threads per SM; the same 8 and 32 KiB per SM from four words per
// thread or 16-B words; copies at 2 and 8 blocks per SM; one warp per SM on a persistent grid
// (a round trip alone, over an eighth of the array) for each word and ilp of the quick sweep;
// cp.async reads (inflight/read_async/...: the same tiles staged through shared memory by
// LDGSTS, sm_80 on) of 4-B words one per thread and 16-B words one and four per thread, at 2
// and 8 blocks of 256 per SM, persistent; writes (inflight/write/...: stores alone, no loads)
// and a copy of 4-B words four per thread and writes of 16-B words, 8 blocks of 256 per SM,
// persistent: what DRAM gives a persistent grid's streams of one-line and wider requests (the
// model's rates); full: every shape, w, ilp.
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
#include "benchmarks/builders/residency.cuh"
#include "gmb/inflight.hpp"
#include "gmb/naming.hpp"
#include "kernels/inflight.cuh"

namespace gmb {

namespace {

enum class operation { kRead, kCopy, kReadAsync, kWrite };
enum class grid_form { kPersistent, kFull };

const char* op_name(operation op) {
  switch (op) {
    case operation::kRead: return "read";
    case operation::kCopy: return "copy";
    case operation::kReadAsync: return "read_async";
    case operation::kWrite: return "write";
  }
  return "?";
}

bool in_quick_sweep(operation op, std::size_t word, unsigned ilp, const launch_shape& s,
                    grid_form form) {
  if (op == operation::kReadAsync) {  // cp.async beside the loads: 4 to 128 KiB per SM
    return form == grid_form::kPersistent && s.block == 256 &&
           (s.blocks_per_sm == 2 || s.blocks_per_sm == 8) &&
           ((word == 4 && ilp == 1) || (word == 16 && (ilp == 1 || ilp == 4)));
  }
  if (op == operation::kWrite) {  // the stores alone: the model's persistent write rates
    return form == grid_form::kPersistent && s.block == 256 && s.blocks_per_sm == 8 &&
           ((word == 4 && ilp == 4) || (word == 16 && ilp == 1));
  }
  const bool read = op == operation::kRead;
  // One warp per SM, persistent: a round trip with nothing else in flight (the model's).
  if (s.block == 32 && s.blocks_per_sm == 1) {
    return form == grid_form::kPersistent && ilp <= (word == 4 && read ? 4u : 1u) &&
           (ilp == 1 || ilp == 4) && (word == 4 || word == 16);
  }
  if (s.threads_per_sm() == 2048 && (s.block == 64 || s.block == 1024)) {
    return read && word == 4 && ilp == 1;  // the block size, at 8 KiB per SM
  }
  if (s.block != 256) return false;
  if (word == 4 && ilp == 1) return read || s.blocks_per_sm == 2 || s.blocks_per_sm == 8;
  // The same 8 and 32 KiB per SM from fewer threads: bytes in flight, not threads, count.
  const bool two_or_eight = s.blocks_per_sm == 2 || s.blocks_per_sm == 8;
  // ... and a persistent copy of 4-B words at DRAM's rate (the model's, for one-line requests)
  if (word == 4 && ilp == 4) {
    return (read && two_or_eight) ||
           (form == grid_form::kPersistent && s.blocks_per_sm == 8 && op == operation::kCopy);
  }
  if (word == 16 && ilp == 1) return two_or_eight && (read || s.blocks_per_sm == 8);
  return false;
}

/// Block-slot cases: a slot's own turnaround (one block per SM, no launch-rate limit) for each
/// block size of the quick sweep, and the launch rate where the one-block-per-tile reads of
/// 2048 threads per SM need it.
bool blocks_in_quick_sweep(const launch_shape& s) {
  const bool quick_block = s.block == 64 || s.block == 256 || s.block == 1024;
  return quick_block && (s.blocks_per_sm == 1 || s.threads_per_sm() == 2048);
}

/// Where each block of a persistent grid ran, counted in one extra launch: blocks per SM
/// (least, most) and the SMs used. One small buffer for every case of the family, made once,
/// so no case allocates (and the harness need not let the GPU settle between them).
class placement {
 public:
  measurements count(environment& env, const std::function<void(unsigned*)>& launch) const {
    if (blocks_on_sm_->bytes() == 0) {
      *blocks_on_sm_ = device_buffer(kSmIdSlots * sizeof(unsigned));
    }
    GMB_CUDA_CHECK(
        cudaMemsetAsync(blocks_on_sm_->data<void>(), 0, blocks_on_sm_->bytes(), env.stream()));
    launch(blocks_on_sm_->data<unsigned>());
    GMB_CUDA_CHECK(cudaGetLastError());
    const auto counts = blocks_on_sm_->copy_words_to_host(0, kSmIdSlots, env.stream());
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

 private:
  std::shared_ptr<device_buffer> blocks_on_sm_ = std::make_shared<device_buffer>();
};

/// Words of the output: the block's pattern for the first `blocks`, poison after them.
struct blocks_written {
  word_pattern pattern;
  std::size_t blocks;
  GMB_HD std::uint32_t operator()(std::size_t w) const {
    return w < blocks ? pattern(w) : kPoisonWord;
  }
};

template <class T, unsigned Ilp>
std::optional<bench_case> make_case(environment& env, const placement& where, operation op,
                                    launch_shape shape, grid_form form) {
  const std::size_t tile = std::size_t(shape.block) * Ilp;
  // One or two warps per SM read an eighth of the array (still 4x the L2 on an H100 or
  // H200): the whole of it would take them tens of milliseconds per launch.
  const std::size_t fraction = shape.threads_per_sm() <= 64 ? 8 : 1;
  const std::size_t array_elements = env.array_bytes() / sizeof(T);
  if (array_elements % (tile * fraction) != 0) {
    throw std::invalid_argument("inflight: array is not a whole number of tiles");
  }
  const std::size_t n = array_elements / fraction;
  const std::size_t tiles = n / tile;
  const bool async = op == operation::kReadAsync;
  auto read = async ? inflight_read_async<T, Ilp> : inflight_read<T, Ilp>;
  auto copy = inflight_copy<T, Ilp>;
  auto write = inflight_write<T, Ilp>;
  const bool reads = op == operation::kRead || async;
  std::optional<std::size_t> smem =
      reads ? residency_smem(read, shape.block, shape.blocks_per_sm)
            : op == operation::kCopy ? residency_smem(copy, shape.block, shape.blocks_per_sm)
                                     : residency_smem(write, shape.block, shape.blocks_per_sm);
  if (async && smem) {  // the staging must fit in what limits the residency, or be it
    const std::size_t staging = std::size_t(shape.block) * Ilp * sizeof(T);
    if (*smem < staging) {
      smem = staging;
      if (resident_blocks(read, shape.block, staging) != int(shape.blocks_per_sm)) return {};
    }
  }
  if (!smem) return std::nullopt;
  const bool persistent = form == grid_form::kPersistent;
  const unsigned grid = static_cast<unsigned>(
      persistent ? std::min(tiles, std::size_t(shape.blocks_per_sm) * env.device().sms) : tiles);
  const unsigned block = shape.block;
  const std::size_t bytes = *smem;

  bench_case c;
  c.name = bench_name("inflight", op_name(op),
                      {{"w", static_cast<long long>(sizeof(T))},
                       {"ilp", Ilp},
                       {"block", block},
                       {"bpsm", shape.blocks_per_sm},
                       {"grid", persistent ? "persistent" : "full"}});
  std::function<void(environment&, unsigned*)> launch_counting;
  if (async) c.needs = gpu_feature::kAsyncCopy;
  if (reads) {
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
      return verify_checking_read(e, e.in(), kInputPattern, n, launch, {},
                                  n * sizeof(T) / sizeof(std::uint32_t));
    };
    launch_counting = [=](environment& e, unsigned* on_sm) {
      read<<<grid, block, bytes, e.stream()>>>(e.in().data<const T>(), tiles, kInputPattern,
                                               e.counter(), on_sm);
    };
    c.bytes_read = static_cast<double>(n * sizeof(T));
  } else if (op == operation::kWrite) {
    c.prepare = [](environment& e) { e.out().poison(e.stream()); };
    launch_counting = [=](environment& e, unsigned* on_sm) {
      write<<<grid, block, bytes, e.stream()>>>(e.out().data<T>(), tiles, kWritePattern, on_sm);
    };
    c.launch = [launch_counting](environment& e) { launch_counting(e, nullptr); };
    c.verify = [](environment& e) { return verify_words(e, e.out(), kWritePattern, "out"); };
    c.bytes_written = static_cast<double>(n * sizeof(T));
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
    c.verify = [n](environment& e) {
      return verify_words(e, e.out(), blocks_written{kInputPattern, n * sizeof(T) / 4}, "out");
    };
    c.bytes_read = c.bytes_written = static_cast<double>(n * sizeof(T));
  }
  const int resident = reads ? resident_blocks(read, block, bytes)
                       : op == operation::kCopy ? resident_blocks(copy, block, bytes)
                                                : resident_blocks(write, block, bytes);
  const measurements fixed = {
      {"bytes_in_flight_per_sm", bytes_in_flight_per_sm(shape, Ilp, sizeof(T))},
      {"resident_blocks_per_sm", resident},
      {"smem_per_block", double(bytes)}};
  c.measured = [=](environment& e) {
    measurements m = fixed;
    if (persistent) {
      for (auto& kv : where.count(e, [&](unsigned* on_sm) { launch_counting(e, on_sm); })) {
        m.push_back(kv);
      }
    }
    return m;
  };
  // One or two warps per SM take milliseconds per launch: one launch per iteration (the
  // back-to-back launches amortize costs of microseconds).
  if (shape.threads_per_sm() <= 64) c.launches_per_iteration = 1;
  return c;
}

/// inflight/blocks: as many blocks as the one-block-per-tile read of 4-B words, each writing
/// one word of the output array; block_slot_ns from eight more launches timed with events.
std::optional<bench_case> blocks_case(environment& env, launch_shape shape) {
  const std::optional<std::size_t> smem =
      residency_smem(inflight_blocks, shape.block, shape.blocks_per_sm);
  if (!smem) return std::nullopt;
  const std::size_t blocks = env.array_bytes() / sizeof(float) / shape.block;
  const unsigned block = shape.block;
  const std::size_t bytes = *smem;
  bench_case c;
  c.name = bench_name("inflight", "blocks", {{"block", block}, {"bpsm", shape.blocks_per_sm}});
  c.prepare = [](environment& e) { e.out().poison(e.stream()); };
  auto launch = [=](environment& e) {
    inflight_blocks<<<static_cast<unsigned>(blocks), block, bytes, e.stream()>>>(
        e.out().data<std::uint32_t>(), kWritePattern);
  };
  c.launch = launch;
  c.verify = [=](environment& e) {
    return verify_words(e, e.out(), blocks_written{kWritePattern, blocks}, "out");
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
  c.bytes_written = double(blocks) * sizeof(std::uint32_t);
  c.cold_l2 = false;
  return c;
}

template <class T>
struct type_tag {
  using type = T;
};

}  // namespace

std::vector<bench_case> inflight_calibration_cases(environment& env) {
  std::vector<bench_case> cases;
  // empty blocks of 128 threads (the quick sweep runs 64, 256 and 1024), one per SM at a time
  if (std::optional<bench_case> c = blocks_case(env, {128, 1})) {
    c->name = bench_name("model", "blocks", {{"block", 128}, {"bpsm", 1}});
    cases.push_back(std::move(*c));
  }
  // a persistent read of two 4-B loads per thread, four blocks of 256 per SM (the quick sweep
  // runs one and four loads, two and eight blocks): 8 KiB per SM, far below DRAM's rate, where
  // a warp's round waits for the SM to take in its other warps' loads (the drain)
  const placement where;
  auto add = [&](std::optional<bench_case> c) {
    if (!c) return;
    c->name = "model/" + c->name;
    cases.push_back(std::move(*c));
  };
  add(make_case<float, 2>(env, where, operation::kRead, {256, 4}, grid_form::kPersistent));
  // ... and of four 4-B loads per thread, three blocks of 256 per SM (the quick sweep runs two
  // and eight): 12 KiB per SM, where the drain is slower the more loads a thread waits for
  add(make_case<float, 4>(env, where, operation::kRead, {256, 3}, grid_form::kPersistent));
  // one 4-B load per thread, six blocks of 256 per SM (the quick sweep runs 2, 4 and 8), read
  // plainly and by cp.async: what staging through shared memory adds to a warp's round
  add(make_case<float, 1>(env, where, operation::kRead, {256, 6}, grid_form::kPersistent));
  add(make_case<float, 1>(env, where, operation::kReadAsync, {256, 6}, grid_form::kPersistent));
  // one block of 1,024 threads per SM at a time, one per tile (the quick sweep runs two): how
  // long a block of 32 loading warps holds its slot
  add(make_case<float, 1>(env, where, operation::kRead, {1024, 1}, grid_form::kFull));
  return cases;
}

std::vector<bench_case> inflight_cases(environment& env, sweep s) {
  int max_threads = 0, max_blocks = 0;
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor,
                                        env.device().ordinal));
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&max_blocks, cudaDevAttrMaxBlocksPerMultiprocessor,
                                        env.device().ordinal));
  const auto shapes = launch_shapes(unsigned(max_threads), unsigned(max_blocks));
  const bool full = s == sweep::kFull;
  std::vector<bench_case> cases;
  const placement where;
  auto add = [&](std::optional<bench_case> c) {
    if (c) cases.push_back(std::move(*c));
  };
  auto per_word = [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto per_ilp = [&](auto ilp) {
      constexpr unsigned kIlp = decltype(ilp)::value;
      for (operation op :
           {operation::kRead, operation::kCopy, operation::kReadAsync, operation::kWrite}) {
        for (const launch_shape& shape : shapes) {
          for (grid_form form : {grid_form::kPersistent, grid_form::kFull}) {
            if (full || in_quick_sweep(op, sizeof(T), kIlp, shape, form)) {
              add(make_case<T, kIlp>(env, where, op, shape, form));
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
