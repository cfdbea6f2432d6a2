// The architecture table (gmb/arch_facts.hpp): every row consistent and sourced, only Hopper
// measured, and which GPUs run the cases that need a newer feature.
#include "gmb/arch_facts.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "gmb/traffic_model.hpp"

namespace gmb {
namespace {

std::vector<unsigned> steps_of(const char* text) {
  std::vector<unsigned> steps;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) steps.push_back(std::stoul(part));
  return steps;
}

TEST(ArchFacts, EveryRowIsConsistentAndSourced) {
  for (const arch_facts& row : kArchFacts) {
    SCOPED_TRACE(row.cc);
    const std::vector<unsigned> steps = steps_of(row.carveout_kib);
    ASSERT_FALSE(steps.empty());
    for (std::size_t i = 1; i < steps.size(); ++i) EXPECT_LT(steps[i - 1], steps[i]);
    // The largest shared-memory step leaves 28 KiB (32 on Turing) of the unified array to L1.
    EXPECT_LT(steps.back(), row.l1_shared_kib);
    EXPECT_GE(row.l1_shared_kib - steps.back(), 28u);
    // The traffic model has one granule (kDramChunkBytes): a row that differs would need it.
    EXPECT_EQ(row.dram_granule_bytes, kDramChunkBytes);
    EXPECT_NE(std::string(row.source).find("Guide"), std::string::npos);
    EXPECT_EQ(facts_for(row.cc / 10, row.cc % 10), &row);
  }
}

TEST(ArchFacts, EveryArchitectureTheBuildCoversHasARow) {
  for (int cc : {75, 80, 86, 89, 90, 100, 120}) {
    EXPECT_NE(facts_for(cc / 10, cc % 10), nullptr) << cc;
  }
  EXPECT_EQ(facts_for(7, 0), nullptr);   // Volta: CUDA 13 builds nothing for it
  EXPECT_EQ(facts_for(12, 7), nullptr);  // a future GPU: no guess from a neighbour
}

TEST(ArchFacts, OnlyHopperIsMeasuredAndEveryOtherRowSaysSo) {
  for (const arch_facts& row : kArchFacts) EXPECT_EQ(row.measured, row.cc == 90) << row.cc;
  EXPECT_EQ(facts_status(9, 0), "measured");
  EXPECT_EQ(facts_status(10, 0),
            "model parameters for sm_100 are from the Blackwell Tuning Guide and Hopper's DRAM "
            "granule, not measured");
  EXPECT_EQ(facts_status(8, 6),
            "model parameters for sm_86 are from the Ampere Tuning Guide and Hopper's DRAM "
            "granule, not measured");
  EXPECT_EQ(facts_status(11, 0),
            "no facts for sm_110: L1 size and model parameters unknown, not measured");
}

TEST(ArchFacts, AsyncCopyCasesRunFromAmpereOn) {
  EXPECT_EQ(unsupported_reason(gpu_feature::kAsyncCopy, 7, 5),
            "cp.async (LDGSTS) needs sm_80, this GPU is sm_75");
  for (const arch_facts& row : kArchFacts) {
    SCOPED_TRACE(row.cc);
    EXPECT_EQ(unsupported_reason(gpu_feature::kNone, row.cc / 10, row.cc % 10), "");
    EXPECT_EQ(unsupported_reason(gpu_feature::kAsyncCopy, row.cc / 10, row.cc % 10).empty(),
              row.cc >= 80);
  }
}

}  // namespace
}  // namespace gmb
