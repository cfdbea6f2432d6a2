// Bulk family (kernels/bulk.cuh, gmb/bulk.hpp; Hopper and newer): 1-D bulk copies (TMA,
// cp.async.bulk) measured like the inflight family: GB/s against the bytes each SM keeps in
// flight, here chunk bytes x stages (copies in flight per block) x blocks per SM, thread 0 of
// every block issuing every copy. bulk/read: global -> shared on an mbarrier, the block's warps
// (the axis warps) check every word; bulk/write: one warp writes the pattern into a stage's
// buffer, one bulk copy sends it to global memory; bulk/copy: global -> shared -> global, one
// warp. Persistent grids of blocks-per-SM x SMs blocks; dynamic shared memory sets the
// residency (the occupancy API's count is the counter resident_blocks_per_sm). Shapes keeping
// under 16 KiB in flight per SM move an eighth of the array, one launch per iteration.
// bulk/latency: one warp, one copy at a time, SM cycles from the copy's start to its
// mbarrier's completion (latency_cycles, latency_ns, sm_clock_mhz as latency/chase), 256
// chunks after a cold L2.
// Quick: gmb/bulk.hpp's bulk_quick_shapes (12 reads, 2 writes, 2 copies) and copies of 1, 4,
// 16 and 64 KiB for the latency; full: 1 to 128 KiB x 1, 2, 4, 8 stages x 1, 2, 4 blocks per
// SM where shared memory holds them (reads by 1, 2 and 4 warps), every power of two from 1 to
// 64 KiB for the latency.
// The kernels hold no LDG or STG: built once (gmb_bench_once), run in the default flavor only;
// a GPU below sm_90 skips the family (gpu_feature::kBulkCopy).
// Names: bulk/read/bytes:16384/stages:4/bpsm:1/warps:4, bulk/write/bytes:4096/stages:4/bpsm:1,
// bulk/latency/bytes:4096. The peer family's link experiments run three over the link
// (bulk_link_cases): peer/bulk/read/bytes:16384/stages:4/bpsm:1/warps:4 and
// peer/bulk/copy/bytes:16384/stages:4/bpsm:1/dir:pull|push. The model's calibration runs one
// bulk read too:
// model/bulk/read/bytes:2048/stages:8/bpsm:1/warps:4, model/bulk/write/bytes:2048|8192/stages:8/
// bpsm:1 and model/bulk/latency/bytes:1536|49152 (bulk_calibration_cases).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/builders/peer_state.cuh"
#include "benchmarks/builders/residency.cuh"
#include "benchmarks/families.hpp"
#include "gmb/bulk.hpp"
#include "gmb/naming.hpp"
#include "kernels/bulk.cuh"

namespace gmb {

namespace {

using built_once::bulk_copy;
using built_once::bulk_latency;
using built_once::bulk_latency_record;
using built_once::bulk_read;
using built_once::bulk_write;

constexpr unsigned kWarp = 32;              // writes, copies and latency: one warp per block
constexpr unsigned kLatencyCopies = 256;    // copies per bulk/latency launch, one at a time

/// Words of the output: `pattern` for the first `words`, poison after them.
struct prefix_written {
  word_pattern pattern;
  std::size_t words;
  GMB_HD std::uint32_t operator()(std::size_t w) const {
    return w < words ? pattern(w) : kPoisonWord;
  }
};

int device_attribute(const environment& env, cudaDeviceAttr what) {
  int value = 0;
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&value, what, env.device().ordinal));
  return value;
}

/// The dynamic shared memory with which an SM holds exactly `per_sm` blocks of `kernel`, each
/// with at least `needed` bytes; nullopt where it cannot.
template <class Kernel>
std::optional<std::size_t> bulk_residency(const environment& env, Kernel kernel, unsigned threads,
                                          std::size_t needed, unsigned per_sm) {
  const int most = device_attribute(env, cudaDevAttrMaxSharedMemoryPerBlockOptin);
  if (needed > std::size_t(most)) return std::nullopt;
  GMB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
  const std::optional<std::size_t> limiting = residency_smem(kernel, threads, per_sm);
  if (!limiting) return std::nullopt;
  const std::size_t smem = std::max(*limiting, needed);
  if (resident_blocks(kernel, threads, smem) != int(per_sm)) return std::nullopt;
  return smem;
}

/// The arrays a bulk case reads and writes: the environment's, or (peer_link.cu) the partner's.
using array_of = std::function<device_buffer&(environment&)>;
device_buffer& input_array(environment& e) { return e.in(); }
device_buffer& output_array(environment& e) { return e.out(); }

