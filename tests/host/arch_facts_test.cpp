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
    // The largest shared-memory step leaves 28 KiB (32 on Volta and Turing) to the L1.
    EXPECT_LT(steps.back(), row.l1_shared_kib);
    EXPECT_GE(row.l1_shared_kib - steps.back(), 28u);
    EXPECT_NE(std::string(row.source).find("Guide"), std::string::npos);
    EXPECT_EQ(facts_for(row.cc / 10, row.cc % 10), &row);
  }
}

TEST(ArchFacts, EveryArchitectureTheBuildCoversHasARow) {
  for (int cc : {70, 75, 80, 86, 89, 90, 100, 120}) {  // the all preset, and Volta for CUDA 12
    EXPECT_NE(facts_for(cc / 10, cc % 10), nullptr) << cc;
  }
  EXPECT_EQ(facts_for(11, 0), nullptr);  // Thor: not in the table, so no guess
  EXPECT_EQ(facts_for(12, 7), nullptr);  // a future GPU: no guess from a neighbour
}

TEST(ArchFacts, OnlyHopperIsMeasuredAndEveryOtherRowSaysSo) {
  for (const arch_facts& row : kArchFacts) EXPECT_EQ(row.measured, row.cc == 90) << row.cc;
  EXPECT_EQ(facts_status(9, 0), "measured");
  EXPECT_EQ(facts_status(10, 0),
            "Blackwell, sm_100 not measured by gmembench: L1 size and carve-out from the "
            "Blackwell Tuning Guide; the model's DRAM granule is Hopper's (64 B)");
  EXPECT_EQ(facts_status(8, 6),
            "Ampere, sm_86 not measured by gmembench: L1 size and carve-out from the Ampere "
            "Tuning Guide; the model's DRAM granule is Hopper's (64 B)");
  EXPECT_EQ(facts_status(11, 0),
            "sm_110 not measured by gmembench: L1 size and carve-out unknown; the model's DRAM "
            "granule is Hopper's (64 B)");
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
