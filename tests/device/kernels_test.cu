// Every benchmark case of every family, run on a small array exactly as the benchmark runs it
// (prepare, launches, verify), then its whole output checked on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "benchmarks/families.hpp"
#include "gmb/host_link.hpp"
#include "gmb/peer_link.hpp"
#include "tests/device/small_environment.cuh"

namespace gmb {
namespace {

using test::kTestArrayBytes;
using test::starts_with;

class Cases : public test::small_environment {};

/// Every word of the output checked on the host against what the case must have written.
template <class Gen>
void expect_output(environment& env, const Gen& gen) {
  const auto host = env.out().copy_words_to_host(0, env.out().words(), env.stream());
  std::size_t wrong = 0;
  for (std::size_t w = 0; w < host.size(); ++w) wrong += host[w] != gen(w);
  EXPECT_EQ(wrong, 0u);
}

bool is_stencil(const std::string& name) {
  return name.find("/stencil/") != std::string::npos;
}

std::string family_of(const std::string& name) {
  return name.substr(0, name.find('/'));
}

TEST_F(Cases, EveryCaseVerifiesAndWritesEveryOutputWord) {
  const auto cases = all_cases(*env_);
  std::map<std::string, int> per_family;
  for (const auto& c : cases) ++per_family[family_of(c.name)];
  const bool peer = describe_peer(env_->device().ordinal).device >= 0;
  const bool mapped = host_mapped_support(0) == "yes";
  // memcpy_peer pull, push and both with a partner; memcpy_h2d and _d2h from pinned memory
  EXPECT_EQ(per_family["ref"], 2 + (peer ? 3 : 0) + (mapped ? 2 : 0));
  EXPECT_EQ(per_family["peer"], peer ? 56 : 0);  // PeerFamilyExists... names them
  EXPECT_EQ(per_family["read"] + per_family["write"] + per_family["copy"], 3 * 4 * 4 * 2);
  EXPECT_EQ(per_family["vector"], 5 * 4);
  EXPECT_GT(per_family["offset"], 0);
  EXPECT_GT(per_family["stride"], 0);
  EXPECT_EQ(per_family["aos"], 6 * 2);
  EXPECT_EQ(per_family["soa"], 6 * 2);
  EXPECT_EQ(per_family["aos_staged"], 6);
  EXPECT_EQ(per_family["warp"], 3);
  EXPECT_EQ(per_family["readonly"], 2 * 3);  // two patterns, three loads each
  // The other paths (host_paths_test.cu and onchip_paths_test.cu check their names).
  EXPECT_EQ(per_family["host"], mapped ? 5 : 0);
  EXPECT_EQ(per_family["managed"], managed_support(0) == "yes" ? 4 : 0);
  EXPECT_EQ(per_family["texture"], 8);
  EXPECT_EQ(per_family["constant"], 11);
  EXPECT_EQ(per_family["local"], 6);
  EXPECT_EQ(per_family["gather"], 1);
  EXPECT_EQ(per_family["scatter"], 1);
  EXPECT_GE(per_family["matrix"], 8);
  EXPECT_EQ(per_family["reuse"], 11 * 2);  // 11 patterns x {driver's, small} L1
  EXPECT_EQ(per_family["cache_op"], 3 * (7 + 3));
  EXPECT_GE(per_family["cache"], 9 + 7);            // 16 KiB .. 4 MiB, and 16 KiB .. 1 MiB small L1
  EXPECT_GE(per_family["latency"], 2 * 5 + 7 + 5);  // 1 and 32 lanes to 256 MiB; 2 x 7 loads
  // The calibration: chases of L1, L2 and DRAM sets by one and 32 lanes, the L2 partition
  // probe's walks from every SM (where its lines fit), two constant loads
  // and one through the L1, two of tables past the SM's constant cache, hot reads from the L1 and, where the arrays and half the L2 hold
  // them, of 1.25, 10 and 20 MiB from the L2, and of 1.5 L2s past it; a bulk read, two bulk
  // writes and two bulk copies' latencies (run from sm_90 on); the six reduce rungs' trees alone, 8 and 1 blocks per
  // SM; the loaded chase
  // at 7 loads of reads, 6 of copies and 6 of mixes (those below every SM but the chase's); f32 reads,
  // writes and both at 7 strides, reads and writes at 3 more past a page (24 to 48 GiB each:
  // those the GPU's free memory holds); the f32 copy with 4 counts of instructions more; the
  // misaligned stores' copy; four mixes of reads and writes (one of them to two outputs);
  // three copies 16 deep; empty blocks of 128 threads, one per SM; persistent reads of two
  // and four loads per thread, 4 and 3 blocks per SM; one load per thread at 6 blocks per SM,
  // plain and by cp.async (skipped before sm_80); blocks of 1,024 threads one per tile, one per
  // SM; the column and the row walks 2,000 wide; the transposes' tiles moved by 32 x 8 and
  // 32 x 32 threads, the padded exchange and its stores; the three migrations of managed pages
  // at two sizes each (where they migrate); the spilling kernel at half its rounds; the gather
  // of L2 hits over 2 GiB (the address translation).
  // the L2 partition probe where its lines (64 KiB per SM) fill at most half the L2
  const int partition =
      2 * std::size_t(env_->device().sms) * 64 * 1024 <= env_->device().l2_bytes ? 1 : 0;
  int l2_probes = 0;
  for (std::size_t set : {5 * kMiB / 4, 10 * kMiB, 20 * kMiB}) {
    l2_probes += env_->array_bytes() >= set && 2 * set <= env_->device().l2_bytes ? 1 : 0;
  }
  l2_probes += env_->array_bytes() >= env_->device().l2_bytes * 3 / 2 ? 1 : 0;  // past the L2
  int loaded = 0;
  for (unsigned k :
       {8, 24, 40, 56, 80, 112, 128, 8, 24, 48, 80, 112, 128, 8, 24, 48, 80, 112, 128}) {
    loaded += k + 1 < static_cast<unsigned>(env_->device().sms) ? 1 : 0;
  }
  const int calibration =
      3 * 2 + partition + 3 + 2 + 1 + l2_probes + 5 + 6 * 2 + loaded + 7 * 3 + 4 + 1 + 4 + 3 +
      1 + 2 + 3 + 2 + 4 + 1 + (managed_support(0) == "yes" ? 3 * 2 : 0) + 1;
  EXPECT_GE(per_family["model"], calibration);
  EXPECT_LE(per_family["model"], calibration + 3 * 2);
  EXPECT_EQ(per_family["tlb"], 2 + 2 + 3);  // spans of 4-KiB, 64-KiB and 2-MiB steps
  // Read and copy cases (less those the registers cannot hold), block-slot cases.
  // ... and cp.async reads (sm_80 on; skipped before): 4-B words at 2 and 8 blocks of 256 per
  // SM, 16-B words one and four per thread at the same (four at 8 blocks: where the registers
  // hold it); persistent writes of 4-B words four per thread and 16-B words, and a copy of
  // 4-B words four per thread, at 8 blocks of 256 per SM.
  EXPECT_GE(per_family["inflight"], 31 + 6 + 5 + 3);
  EXPECT_LE(per_family["inflight"], 31 + 6 + 6 + 3);
  // Bulk copies: 12 reads, 2 writes, 2 copies, 4 latencies (gmb/bulk.hpp); a GPU of 100 KiB
  // of shared memory per SM holds neither a copy of 128 KiB nor 4 stages of 32 KiB (5 shapes).
  EXPECT_GE(per_family["bulk"], 12 + 2 + 2 + 4 - 5);
  EXPECT_LE(per_family["bulk"], 12 + 2 + 2 + 4);
  if (env_->device().cc_major == 9) EXPECT_EQ(per_family["bulk"], 12 + 2 + 2 + 4);
  EXPECT_EQ(per_family["transpose"], 8 + 2);   // eight f32 rungs (tile_tma on sm_90+ too); f64 copy and top
  EXPECT_EQ(per_family["reduce"], 7 + 1 + 2);  // seven f32 rungs, i32's top; CUB for both

  const double array = static_cast<double>(kTestArrayBytes);
  const device_info& d = env_->device();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    // What the binary skips on this GPU (FeatureSelectionRunsEveryPathThisGpuHas).
    if (!unsupported_reason(c.needs, d.cc_major, d.cc_minor).empty()) continue;
    measurements measured;
    EXPECT_EQ(run_untimed(*env_, c, 2, &measured), "");
    // The model family's probes are checked as the family whose kernel each runs.
    std::string family = family_of(c.name);
    if (starts_with(c.name, "model/chase/") || starts_with(c.name, "model/loaded/") ||
        starts_with(c.name, "model/l2_partition/")) {
      family = "latency";
    }
    if (starts_with(c.name, "model/stride/")) family = "stride";
    if (starts_with(c.name, "model/offset/")) family = "offset";
    if (starts_with(c.name, "model/read/")) family = "cache";
    if (starts_with(c.name, "model/constant/")) family = "constant";
    if (starts_with(c.name, "model/bulk/")) family = "bulk";
    if (starts_with(c.name, "model/instructions/")) family = "copy";
    if (starts_with(c.name, "model/copy/")) family = "copy";
    if (starts_with(c.name, "model/mix/")) family = "soa";
    if (starts_with(c.name, "model/matrix/")) family = "matrix";
    if (starts_with(c.name, "model/managed/")) family = "managed";
    if (starts_with(c.name, "model/local/")) family = "local";
    if (starts_with(c.name, "model/translation/")) family = "translation";
    if (starts_with(c.name, "model/blocks/") || starts_with(c.name, "model/inflight/")) {
      family = "inflight";
    }
    // ... and by its family's name
    const std::string bare = starts_with(c.name, "model/") ? c.name.substr(6) : c.name;
    if (family == "aos" || family == "soa" || family == "aos_staged") {
      // verify() checked every output word against the xor of the fields it must read.
      EXPECT_GT(c.bytes_written, 0.0);
      EXPECT_GE(c.bytes_read, c.bytes_written);
      ASSERT_TRUE(c.model.has_value());
      EXPECT_GE(c.model->dram_bytes, 0.99 * (c.bytes_read + c.bytes_written));
      continue;
    }
    if (family == "translation") {  // a mapped copy whose set the L2 keeps: DRAM reads it once
      EXPECT_GT(c.bytes_written, 0.0);
      EXPECT_EQ(c.bytes_read, c.bytes_written);
      ASSERT_TRUE(c.model.has_value());
      EXPECT_DOUBLE_EQ(c.model->dram_bytes, 131072.0 * 64 + c.bytes_written);
      continue;
    }
    if (family == "offset" || family == "stride" || family == "warp" || family == "gather" ||
        family == "scatter") {
      // Mapped copies: verify() checked every destination. Gather and scatter also read
      // their index table.
      EXPECT_GT(c.bytes_written, 0.0);
      const bool indexed = family == "gather" || family == "scatter";
      EXPECT_EQ(c.bytes_read, c.bytes_written * (indexed ? 2 : 1));
      ASSERT_TRUE(c.model.has_value());
      if (c.name == "warp/broadcast") {
        // A warp's 32 reads are one 64-B chunk from DRAM; its 128 B of writes all count.
        EXPECT_NEAR(c.model->dram_bytes, 0.75 * (c.bytes_read + c.bytes_written),
                    0.01 * c.bytes_read);
      } else {
        EXPECT_GE(c.model->dram_bytes, 0.99 * (c.bytes_read + c.bytes_written));
      }
      continue;
    }
    if (family == "reuse" || family == "cache_op" || family == "readonly") {
      // verify() checked every output word against the xor of the words its map reads.
      EXPECT_GT(c.bytes_written, 0.0);
      EXPECT_GE(c.bytes_read, c.bytes_written);
      ASSERT_TRUE(c.model.has_value());
      EXPECT_GE(c.model->dram_bytes, 0.99 * (c.bytes_read + c.bytes_written));
      const bool one_word_each =
          starts_with(c.name, "cache_op/gather/") || (family == "readonly" && !is_stencil(c.name));
      if (one_word_each) EXPECT_LE(c.bytes_read, c.bytes_written + 4);  // one read per thread
      EXPECT_EQ(c.every_flavor, true);
      continue;
    }
    if (family == "cache") {  // hot working sets: no flush, no DRAM model
      EXPECT_FALSE(c.cold_l2);
      EXPECT_FALSE(c.model.has_value());
      EXPECT_GT(c.bytes_read, 0.0);
      EXPECT_EQ(c.bytes_written, 0.0);
      continue;
    }
    std::map<std::string, double> counters(measured.begin(), measured.end());
    if (family == "bulk") {  // verify() checked every word read, written or copied
      EXPECT_FALSE(c.every_flavor);  // built once: TMA's copies, no LDG or STG
      EXPECT_EQ(c.needs, gpu_feature::kBulkCopy);
      EXPECT_GT(c.bytes_read + c.bytes_written, 0.0);
      EXPECT_LE(c.bytes_read, array);
      EXPECT_LE(c.bytes_written, array);
      if (starts_with(bare, "bulk/latency/")) {
        EXPECT_EQ(c.bytes_written, 0.0);
        EXPECT_GT(counters["latency_ns"], 1.0);
        EXPECT_GT(counters["latency_cycles"], 1.0);
        EXPECT_GT(counters["sm_clock_mhz"], 100.0);
      } else {
        const bool read = starts_with(bare, "bulk/read/");
        const bool write = starts_with(bare, "bulk/write/");
        EXPECT_EQ(c.bytes_read > 0, !write);
        EXPECT_EQ(c.bytes_written > 0, !read);
        if (!read && !write) EXPECT_EQ(c.bytes_read, c.bytes_written);  // copies
        EXPECT_GT(counters["bytes_in_flight_per_sm"], 0.0);
        EXPECT_GE(counters["resident_blocks_per_sm"], 1.0);
      }
      continue;
    }
    if (family == "inflight") {  // verify() checked every output word or every element read
      if (starts_with(c.name, "inflight/blocks/") || starts_with(c.name, "model/blocks/")) {
        EXPECT_GT(counters["block_slot_ns"], 0.0);
        EXPECT_GT(counters["blocks_per_us"], 0.0);
      } else {
        // One warp per SM reads an eighth of the array; every other case all of it.
        const bool one_warp = c.name.find("/block:32/bpsm:1/") != std::string::npos;
        const double bytes = one_warp ? array / 8 : array;
        const bool write = starts_with(c.name, "inflight/write/");
        EXPECT_EQ(c.bytes_read, write ? 0.0 : bytes);
        EXPECT_EQ(c.bytes_written, write || starts_with(c.name, "inflight/copy/") ? bytes : 0.0);
        EXPECT_GT(counters["bytes_in_flight_per_sm"], 0.0);
      }
      EXPECT_GE(counters["resident_blocks_per_sm"], 1.0);
      continue;
    }
    if (family == "transpose") {  // verify() checked every output word and the poison after
      EXPECT_EQ(c.bytes_read, c.bytes_written);
      EXPECT_LE(c.bytes_read, array);
      ASSERT_TRUE(c.model.has_value());
      ASSERT_EQ(counters.count("rung"), 1u);
      EXPECT_GE(counters["rung"], 0.0);
      continue;
    }
    if (starts_with(c.name, "model/transpose/")) {  // verify() checked every output word
      // the moved tiles read and write the matrix; the exchange and its stores only write it
      EXPECT_EQ(c.bytes_read, starts_with(c.name, "model/transpose/f32/moved/") ? c.bytes_written
                                                                                  : 0.0);
      EXPECT_GT(c.bytes_written, 0.0);
      EXPECT_LE(c.bytes_written, array);
      continue;
    }
    if (starts_with(c.name, "model/reduce/")) {  // verify() checked every block's sum
      EXPECT_EQ(c.bytes_read, 0.0);
      EXPECT_GT(c.bytes_written, 0.0);
      continue;
    }
    if (family == "reduce") {  // verify() checked the sum against the host's
      EXPECT_EQ(c.bytes_read, array);
      EXPECT_EQ(c.bytes_written, 0.0);
      EXPECT_EQ(counters.count("rung"), c.name.find("/cub") == std::string::npos ? 1u : 0u);
      continue;
    }
    if (family == "latency" || family == "tlb") {  // verify() checked where each walk ended
      EXPECT_EQ(c.bytes_written, 0.0);
      EXPECT_GT(c.bytes_read, 0.0);
      EXPECT_GT(counters["latency_ns"], 1.0);
      EXPECT_GT(counters["latency_cycles"], 1.0);
      EXPECT_GT(counters["sm_clock_mhz"], 100.0);
      EXPECT_LT(counters["sm_clock_mhz"], 1.05e-3 * env_->device().max_sm_clock_khz);
      if (starts_with(c.name, "model/l2_partition/")) {  // each SM walked, the home read (verify)
        EXPECT_LE(counters["l2_near_ns_min"], counters["latency_ns"]);
        EXPECT_GE(counters["l2_near_ns_max"], counters["latency_ns"]);
        EXPECT_GT(counters["l2_first_ns"], 0.5 * counters["latency_ns"]);
        EXPECT_LT(counters["l2_far_side_sms"], env_->device().sms);
        EXPECT_FALSE(c.every_flavor);
      }
      continue;
    }
    if (family == "host" || family == "managed" || family == "texture" || family == "constant" ||
        family == "local" || starts_with(c.name, "ref/memcpy_h2d/") ||
        starts_with(c.name, "ref/memcpy_d2h/")) {
      // Built once, run in the default flavor; verify() checked the output (the family's own
      // test file checks bytes and counters).
      EXPECT_FALSE(c.every_flavor);
      EXPECT_GT(c.bytes_read + c.bytes_written, 0.0);
      continue;
    }
    if (family == "peer" || starts_with(c.name, "ref/memcpy_peer/")) {
      // verify() checked the partner's array, the output, or where each walk over the link
      // ended (PeerFamily... checks the names).
      EXPECT_GT(c.bytes_read + c.bytes_written, 0.0);
      if (starts_with(c.name, "peer/chase/")) EXPECT_GT(counters["latency_ns"], 1.0);
      const double most = c.name.find("/dir:both") == std::string::npos ? array : 2 * array;
      EXPECT_LE(c.bytes_read, most);
      EXPECT_LE(c.bytes_written, most);
      continue;
    }
    if (family == "matrix") {  // verify() checked the matrix and the untouched padding
      EXPECT_GT(c.bytes_read, 0.0);
      EXPECT_EQ(c.bytes_read, c.bytes_written);
      continue;
    }
    if (family == "copy" || family == "vector" || c.name == "ref/memcpy_d2d") {
      expect_output(*env_, kInputPattern);
      EXPECT_EQ(c.bytes_read, array);
      EXPECT_EQ(c.bytes_written, array);
    } else if (family == "write" || c.name == "ref/memset") {
      if (c.name == "ref/memset") {
        expect_output(*env_, kMemsetWords);
      } else {
        expect_output(*env_, kWritePattern);
      }
      EXPECT_EQ(c.bytes_read, 0.0);
      EXPECT_EQ(c.bytes_written, array);
    } else {
      ASSERT_EQ(family, "read");
      EXPECT_EQ(c.bytes_read, array);
      EXPECT_EQ(c.bytes_written, 0.0);
    }
    if (c.model) EXPECT_DOUBLE_EQ(c.model->dram_bytes, c.bytes_read + c.bytes_written);
  }
}

/// The cases that need a newer GPU's feature (gmb/arch_facts.hpp) are the cp.async reads and
/// transposes, the bulk copies and the TMA transposes; the GPU under test runs them exactly when
/// it has the feature (every path on Hopper).
TEST_F(Cases, FeatureSelectionRunsEveryPathThisGpuHas) {
  const device_info& d = env_->device();
  const int cc = d.cc_major * 10 + d.cc_minor;
  std::size_t async = 0, async_reads = 0, bulk = 0, tma = 0;
  for (const auto& c : all_cases(*env_, sweep::kFull)) {
    const bool tma_rung = c.name.find("/tile_tma/") != std::string::npos;
    tma += tma_rung;
    const bool bulk_copies = starts_with(c.name, "bulk/") || starts_with(c.name, "model/bulk/") ||
                             starts_with(c.name, "peer/bulk/");  // the calibration's, the link's
    EXPECT_EQ(c.needs == gpu_feature::kBulkCopy, bulk_copies || tma_rung) << c.name;
    if (c.needs == gpu_feature::kNone) continue;
    SCOPED_TRACE(c.name);
    if (c.needs == gpu_feature::kBulkCopy) {
      ++bulk;
      EXPECT_EQ(unsupported_reason(c.needs, d.cc_major, d.cc_minor).empty(), cc >= 90);
    } else if (starts_with(c.name, "inflight/read_async/") ||
               starts_with(c.name, "model/inflight/read_async/")) {  // the calibration's too
      ++async_reads;
      EXPECT_EQ(c.needs, gpu_feature::kAsyncCopy);
    } else {
      ++async;
      EXPECT_EQ(c.needs, gpu_feature::kAsyncCopy);
      EXPECT_NE(c.name.find("/tile_async/"), std::string::npos);
      EXPECT_EQ(unsupported_reason(c.needs, d.cc_major, d.cc_minor).empty(), cc >= 80);
    }
    if (d.cc_major >= 9) EXPECT_EQ(unsupported_reason(c.needs, d.cc_major, d.cc_minor), "");
  }
  EXPECT_EQ(async, 4u);  // tile_async of f32 and f64 at two sizes each (the full sweep)
  EXPECT_EQ(tma, 2u);    // tile_tma of f32 at two sizes
  EXPECT_GT(async_reads, 3u * 4 * 10);  // every word, ilp and shape the registers hold
  EXPECT_GT(bulk, 3u * 60);  // gmb/bulk.hpp's full shapes for each op, and the latencies
}

/// Each bulk kernel on Hopper and newer, run as the benchmark runs it: the counters say what the
/// name says (bytes in flight, residency), and a copy of 64 KiB takes longer than one of 1 KiB.
TEST_F(Cases, BulkCopiesKeepTheBytesInFlightTheirNamesSay) {
  const device_info& d = env_->device();
  if (!unsupported_reason(gpu_feature::kBulkCopy, d.cc_major, d.cc_minor).empty()) {
    GTEST_SKIP() << unsupported_reason(gpu_feature::kBulkCopy, d.cc_major, d.cc_minor);
  }
  auto param = [](const std::string& name, const std::string& key) {
    const std::size_t at = name.find("/" + key + ":");
    return at == std::string::npos ? -1.0 : std::stod(name.substr(at + key.size() + 2));
  };
  std::map<std::string, double> latency;
  std::set<std::string> ops;
  for (const auto& c : all_cases(*env_)) {
    if (!starts_with(c.name, "bulk/")) continue;
    SCOPED_TRACE(c.name);
    measurements measured;
    ASSERT_EQ(run_untimed(*env_, c, 2, &measured), "");
    std::map<std::string, double> counters(measured.begin(), measured.end());
    const std::string op = c.name.substr(5, c.name.find('/', 5) - 5);
    ops.insert(op);
    if (op == "latency") {
      latency[c.name] = counters.at("latency_ns");
      continue;
    }
    const double bpsm = param(c.name, "bpsm");
    EXPECT_EQ(counters.at("bytes_in_flight_per_sm"),
              param(c.name, "bytes") * param(c.name, "stages") * bpsm);
    EXPECT_EQ(counters.at("resident_blocks_per_sm"), bpsm);
    EXPECT_EQ(param(c.name, "warps") > 0, op == "read");  // reads name their checking warps
    EXPECT_GE(counters.at("smem_per_block"), param(c.name, "bytes") * param(c.name, "stages"));
  }
  EXPECT_EQ(ops, (std::set<std::string>{"read", "write", "copy", "latency"}));
  EXPECT_LT(latency.at("bulk/latency/bytes:1024"), latency.at("bulk/latency/bytes:65536"));
}

TEST_F(Cases, OffsetAndStrideNamesCoverTheirSweeps) {
  std::set<std::string> names;
  for (const auto& c : all_cases(*env_, sweep::kFull)) names.insert(c.name);
  for (const char* name :
       {"offset/f32/read/off:0", "offset/f32/copy/off:32", "offset/f32x2/write/off:16",
        "offset/f32x4/copy/off:8", "stride/f32/read/s:1", "stride/f32/both/s:31",
        "stride/f64/write/s:32", "stride/f32/read/s:1024", "offset/f32/copy/off:1/ilp:4",
        "offset/f32x4/write/off:8/ilp:4", "stride/f64/both/s:32/ilp:4",
        "tlb/chase/step:4096/span:2097152"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
  EXPECT_EQ(names.count("offset/f32x4/read/off:9"), 0u);  // past 128 bytes
}

TEST_F(Cases, PeerFamilyExistsExactlyWhereThereIsAPartner) {
  const peer_partner partner = describe_peer(env_->device().ordinal);
  const auto cases = peer_cases(*env_, sweep::kQuick);
  if (partner.device < 0) {
    EXPECT_TRUE(cases.empty());
    EXPECT_FALSE(partner.reason.empty());
    GTEST_SKIP() << "no peer: " << partner.reason;
  }
  std::set<std::string> names;
  for (const auto& c : cases) names.insert(c.name);
  for (const char* name :
       {"peer/read/f32/ilp:1", "peer/write/f32x4/ilp:4", "peer/copy/f32x4/ilp:4/dir:pull",
        "peer/copy/f32/ilp:1/dir:push", "peer/copy/f32x4/ilp:1/dir:both",
        "peer/copy/f32x4/ilp:8/dir:pull", "peer/copy/f32x4/ilp:8/dir:push",
        "peer/copy/f32x4/ilp:8/dir:both", "peer/copy/f32x4/ilp:4/dir:from_all",
        "peer/copy/f32x4/ilp:4/dir:to_all", "peer/copy/f32/off:1/dir:pull",
        "peer/copy/f32/s:8/dir:pull", "peer/copy/f32/s:32/dir:pull", "peer/read/f64/ilp:1",
        "peer/copy/f64/ilp:1/dir:push", "peer/copy/f32/run:32/dir:pull",
        "peer/copy/f32/run:128/dir:push", "peer/copy/f32x4/ilp:4/dir:both_pull",
        "peer/copy/f32x4/ilp:4/dir:split", "peer/chase/ws:16384/lanes:1",
        "peer/chase/ws:268435456/lanes:1", "ref/memcpy_peer/dir:pull", "ref/memcpy_peer/dir:push",
        "ref/memcpy_peer/dir:both"}) {
    EXPECT_EQ(names.count(name), 1u) << name;
  }
  const auto sms = static_cast<unsigned>(env_->device().sms);
  EXPECT_EQ(names.count("peer/copy/f32x4/ilp:4/dir:pull/blocks:" + std::to_string(sms)), 1u);
  EXPECT_EQ(names.count("peer/bulk/copy/bytes:16384/stages:4/bpsm:1/dir:pull"), 1u);
  EXPECT_EQ(cases.size(), 59u);
  // pct_peak is of the link: each case's peak is the link's one-way rate times (read +
  // written) / the bytes crossing one way (peer.cu's rule), where the rate is known.
  const double rate = query_peer_link(env_->device().ordinal, {partner.device}).bytes_per_second;
  for (const auto& c : cases) {
    if (rate <= 0 || c.name.find("/dir:from_all") != std::string::npos ||
        c.name.find("/dir:to_all") != std::string::npos) {
      continue;  // from_all/to_all: the rate of the links to every peer
    }
    const bool both = c.name.find("/dir:both") != std::string::npos ||  // both_pull too
                      c.name.find("/dir:split") != std::string::npos;     // half each way
    const bool one_way_copy =
        !both && (starts_with(c.name, "peer/copy/") || starts_with(c.name, "peer/bulk/copy/") ||
                  starts_with(c.name, "ref/memcpy_peer/"));
    EXPECT_DOUBLE_EQ(c.peak_bytes_per_second, rate * (both ? 4 : one_way_copy ? 2 : 1)) << c.name;
  }
  const device_info& d = env_->device();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    if (!unsupported_reason(c.needs, d.cc_major, d.cc_minor).empty()) continue;  // bulk: sm_90
    EXPECT_EQ(run_untimed(*env_, c), "");
  }
}

// The model predicts each benchmark from parameters its own family did not measure; a probe
// of the calibration must not be a benchmark of the default run under another name.
TEST_F(Cases, NoCalibrationProbeIsABenchmarkOfTheDefaultRun) {
  const auto cases = all_cases(*env_);
  std::set<std::string> names;
  for (const auto& c : cases) names.insert(c.name);
  // probes named by their kernel's variant where the family's names carry the family
  const std::map<std::string, std::string> family_of_variant = {
      {"read/ws:", "cache/"}, {"chase/", "latency/"}, {"loaded/", "latency/"},
      {"blocks/", "inflight/"}};
  int probes = 0;
  for (const auto& c : cases) {
    if (!starts_with(c.name, "model/")) continue;
    ++probes;
    const std::string bare = c.name.substr(6);
    EXPECT_EQ(names.count(bare), 0u) << c.name;
    for (const auto& [variant, family] : family_of_variant) {
      if (starts_with(bare, variant)) EXPECT_EQ(names.count(family + bare), 0u) << c.name;
    }
  }
  EXPECT_GT(probes, 0);
}

TEST_F(Cases, VerificationRejectsAnUnwrittenOutput) {
  for (const auto& c : all_cases(*env_)) {
    if (starts_with(c.name, "read/") || starts_with(c.name, "cache/") ||
        starts_with(c.name, "model/read/") || starts_with(c.name, "inflight/read") ||
        starts_with(c.name, "model/inflight/read") || starts_with(c.name, "managed/read/") ||
        starts_with(c.name, "model/managed/read/") || starts_with(c.name, "peer/read/") ||
        starts_with(c.name, "bulk/read/") || starts_with(c.name, "bulk/latency/") ||
        starts_with(c.name, "model/bulk/read/") || starts_with(c.name, "peer/bulk/read/")) {
      continue;  // checking reads write nothing; see the next test
    }
    SCOPED_TRACE(c.name);
    c.prepare(*env_);  // poisons the output; no launch
    EXPECT_NE(c.verify(*env_), "");
    if (c.release) c.release(*env_);
  }
}

TEST_F(Cases, ChaseLatencyGrowsFromL1ToDram) {
  std::map<std::string, double> ns;
  for (const auto& c : all_cases(*env_)) {
    if (!starts_with(c.name, "latency/chase/") || c.name.find("lanes:1") == std::string::npos) {
      continue;
    }
    SCOPED_TRACE(c.name);
    measurements measured;
    ASSERT_EQ(run_untimed(*env_, c, 3, &measured), "");
    for (const auto& [key, value] : measured) {
      if (key == "latency_ns") ns[c.name] = value;
    }
  }
  const double l1 = ns["latency/chase/ws:16384/lanes:1"];
  const double l2 = ns["latency/chase/ws:1048576/lanes:1"];
  const double dram = ns["latency/chase/ws:268435456/lanes:1"];
  EXPECT_LT(l1, l2);
  EXPECT_LT(l2, dram);
}

/// Cases of one family on an array of 512 MiB (8x an H100's or H200's L2: DRAM, and enough
/// tiles for every persistent grid), run as the benchmark runs them; their measurements.
std::map<std::string, std::map<std::string, double>> measure_family(const char* prefix) {
  environment env(0, 512 * kMiB);
  std::map<std::string, std::map<std::string, double>> out;
  for (const auto& c : all_cases(env)) {
    if (!starts_with(c.name, prefix)) continue;
    SCOPED_TRACE(c.name);
    measurements measured;
    EXPECT_EQ(run_untimed(env, c, 2, &measured), "");
    out[c.name] = std::map<std::string, double>(measured.begin(), measured.end());
  }
  return out;
}

TEST_F(Cases, PersistentGridsHoldTheResidencyTheyAskFor) {
  const int sms = env_->device().sms;
  int checked = 0;
  for (auto& [name, counters] : measure_family("inflight/")) {
    if (name.find("grid:persistent") == std::string::npos) continue;
    SCOPED_TRACE(name);
    const double bpsm = std::stod(name.substr(name.find("bpsm:") + 5));
    EXPECT_EQ(counters["resident_blocks_per_sm"], bpsm);  // the occupancy API's count
    EXPECT_EQ(counters["sms_used"], sms);                 // where the blocks really ran
    EXPECT_EQ(counters["blocks_per_sm_min"], bpsm);
    EXPECT_EQ(counters["blocks_per_sm_max"], bpsm);
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

TEST_F(Cases, LoadedLatencyRisesWithTheLoad) {
  const auto loaded = measure_family("latency/loaded/");
  for (const char* load : {"read", "copy"}) {
    SCOPED_TRACE(load);
    const std::string prefix = std::string("latency/loaded/load:") + load + "/";
    const auto& idle = loaded.at(prefix + "sms:0");
    EXPECT_EQ(idle.at("load_gbs"), 0.0);
    EXPECT_GT(idle.at("latency_ns"), 200.0);  // DRAM, not a cache
    double most = 0, busiest_ns = 0;
    for (const auto& [name, counters] : loaded) {
      if (name.rfind(prefix, 0) == 0 && counters.at("load_gbs") > most) {
        most = counters.at("load_gbs");
        busiest_ns = counters.at("latency_ns");
      }
    }
    EXPECT_GT(most, 0.5 * env_->device().peak_bytes_per_second() / 1e9);  // a saturating load
    EXPECT_GT(busiest_ns, 1.2 * idle.at("latency_ns"));
  }
}

TEST_F(Cases, VerificationRejectsOneWrongOutputWord) {
  for (const auto& c : all_cases(*env_)) {
    if (!starts_with(c.name, "copy/") && !starts_with(c.name, "write/") &&
        !starts_with(c.name, "vector/") && !starts_with(c.name, "inflight/write/")) {
      continue;  // mapped copies leave gaps a planted word could fall into
    }
    SCOPED_TRACE(c.name);
    ASSERT_EQ(run_untimed(*env_, c, 1), "");
    env_->out().write_word(env_->out().words() / 3, 0u, env_->stream());
    EXPECT_NE(c.verify(*env_), "");
  }
}

TEST_F(Cases, CheckingReadsReportAWrongInputWord) {
  for (const auto& c : all_cases(*env_)) {
    // working sets (and the calibration's) are read many times
    const bool rereads = starts_with(c.name, "cache/") || starts_with(c.name, "model/read/");
    const device_info& d = env_->device();
    const bool staged = (starts_with(c.name, "bulk/read/") || starts_with(c.name, "bulk/latency/") ||
                         starts_with(c.name, "inflight/read_async/")) &&
                        unsupported_reason(c.needs, d.cc_major, d.cc_minor).empty();
    const bool inflight_read =
        starts_with(c.name, "inflight/read/") || starts_with(c.name, "model/inflight/read/");
    if (!starts_with(c.name, "read/") && !inflight_read && !rereads && !staged) {
      continue;
    }
    SCOPED_TRACE(c.name);
    c.prepare(*env_);
    env_->in().write_word(1234, 0u, env_->stream());  // inside the smallest working set
    c.launch(*env_);
    if (rereads) {
      EXPECT_GE(env_->read_counter(), 1u);
    } else {
      EXPECT_EQ(env_->read_counter(), 1u);
    }
    EXPECT_NE(c.verify(*env_), "");  // the run saw a wrong word
  }
}

}  // namespace
}  // namespace gmb
