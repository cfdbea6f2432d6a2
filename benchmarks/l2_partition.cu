// The L2 partition probe, model/l2_partition/steps:512 (the model's calibration; the kernels
// and what they measure: kernels/l2_partition.cuh): after a flush the home SM (the lowest SM
// id) loads a chain of 512 lines per SM; then every SM in turn walks its own 512 lines twice,
// one thread, skipping the L1. Counters (gmb/l2_partition.hpp), ns per step: the second walks'
// median (latency_ns: the near L2 from each SM) and spread; the first walks' median over the
// SMs that find the home SM's lines as near as it does (l2_first_ns) and over those that find
// them farther (l2_first_far_side_ns, their least and most, l2_far_side_sms: how many). One
// iteration walks every SM's segment (21 ms on an H200). Verified: every walk must end on the
// line the chain says, the home SM must have read the lines and every SM walked in every
// launch. Not made where the lines would fill more than half the L2 (a GPU of small L2).
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/builders/chase_chain.cuh"
#include "benchmarks/builders/residency.cuh"
#include "benchmarks/builders/sm_ids.cuh"
#include "benchmarks/families.hpp"
#include "gmb/l2_partition.hpp"
#include "gmb/naming.hpp"
#include "kernels/l2_partition.cuh"

namespace gmb {

using built_once::kPartitionWalkBlock;
using built_once::kPartitionWarmBlock;
using built_once::partition_record;
using built_once::partition_walk_twice;
using built_once::partition_warm;

namespace {

constexpr unsigned kSegmentSteps = 512;  // per SM: 64 KiB of lines, at most 1% off by the last step

/// What the probe keeps between launches: the chain, the ranks by SM id, the records.
struct partition_state {
  chase_chain chain;
  device_buffer ranks, records, warmed;  // warmed: the home SM's launches, and a sink
  std::size_t sms;
  unsigned long long launches = 0;  // since prepare
  std::size_t warm_smem = 0, walk_smem = 0;
  explicit partition_state(std::size_t sms)
      : chain(std::size_t(1) << log2_exact(sms * kSegmentSteps), 1, 1), sms(sms) {}

  void prepare(environment& e) {
    if (ranks.bytes() == 0) {
      const auto warm = residency_smem(partition_warm, kPartitionWarmBlock, 1);
      const auto walk = residency_smem(partition_walk_twice, kPartitionWalkBlock, 1);
      if (!warm || !walk) throw std::runtime_error("cannot launch one block per SM");
      warm_smem = *warm;
      walk_smem = *walk;
      device_buffer table(round_up((kSmIdSlots + 1) * sizeof(unsigned), 16));
      const std::vector<unsigned> ids = present_sm_ids(e, table);
      std::vector<unsigned> by_id(kSmIdSlots, ~0u);
      for (std::size_t rank = 0; rank < ids.size(); ++rank) by_id[ids[rank]] = unsigned(rank);
      GMB_CUDA_CHECK(cudaMemcpyAsync(table.data<void>(), by_id.data(),
                                     kSmIdSlots * sizeof(unsigned), cudaMemcpyHostToDevice,
                                     e.stream()));
      GMB_CUDA_CHECK(cudaStreamSynchronize(e.stream()));  // `by_id` dies here
      records = device_buffer(round_up(sms * sizeof(partition_record), 16));
      warmed = device_buffer(16);
      ranks = std::move(table);
    }
    chain.prepare(e);
    GMB_CUDA_CHECK(cudaMemsetAsync(records.data<void>(), 0, records.bytes(), e.stream()));
    GMB_CUDA_CHECK(cudaMemsetAsync(warmed.data<void>(), 0, warmed.bytes(), e.stream()));
    launches = 0;
    e.reset_counter();
  }

  void launch(environment& e) {
    const unsigned grid = static_cast<unsigned>(sms);
    partition_warm<<<grid, kPartitionWarmBlock, warm_smem, e.stream()>>>(
        chain.lines.data<const std::uint64_t>(), chain.perm, chain.n, sms * kSegmentSteps,
        ranks.data<const unsigned>(), warmed.data<unsigned long long>());
    for (unsigned rank = 0; rank < grid; ++rank) {
      partition_walk_twice<<<grid, kPartitionWalkBlock, walk_smem, e.stream()>>>(
          chain.lines.data<const std::uint64_t>(), chain.perm, chain.n, kSegmentSteps,
          ranks.data<const unsigned>(), rank, records.data<partition_record>(), e.counter());
    }
    ++launches;
  }

  std::vector<partition_record> recorded(environment& e) const {
    const std::size_t words_per_sm = sizeof(partition_record) / 4;
    const auto words = records.copy_words_to_host(0, sms * words_per_sm, e.stream());
    std::vector<partition_record> out(sms);
    std::memcpy(out.data(), words.data(), sms * sizeof(partition_record));
    return out;
  }

  std::string verify(environment& e) const {
    if (const unsigned long long bad = e.read_counter(); bad != 0) {
      return std::to_string(bad) + " walk(s) ended off the chain's line";
    }
    const unsigned long long home = warmed.copy_record_to_host<unsigned long long>(e.stream());
    if (home != launches) {
      return "the home SM read the lines in " + std::to_string(home) + " of " +
             std::to_string(launches) + " launches";
    }
    const auto r = recorded(e);
    for (std::size_t rank = 0; rank < sms; ++rank) {
      if (r[rank].walks != launches) {
        return "the SM of rank " + std::to_string(rank) + " walked in " +
               std::to_string(r[rank].walks) + " of " + std::to_string(launches) + " launches";
      }
      if (r[rank].first_ns == 0 || r[rank].again_ns == 0) return "a walk recorded no time";
    }
    return "";
  }

  measurements measured(environment& e) const {
    std::vector<partition_walk> walks;
    unsigned long long cycles = 0, ns = 0;
    for (const partition_record& r : recorded(e)) {
      if (r.walks == 0) return {};  // verify says which SM did not walk
      const double steps = double(r.walks) * kSegmentSteps;
      walks.push_back({r.first_ns / steps, r.again_ns / steps, r.again_cycles / steps});
      cycles += r.again_cycles;
      ns += r.again_ns;
    }
    measurements m = partition_counters(walks);
    m.push_back({"sm_clock_mhz", ns > 0 ? 1e3 * double(cycles) / double(ns) : 0.0});
    return m;
  }
};

}  // namespace

std::vector<bench_case> l2_partition_calibration_cases(environment& env) {
  const std::size_t lines_bytes = std::size_t(env.device().sms) * kSegmentSteps * kChaseLineBytes;
  if (2 * lines_bytes > env.device().l2_bytes) return {};  // first reads would miss to DRAM
  auto s = std::make_shared<partition_state>(env.device().sms);
  bench_case c;
  c.name = bench_name("model", "l2_partition", {{"steps", kSegmentSteps}});
  c.prepare = [s](environment& e) { s->prepare(e); };
  c.launch = [s](environment& e) { s->launch(e); };
  c.verify = [s](environment& e) { return s->verify(e); };
  c.measured = [s](environment& e) { return s->measured(e); };
  c.release = [s](environment&) {
    s->chain.release();
    s->ranks = device_buffer();
    s->records = device_buffer();
    s->warmed = device_buffer();
  };
  c.bytes_read = 2.0 * double(env.device().sms) * kSegmentSteps * sizeof(std::uint64_t);
  c.launches_per_iteration = 1;
  c.cold_l2 = true;  // the flush leaves no line of the chain in the L2
  c.every_flavor = false;  // its loads skip the L1 in every build
  return {std::move(c)};
}

}  // namespace gmb
