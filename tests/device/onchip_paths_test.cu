// The texture, constant and local families on a small array, every case of the full sweep run
// as the benchmark runs it: verification passes, an unwritten output, a wrong output word and a
// wrong input word are caught, and the counters say what the compiler made of the kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "benchmarks/families.hpp"
#include "tests/device/small_environment.cuh"

namespace gmb {
namespace {

using test::kTestArrayBytes;
using test::starts_with;

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class OnChipPaths : public test::small_environment {
 protected:
  /// The three families' cases.
  std::vector<bench_case> cases(sweep s) {
    std::vector<bench_case> all;
    for (auto family : {texture_cases, constant_cases, local_cases}) {
      for (auto& c : family(*env_, s)) all.push_back(std::move(c));
    }
    return all;
  }
};

std::set<std::string> names_of(const std::vector<bench_case>& cases) {
  std::set<std::string> names;
  for (const auto& c : cases) names.insert(c.name);
  return names;
}

std::size_t count_prefix(const std::set<std::string>& names, const std::string& prefix) {
  return std::count_if(names.begin(), names.end(),
                       [&](const std::string& n) { return starts_with(n, prefix); });
}

TEST_F(OnChipPaths, SweepsHaveTheirCasesAndNames) {
  const auto quick = names_of(cases(sweep::kQuick));
  const auto full = names_of(cases(sweep::kFull));
  EXPECT_EQ(count_prefix(quick, "texture/"), 3u * 2 + 2);     // 3 walks x 2 paths, 2 writes
  EXPECT_EQ(count_prefix(full, "texture/"), 6u * 5 + 3 * 2);  // 6 walks x 5 paths, 3 x 2 writes
  EXPECT_EQ(count_prefix(quick, "constant/"), 6u + 2 * 2 + 1);
  EXPECT_EQ(count_prefix(full, "constant/"), 6u * 3 + 6 * 2);  // 3 paths; 2..64 KiB x 2
  EXPECT_EQ(count_prefix(quick, "local/"), 1u + 3 + 2);
  EXPECT_EQ(count_prefix(full, "local/"), 3u * 3 + 2);
  EXPECT_EQ(quick.size(), 8u + 11 + 6);
  for (const char* name :
       {"texture/read/cols/block:32x8/path:global", "texture/read/cols/block:32x8/path:array",
        "texture/read/cols/block:256x1/path:global", "texture/read/stencil/path:array",
        "texture/read/stencil/path:global", "texture/write/rows/path:surface",
        "texture/write/rows/path:global", "constant/read/distinct:1/ws:1024/path:constant",
        "constant/read/distinct:32/ws:1024/path:constant",
        "constant/read/distinct:1/ws:1024/path:global",
        "constant/read/distinct:32/ws:1024/path:ldg",
        "constant/read/distinct:1/ws:65536/path:constant", "local/array/index:static/size:32",
        "local/array/index:uniform/size:32", "local/array/index:lane/size:32",
        "local/array/index:uniform/size:8", "local/spill/live:64/regs:32",
        "local/spill/live:64/regs:255"}) {
    EXPECT_EQ(quick.count(name), 1u) << name;
    EXPECT_EQ(full.count(name), 1u) << name;
  }
  for (const char* name :
       {"texture/read/rows/path:tex1d", "texture/read/rows/path:tex2d",
        "texture/read/rows/path:global", "texture/read/gather/tile:32/path:array",
        "texture/read/stencil/path:ldg", "texture/read/gather/tile:16/path:array",
        "texture/write/cols/block:256x1/path:surface",
        "constant/read/distinct:4/ws:1024/path:global",
        "constant/read/distinct:32/ws:2048/path:constant", "local/array/index:lane/size:128",
        "local/array/index:static/size:8"}) {
    EXPECT_EQ(quick.count(name), 0u) << name;
    EXPECT_EQ(full.count(name), 1u) << name;
  }
}

TEST_F(OnChipPaths, EveryCaseVerifiesWithItsBytesAndCounters) {
  const double n_matrix = double(kTestArrayBytes) / 4;  // 4096 x 256: the whole array
  for (const auto& c : cases(sweep::kFull)) {
    SCOPED_TRACE(c.name);
    measurements measured;
    ASSERT_EQ(run_untimed(*env_, c, 2, &measured), "");
    const std::map<std::string, double> counters(measured.begin(), measured.end());
    EXPECT_FALSE(c.every_flavor);  // compiled once: the default flavor runs them
    if (starts_with(c.name, "texture/")) {
      EXPECT_TRUE(c.cold_l2);
      EXPECT_EQ(c.bytes_written, 4 * n_matrix);
      EXPECT_EQ(c.bytes_read, starts_with(c.name, "texture/write/") ? 0.0 : 4 * n_matrix);
      // The model only where plain or __ldg loads and stores follow the walk's index map.
      EXPECT_EQ(c.model.has_value(), has(c.name, "path:global") || has(c.name, "path:ldg"));
      EXPECT_EQ(c.release != nullptr, !has(c.name, "path:global") && !has(c.name, "path:ldg"));
    } else if (starts_with(c.name, "constant/")) {
      EXPECT_FALSE(c.cold_l2);
      EXPECT_GT(c.bytes_written, 0.0);
      EXPECT_EQ(c.bytes_read, 128 * c.bytes_written);  // 128 loads of 4 B per written word
      EXPECT_GT(counters.at("warp_loads_per_ns"), 0.0);
    } else {
      ASSERT_TRUE(starts_with(c.name, "local/"));
      EXPECT_FALSE(c.cold_l2);
      EXPECT_GT(counters.at("registers_per_thread"), 0.0);
      EXPECT_GE(counters.at("resident_blocks_per_sm"), 1.0);
      // Local memory exactly where the names say: the run-time indexed arrays of 32 words and
      // more, and the 32-register bound; not the compile-time indices, the 8-word array or the
      // unbounded kernel.
      const bool local = (has(c.name, "index:uniform") || has(c.name, "index:lane"))
                             ? !has(c.name, "size:8")
                             : has(c.name, "regs:32");
      EXPECT_EQ(counters.at("local_bytes_per_thread") > 0, local);
      if (has(c.name, "regs:32")) EXPECT_LE(counters.at("registers_per_thread"), 32.0);
      if (starts_with(c.name, "local/array/")) {
        // One global word each way per thread; the array's words written once, 64 read.
        const double size = std::stod(c.name.substr(c.name.find("size:") + 5));
        const double n = c.bytes_read / (4 * (1 + 64));
        EXPECT_GT(n, 0.0);
        EXPECT_EQ(c.bytes_written, 4 * n * (1 + size));
        EXPECT_EQ(counters.at("local_bytes"), 4 * n * (size + 64));
      } else {
        EXPECT_EQ(c.bytes_read, c.bytes_written);
      }
    }
  }
}

TEST_F(OnChipPaths, AnUnwrittenOutputIsRejected) {
  for (const auto& c : cases(sweep::kFull)) {
    SCOPED_TRACE(c.name);
    c.prepare(*env_);  // poisons the output (and the surface's array); no launch
    EXPECT_NE(c.verify(*env_), "");
    if (c.release) c.release(*env_);
  }
}

/// Prepares and launches a case once, verified; the caller then tampers and releases.
void run_once(environment& env, const bench_case& c) {
  c.prepare(env);
  if (c.cold_l2) env.flush().flush(env.stream());
  c.launch(env);
  GMB_CUDA_CHECK(cudaStreamSynchronize(env.stream()));
}

TEST_F(OnChipPaths, AWrongOutputWordIsCaught) {
  for (const auto& c : cases(sweep::kFull)) {
    if (has(c.name, "path:surface")) continue;  // verify() reads the array back over the output
    SCOPED_TRACE(c.name);
    run_once(*env_, c);
    ASSERT_EQ(c.verify(*env_), "");
    const std::size_t word = 3;  // every case writes its first words
    const std::uint32_t got = env_->out().copy_words_to_host(word, 1, env_->stream())[0];
    env_->out().write_word(word, got ^ 1u, env_->stream());
    EXPECT_NE(c.verify(*env_), "");
    if (c.release) c.release(*env_);
  }
}

TEST_F(OnChipPaths, AWrongInputWordIsSeenThroughEveryPathThatReadsTheInput) {
  int checked = 0;
  for (const auto& c : cases(sweep::kFull)) {
    // The CUDA array and the __constant__ table are copies made in prepare; writes read nothing.
    if (has(c.name, "path:array") || has(c.name, "path:constant") ||
        starts_with(c.name, "texture/write/")) {
      continue;
    }
    SCOPED_TRACE(c.name);
    c.prepare(*env_);
    env_->in().write_word(0, 0u, env_->stream());  // word 0: read by every such case
    c.launch(*env_);
    GMB_CUDA_CHECK(cudaStreamSynchronize(env_->stream()));
    EXPECT_NE(c.verify(*env_), "");
    if (c.release) c.release(*env_);
    ++checked;
  }
  EXPECT_EQ(checked, 6 * 4 + 2 * 6 + 11);  // texture reads but arrays, global and ldg, local
}

TEST_F(OnChipPaths, CasesRunAgainAfterTheirRelease) {
  // The harness releases a case's texture objects and arrays when another case runs, and runs
  // it again later (repetitions): prepare must make them anew.
  for (const auto& c : cases(sweep::kQuick)) {
    if (!c.release) continue;
    SCOPED_TRACE(c.name);
    ASSERT_EQ(run_untimed(*env_, c), "");
    ASSERT_EQ(run_untimed(*env_, c), "");
  }
}

}  // namespace
}  // namespace gmb
