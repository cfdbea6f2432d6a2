// The host/ and managed/ families on a small array, run as the benchmark runs them: every case
// verifies (quick and full sweeps), a wrong or missing word is caught, the families exist
// exactly where the GPU has the feature, and managed requests above a quarter of the free
// memory are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "benchmarks/families.hpp"
#include "gmb/host_link.hpp"
#include "tests/device/small_environment.cuh"

namespace gmb {
namespace {

using test::kTestArrayBytes;
using test::starts_with;

class HostPaths : public test::small_environment {};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Cases whose output is host memory (the rest write the environment's `out`).
bool writes_host(const std::string& name) {
  return starts_with(name, "host/write/") || starts_with(name, "ref/memcpy_d2h/");
}

std::set<std::string> names_of(const std::vector<bench_case>& cases) {
  std::set<std::string> names;
  for (const auto& c : cases) names.insert(c.name);
  return names;
}

TEST_F(HostPaths, HostFamilyExistsExactlyWhereHostMemoryMaps) {
  int can_map = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, 0), cudaSuccess);
  const std::string support = host_mapped_support(0);
  const auto cases = host_cases(*env_, sweep::kQuick);
  if (support != "yes") {
    EXPECT_TRUE(cases.empty());
    EXPECT_EQ(support.rfind("none (", 0), 0u) << support;
    GTEST_SKIP() << "no mapped host memory: " << support;
  }
  EXPECT_EQ(can_map, 1);
  const std::set<std::string> quick = {"ref/memcpy_h2d/mem:pinned", "ref/memcpy_d2h/mem:pinned",
                                       "host/read/f32x4/ilp:4",     "host/write/f32x4/ilp:4",
                                       "host/read/f32/off:1",       "host/write/f32/off:1",
                                       "host/read/f32/s:8"};
  EXPECT_EQ(names_of(cases), quick);
  const auto full = names_of(host_cases(*env_, sweep::kFull));
  EXPECT_EQ(full.size(), 4u + 32 + 20 + 18);
  for (const char* name :
       {"host/read/f32x4/ilp:8/grid:persistent", "host/write/f32/ilp:2", "host/read/f32/off:31",
        "host/write/f32/off:32", "host/read/f32/s:128", "host/write/f32/s:3"}) {
    EXPECT_EQ(full.count(name), 1u) << name;
  }
  for (const auto& name : quick) EXPECT_EQ(full.count(name), 1u) << name;
}

TEST_F(HostPaths, ManagedFamilyExistsExactlyWhereManagedMemoryMigrates) {
  int managed = 0, concurrent = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0),
            cudaSuccess);
  const std::string support = managed_support(0);
  EXPECT_EQ(support == "yes", managed && concurrent) << support;
  const auto cases = managed_cases(*env_, sweep::kQuick);
  if (support != "yes") {
    EXPECT_TRUE(cases.empty());
    EXPECT_EQ(support.rfind("none (", 0), 0u) << support;
    GTEST_SKIP() << "no on-demand managed memory: " << support;
  }
  EXPECT_EQ(names_of(cases),
            (std::set<std::string>{"managed/read/touch:gpu", "managed/read/prefetch:gpu",
                                   "managed/read/advice:read_mostly", "managed/read/pages:host"}));
  const auto full = names_of(managed_cases(*env_, sweep::kFull));
  EXPECT_EQ(full.size(), 5u);
  EXPECT_EQ(full.count("managed/write/touch:first"), 1u);
  // The model's calibration: each migration at half and twice the family's size (4 MiB here).
  std::set<std::string> probes;
  for (const char* where : {"prefetch:gpu", "advice:read_mostly", "pages:host"}) {
    for (std::size_t bytes : {kTestArrayBytes / 2, kTestArrayBytes * 2}) {
      probes.insert(std::string("model/managed/read/") + where + "/bytes:" + std::to_string(bytes));
    }
  }
  EXPECT_EQ(names_of(managed_calibration_cases(*env_)), probes);
}