template <class Kernel>
std::optional<bench_case> stream_case(environment& env, Kernel kernel, bulk_op op,
                                      const bulk_shape& shape, array_of source = input_array,
                                      array_of target = output_array) {
  const unsigned threads = kWarp * (op == bulk_op::kRead ? shape.warps : 1);
  const std::optional<std::size_t> found =
      bulk_residency(env, kernel, threads, bulk_smem_bytes(shape.chunk_bytes, shape.stages),
                     shape.blocks_per_sm);
  if (!found) return std::nullopt;
  const std::size_t smem = *found;
  const double in_flight = bulk_bytes_in_flight_per_sm(shape);
  const bool slow = in_flight < kBulkSlowBelowBytes;
  const std::size_t bytes = env.array_bytes() / (slow ? 8 : 1);
  const std::size_t chunks = bytes / shape.chunk_bytes;
  if (chunks == 0) return std::nullopt;
  const std::size_t words = chunks * shape.chunk_bytes / sizeof(std::uint32_t);
  const unsigned grid = static_cast<unsigned>(
      std::min<std::size_t>(chunks, std::size_t(shape.blocks_per_sm) * env.device().sms));
  const unsigned chunk_bytes = static_cast<unsigned>(shape.chunk_bytes);
  const unsigned stages = shape.stages;

  bench_case c;
  c.name = bulk_name(op, shape);
  const double moved = double(chunks) * double(shape.chunk_bytes);
  if (op == bulk_op::kRead) {
    const checking_read_launch launch = [=](environment& e, word_pattern expected) {
      bulk_read<<<grid, threads, smem, e.stream()>>>(source(e).data<const std::uint32_t>(),
                                                         chunks, chunk_bytes, stages, expected,
                                                         e.counter());
    };
    c.prepare = [source](environment& e) {
      source(e).fill(kInputPattern, e.stream());
      e.reset_counter();
    };
    c.launch = [launch](environment& e) { launch(e, kInputPattern); };
    c.verify = [launch, words, source](environment& e) {
      return verify_checking_read(e, source(e), kInputPattern, words, launch, {}, words);
    };
    c.bytes_read = moved;
  } else if (op == bulk_op::kWrite) {
    c.prepare = [target](environment& e) { target(e).poison(e.stream()); };
    c.launch = [=](environment& e) {
      bulk_write<<<grid, kWarp, smem, e.stream()>>>(target(e).data<std::uint32_t>(), chunks,
                                                          chunk_bytes, stages, kWritePattern);
    };
    c.verify = [words, target](environment& e) {
      return verify_words(e, target(e), prefix_written{kWritePattern, words}, "out");
    };
    c.bytes_written = moved;
  } else {
    c.prepare = [source, target](environment& e) {
      source(e).fill(kInputPattern, e.stream());
      target(e).poison(e.stream());
    };
    c.launch = [=](environment& e) {
      bulk_copy<<<grid, kWarp, smem, e.stream()>>>(source(e).data<const std::uint32_t>(),
                                                         target(e).data<std::uint32_t>(), chunks,
                                                         chunk_bytes, stages);
    };
    c.verify = [words, target](environment& e) {
      return verify_words(e, target(e), prefix_written{kInputPattern, words}, "out");
    };
    c.bytes_read = c.bytes_written = moved;
  }
  const int resident = resident_blocks(kernel, threads, smem);
  c.measured = [=](environment&) -> measurements {
    return {{"bytes_in_flight_per_sm", in_flight},
            {"resident_blocks_per_sm", resident},
            {"smem_per_block", double(smem)}};
  };
  if (slow) c.launches_per_iteration = 1;
  c.every_flavor = false;
  c.needs = gpu_feature::kBulkCopy;
  return c;
}

/// bulk/latency/bytes:B: one warp copies kLatencyCopies consecutive chunks of B bytes, one at
/// a time, each timed from its start to its mbarrier's completion.
std::optional<bench_case> latency_case(environment& env, std::size_t chunk) {
  const std::optional<std::size_t> found =
      bulk_residency(env, bulk_latency, kWarp, bulk_smem_bytes(chunk, 1), 1);
  if (!found) return std::nullopt;
  const std::size_t smem = *found;
  const unsigned copies = static_cast<unsigned>(
      std::min<std::size_t>(kLatencyCopies, env.array_bytes() / chunk));
  if (copies == 0) return std::nullopt;
  const std::size_t words = std::size_t(copies) * chunk / sizeof(std::uint32_t);
  const unsigned chunk_bytes = static_cast<unsigned>(chunk);
  auto record = std::make_shared<device_buffer>();
  auto launch = [=](environment& e, word_pattern expected, bulk_latency_record* into) {
    bulk_latency<<<1, kWarp, smem, e.stream()>>>(e.in().data<const std::uint32_t>(), 0,
                                                       copies, chunk_bytes, expected, e.counter(),
                                                       into);
  };
  bench_case c;
  c.name = bench_name("bulk", "latency", {{"bytes", static_cast<long long>(chunk)}});
  c.prepare = [record](environment& e) {
    if (record->bytes() == 0) *record = device_buffer(sizeof(bulk_latency_record));
    e.in().fill(kInputPattern, e.stream());
    e.reset_counter();
    GMB_CUDA_CHECK(
        cudaMemsetAsync(record->data<void>(), 0, sizeof(bulk_latency_record), e.stream()));
  };
  c.launch = [=](environment& e) {
    launch(e, kInputPattern, record->data<bulk_latency_record>());
  };
  c.verify = [=](environment& e) -> std::string {
    const checking_read_launch checking = [=](environment& e2, word_pattern expected) {
      launch(e2, expected, nullptr);  // the checks' launches are not timed copies
    };
    const std::string wrong = verify_checking_read(e, e.in(), kInputPattern, words, checking, {},
                                                   words);
    if (!wrong.empty()) return wrong;
    const auto r = record->copy_record_to_host<bulk_latency_record>(e.stream());
    if (r.copies == 0 || r.copy_cycles == 0 || r.loop_ns == 0) return "no copy was timed";
    return "";
  };
  c.measured = [record](environment& e) -> measurements {
    const auto r = record->copy_record_to_host<bulk_latency_record>(e.stream());
    const double cycles = double(r.copy_cycles) / double(r.copies);
    const double mhz = 1e3 * double(r.loop_cycles) / double(r.loop_ns);
    return {{"latency_ns", cycles * 1e3 / mhz},
            {"latency_cycles", cycles},
            {"sm_clock_mhz", mhz}};
  };
  c.release = [record](environment&) { *record = device_buffer(); };
  c.bytes_read = double(copies) * double(chunk);
  c.launches_per_iteration = 1;  // each launch after its own flush: every copy from DRAM
  c.every_flavor = false;
  c.needs = gpu_feature::kBulkCopy;
  return c;
}

}  // namespace