TEST_F(HostPaths, EveryCaseVerifiesInBothSweeps) {
  const double link = host_link(0).bytes_per_second();
  const double array = static_cast<double>(kTestArrayBytes);
  int ran = 0;
  for (const sweep s : {sweep::kQuick, sweep::kFull}) {
    auto cases = host_cases(*env_, s);
    for (auto& c : managed_cases(*env_, s)) cases.push_back(std::move(c));
    for (auto& c : managed_calibration_cases(*env_)) cases.push_back(std::move(c));
    for (const auto& c : cases) {
      SCOPED_TRACE(c.name);
      measurements measured;
      EXPECT_EQ(run_untimed(*env_, c, 2, &measured), "");
      ++ran;
      EXPECT_FALSE(c.every_flavor);  // built once, run by the default flavor
      if (starts_with(c.name, "managed/") || starts_with(c.name, "model/managed/")) {
        const bool resident = c.name == "managed/read/touch:gpu";
        // 4 MiB arrays: the resident case has the environment's size, the others at most
        // 64 MiB, here also 4 MiB; the calibration's half and twice that.
        const double moved = !starts_with(c.name, "model/") ? array
                             : ends_with(c.name, "/bytes:" + std::to_string(kTestArrayBytes / 2))
                                 ? array / 2
                                 : array * 2;
        if (starts_with(c.name, "managed/write/")) {
          EXPECT_EQ(c.bytes_written, array);
          EXPECT_EQ(c.bytes_read, 0.0);
          ASSERT_TRUE(static_cast<bool>(c.before_iteration));  // a fresh allocation each time
        } else {
          EXPECT_EQ(c.bytes_read, moved);
          EXPECT_EQ(c.bytes_written, 0.0);
          EXPECT_EQ(static_cast<bool>(c.before_iteration), !resident);
          EXPECT_EQ(c.peak_bytes_per_second, resident ? 0.0 : link);
          EXPECT_EQ(c.launches_per_iteration, resident ? 0 : 1);
          // the read's traffic: what the model reads the migrated bytes from
          ASSERT_TRUE(c.model.has_value());
          EXPECT_EQ(c.model->dram_bytes, moved);
        }
        EXPECT_TRUE(static_cast<bool>(c.release));  // managed memory is not kept
        continue;
      }
      // host/ and its references: the bytes crossing the link, one way; the link's peak.
      EXPECT_EQ(c.peak_bytes_per_second, link);
      EXPECT_EQ(c.launches_per_iteration, 1);
      const double moved = writes_host(c.name) ? c.bytes_written : c.bytes_read;
      EXPECT_EQ(writes_host(c.name) ? c.bytes_read : c.bytes_written, 0.0);
      EXPECT_GT(moved, 0.0);
      EXPECT_LE(moved, std::min(array, static_cast<double>(kHostLinkBytes)));
      if (starts_with(c.name, "ref/") || c.name.find("/ilp:") != std::string::npos ||
          ends_with(c.name, "/s:1")) {
        EXPECT_EQ(moved, array);  // the whole host array
      }
      EXPECT_EQ(c.model.has_value(), starts_with(c.name, "host/"));
      // The link's state right after the run, where NVML can tell.
      std::map<std::string, double> counters(measured.begin(), measured.end());
      if (counters.count("pcie_gen")) {
        EXPECT_GE(counters["pcie_gen"], 1.0);
        EXPECT_GE(counters["pcie_width"], 1.0);
        if (host_link(0).gen_max > 0) EXPECT_LE(counters["pcie_gen"], host_link(0).gen_max);
      }
    }
  }
  EXPECT_GT(ran, 0);
}

TEST_F(HostPaths, AnUnwrittenOutputIsCaught) {
  for (const sweep s : {sweep::kQuick, sweep::kFull}) {
    auto cases = host_cases(*env_, s);
    for (auto& c : managed_cases(*env_, s)) {
      if (starts_with(c.name, "managed/write/")) cases.push_back(std::move(c));  // reads: below
    }
    for (const auto& c : cases) {
      SCOPED_TRACE(c.name);
      c.prepare(*env_);  // poisons the output; no launch
      EXPECT_NE(c.verify(*env_), "");
      if (c.release) c.release(*env_);
    }
  }
}