std::vector<bench_case> bulk_link_cases(environment& env, const std::shared_ptr<peer_state>& state) {
  // 16-KiB chunks, 4 in flight, one block per SM: 64 KiB per SM, enough to fill the link
  const bulk_shape shape{16384, 4, 1, 4};
  const array_of partner = [state](environment&) -> device_buffer& { return state->buffer(); };
  std::vector<bench_case> cases;
  auto add = [&](std::optional<bench_case> c, const char* dir, double crossing_share) {
    if (!c) return;
    c->name = "peer/" + c->name + (dir[0] ? std::string("/dir:") + dir : "");
    c->peak_bytes_per_second = state->link_rate / crossing_share;
    cases.push_back(std::move(*c));
  };
  add(stream_case(env, bulk_read, bulk_op::kRead, shape, partner), "", 1.0);
  add(stream_case(env, bulk_copy, bulk_op::kCopy, shape, partner, output_array), "pull", 0.5);
  add(stream_case(env, bulk_copy, bulk_op::kCopy, shape, input_array, partner), "push", 0.5);
  return cases;
}

std::vector<bench_case> bulk_calibration_cases(environment& env) {
  // One block per SM handling 2-KiB chunks, 8 in flight: a shape no quick sweep runs (the
  // full sweep has it, as it has the chases' sizes), its rate set by the block's turnaround
  // per chunk more than by the latency (docs/model.md).
  // Bulk writes the same way, of 2 and 8 KiB (a warp fills each chunk before its copy: the
  // turnaround has a part per byte, which the two give). And one copy at a time of 1.5 and
  // 48 KiB, sizes no sweep runs: a copy's latency is a fixed part and a part per byte.
  std::vector<bench_case> cases;
  auto add = [&](std::optional<bench_case> c) {
    if (!c) return;
    c->name = "model/" + c->name;
    cases.push_back(std::move(*c));
  };
  add(stream_case(env, bulk_read, bulk_op::kRead, {2048, 8, 1, 4}));
  for (std::size_t bytes : {2048, 8192}) {
    add(stream_case(env, bulk_write, bulk_op::kWrite, {bytes, 8, 1}));
  }
  for (std::size_t bytes : {1536, 49152}) add(latency_case(env, bytes));
  return cases;
}

std::vector<bench_case> bulk_cases(environment& env, sweep s) {
  const bool full = s == sweep::kFull;
  std::vector<bench_case> cases;
  auto add = [&](std::optional<bench_case> c) {
    if (c) cases.push_back(std::move(*c));
  };
  const std::size_t smem_per_block =
      std::size_t(device_attribute(env, cudaDevAttrMaxSharedMemoryPerBlockOptin));
  const std::size_t smem_per_sm =
      std::size_t(device_attribute(env, cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  const std::size_t reserved =
      std::size_t(device_attribute(env, cudaDevAttrReservedSharedMemoryPerBlock));
  for (bulk_op op : {bulk_op::kRead, bulk_op::kWrite, bulk_op::kCopy}) {
    const std::vector<bulk_shape> shapes =
        full ? bulk_full_shapes(op, smem_per_block, smem_per_sm, reserved)
             : bulk_quick_shapes(op);
    for (const bulk_shape& shape : shapes) {
      if (op == bulk_op::kRead) add(stream_case(env, bulk_read, op, shape));
      if (op == bulk_op::kWrite) add(stream_case(env, bulk_write, op, shape));
      if (op == bulk_op::kCopy) add(stream_case(env, bulk_copy, op, shape));
    }
  }
  for (std::size_t bytes : bulk_latency_sizes(full)) add(latency_case(env, bytes));
  return cases;
}

}  // namespace gmb