TEST_F(HostPaths, AWrongWordIsCaught) {
  for (const auto& c : host_cases(*env_, sweep::kQuick)) {
    SCOPED_TRACE(c.name);
    if (writes_host(c.name)) {
      // Host memory is the output: a wrong word in the device array it is copied from must
      // arrive there and be found (element 0 is every map's first).
      c.prepare(*env_);
      env_->in().write_word(0, 0u, env_->stream());
      c.launch(*env_);
      ASSERT_EQ(cudaStreamSynchronize(env_->stream()), cudaSuccess);
    } else {
      ASSERT_EQ(run_untimed(*env_, c, 1), "");
      env_->out().write_word(0, 0u, env_->stream());  // thread 0's destination
    }
    EXPECT_NE(c.verify(*env_), "");
  }
}

TEST_F(HostPaths, ManagedCheckingReadsReportWhatTheKernelCounted) {
  // Each verify() already plants a wrong word in the managed array and fails unless the
  // kernel reports it exactly once (so every passing run above caught one); here: a run
  // whose kernel counted a wrong element is an error. The calibration's migrations too.
  auto cases = managed_cases(*env_, sweep::kQuick);
  for (auto& c : managed_calibration_cases(*env_)) cases.push_back(std::move(c));
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    c.prepare(*env_);
    if (c.before_iteration) c.before_iteration(*env_);
    c.launch(*env_);
    ASSERT_EQ(cudaStreamSynchronize(env_->stream()), cudaSuccess);
    const unsigned long long one = 1;
    ASSERT_EQ(cudaMemcpy(env_->counter(), &one, sizeof(one), cudaMemcpyHostToDevice), cudaSuccess);
    const std::string error = c.verify(*env_);
    EXPECT_NE(error.find("read wrong"), std::string::npos) << error;
    if (c.release) c.release(*env_);
  }
}

TEST(ManagedBufferOnGpu, RefusesMoreThanAQuarterOfFreeMemory) {
  GMB_REQUIRE_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  if (managed_support(0) != "yes") GTEST_SKIP() << managed_support(0);
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  // Refused before anything is allocated: the request is never made.
  const std::size_t too_much = round_up(managed_limit_bytes(free_bytes) + kMiB, kMiB);
  try {
    managed_buffer refused(too_much);
    ADD_FAILURE() << "a managed request of " << too_much << " bytes was not refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("at most a quarter"), std::string::npos) << e.what();
  }
  const managed_buffer fine(kMiB);
  EXPECT_NE(fine.data(), nullptr);
  EXPECT_EQ(fine.bytes(), kMiB);
}

TEST(HostLinkOnGpu, IsPcieWithAKnownRateWhereNvmlOrSysfsSaysSo) {
  GMB_REQUIRE_GPU();
  const host_link_info& link = host_link(0);
  SCOPED_TRACE(link.describe());
  if (link.source == "none") GTEST_SKIP() << "no link facts: " << link.describe();
  EXPECT_GE(link.gen_max, 1);
  EXPECT_LE(link.gen_max, 7);
  EXPECT_TRUE(link.width_max == 1 || link.width_max == 2 || link.width_max == 4 ||
              link.width_max == 8 || link.width_max == 16 || link.width_max == 32);
  if (link.gen > 0) EXPECT_LE(link.gen, link.gen_max);
  if (link.gpu_gen_max > 0) EXPECT_LE(link.gen_max, link.gpu_gen_max);
  if (link.c2c_links == 0) {
    EXPECT_EQ(link.bytes_per_second(), pcie_bytes_per_second(link.gen_max, link.width_max));
    EXPECT_GT(link.bytes_per_second(), 0.0);
  }
}

}  // namespace
}  // namespace gmb
