// The straight-path instruction counts, loops and local stores of gmb/sass_paths.hpp from a
// cuobjdump listing.
#include "gmb/sass_paths.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace {

// Two architectures' code for the same kernel, shortened from `cuobjdump -sass` (sm_90 here is
// the coalesced f32 copy's first lines and its loop, sm_80 a stand-in).
constexpr const char* kListing = R"sass(
Fatbin elf code:
================
arch = sm_80
	code for sm_80
		Function : _Z4copyPKfPf
	.headerflags	@"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                 /* 0x00000a0000017a02 */
        /*0010*/                   EXIT ;                                 /* 0x000000000000794d */

Fatbin elf code:
================
arch = sm_90
	code for sm_90
		Function : _Z4copyPKfPf
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
                                                                          /* 0x000fe40000000800 */
        /*0010*/                   S2UR UR4, SR_CTAID.X ;                 /* 0x00000000000479c3 */
        /*0050*/               @P0 EXIT ;                                 /* 0x000000000000094d */
        /*0060*/                   NOP ;                                  /* 0x0000000000007918 */
        /*0130*/                   LDG.E R3, desc[UR6][R2.64] ;           /* 0x0000000602037981 */
        /*0150*/               @P0 EXIT ;                                 /* 0x000000000000094d */
        /*01a0*/                   STG.E desc[UR6][R4.64], R3 ;           /* 0x0000000304007986 */
        /*01b0*/              @!P0 BRA 0xd0 ;                             /* 0xfffffffc00c48947 */
        /*01c0*/                   EXIT ;                                 /* 0x000000000000794d */
        /*01d0*/                   BRA 0x1d0;                             /* 0xfffffffc00fc7947 */
		Function : _Z4readPKfPy
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
        /*0070*/               @P0 BRA 0x1e0 ;                            /* 0x000000000000094d */
        /*0130*/                   LDG.E R3, desc[UR4][R2.64] ;           /* 0x0000000602037981 */
        /*01d0*/              @!P0 BRA 0xf0 ;                             /* 0xfffffffc00c48947 */
        /*01f0*/              @!P0 EXIT ;                                 /* 0x000000000000094d */
        /*02a0*/                   REDG.E.ADD.64.STRONG.GPU desc[UR4][R4.64], R2 ;
        /*02b0*/                   EXIT ;                                 /* 0x000000000000794d */
		Function : _Z6copy2xPKfPf
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDG.E R3, desc[UR6][R2.64] ;           /* 0x0000000602037981 */
        /*0010*/                   LDG.E R5, desc[UR6][R4.64] ;           /* 0x0000000602037981 */
        /*0020*/                   STG.E desc[UR6][R6.64], R3 ;           /* 0x0000000304007986 */
        /*0030*/               @P0 EXIT ;                                 /* 0x000000000000094d */
        /*0040*/                   STG.E desc[UR6][R8.64], R5 ;           /* 0x0000000304007986 */
        /*10000*/                  EXIT ;                                 /* 0x000000000000794d */
		Function : _Z5emptyv
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   EXIT ;                                 /* 0x000000000000794d */
        /*0010*/                   BRA 0x10;                              /* 0xfffffffc00fc7947 */
)sass";

TEST(SassPaths, CountsToTheFirstExitPastTheLoadAndTheStoreWithoutNops) {
  std::istringstream listing(kListing);
  const auto paths = gmb::sass_paths(listing, 90);
  ASSERT_EQ(paths.size(), 4u);
  // an unrolled copy: not the early exit before its second store (a 5-digit address too)
  EXPECT_EQ(paths.at("_Z6copy2xPKfPf").instructions, 6);
  // not the early exits before the load and before the store: LDC S2UR @P0-EXIT LDG
  // @P0-EXIT STG BRA EXIT
  EXPECT_EQ(paths.at("_Z4copyPKfPf").instructions, 8);
  EXPECT_EQ(paths.at("_Z4copyPKfPf").loop, 4);  // LDG @P0-EXIT STG BRA, from 0xd0
  // a read's check: the predicated exit after its load, not the report of a wrong word
  EXPECT_EQ(paths.at("_Z4readPKfPy").instructions, 5);
  EXPECT_EQ(paths.at("_Z5emptyv").instructions, 1);  // no load: the first unpredicated exit
}

TEST(SassPaths, ALoopRunsItsBodyOncePerTripAndItsLocalStoresWithIt) {
  // a spilling loop: two stores before it (one of 8 B a lane), a backward branch to 0x40 over
  // a body of four instructions (a NOP aside) with one store; a forward branch does not count
  std::istringstream listing(
      "\tcode for sm_90\n\t\tFunction : _Z5spillv\n"
      "        /*0000*/                   LDG.E R3, desc[UR6][R2.64] ;\n"
      "        /*0010*/                   STL [R1], R3 ;\n"
      "        /*0020*/                   STL.64 [R1+0x8], R4 ;\n"
      "        /*0030*/               @P1 BRA 0x90 ;\n"
      "        /*0040*/                   LDL R5, [R1] ;\n"
      "        /*0050*/                   NOP ;\n"
      "        /*0060*/                   IMAD R5, R5, 0x3, R3 ;\n"
      "        /*0070*/                   STL [R1], R5 ;\n"
      "        /*0080*/              @!P0 BRA 0x40 ;\n"
      "        /*0090*/                   STG.E desc[UR6][R6.64], R5 ;\n"
      "        /*00a0*/                   EXIT ;\n"
      "        /*00b0*/                   BRA 0xb0;\n"
      "\t\tFunction : _Z3oddv\n"  // a branch token that is no address: no loop, no throw
      "        /*0000*/                   STL [R1], R3 ;\n"
      "        /*0010*/                   BRA 0x;\n"
      "        /*0020*/                   EXIT ;\n");
  const auto paths = gmb::sass_paths(listing, 90);
  const gmb::sass_path path = paths.at("_Z5spillv");
  EXPECT_EQ(path.instructions, 10);
  EXPECT_EQ(path.loop, 4);
  EXPECT_EQ(path.local_stores, 4);
  EXPECT_EQ(path.loop_local_stores, 1);
  EXPECT_EQ(path.executed(16), 10 + 15 * 4);
  EXPECT_EQ(path.executed(1), 10);
  EXPECT_EQ(path.local_store_lines(16), 4 + 15);
  EXPECT_EQ(gmb::sass_path{}.executed(4), 0);  // a kernel the listing lacks
  EXPECT_EQ(paths.at("_Z3oddv").instructions, 3);
  EXPECT_EQ(paths.at("_Z3oddv").loop, 0);
  EXPECT_EQ(paths.at("_Z3oddv").local_stores, 1);
}

TEST(SassPaths, ReadsTheCodeTheRunningGpuRuns) {
  std::istringstream listing(kListing);
  EXPECT_EQ(gmb::sass_paths(listing, 80).at("_Z4copyPKfPf").instructions, 2);
  std::istringstream newer(kListing);  // an 8.6 GPU runs the 8.0 code, a 10.0 GPU neither
  EXPECT_EQ(gmb::sass_paths(newer, 86).at("_Z4copyPKfPf").instructions, 2);
  std::istringstream again(kListing);
  EXPECT_TRUE(gmb::sass_paths(again, 100).empty());
  std::istringstream suffixed("\tcode for sm_90a\n\t\tFunction : _Z1kv\n"
                              "        /*0000*/                   EXIT ;\n");
  EXPECT_EQ(gmb::sass_paths(suffixed, 90).at("_Z1kv").instructions, 1);
}

TEST(SassPaths, ShortOrOddCommentLinesAreNotInstructions) {
  std::istringstream listing(
      "\tcode for sm_90\n\t\tFunction : _Z1kv\n/*\n/* 12 */\n/*zz*/ EXIT ;\n"
      "        /*0000*/                   EXIT ;\n");
  EXPECT_EQ(gmb::sass_paths(listing, 90).at("_Z1kv").instructions, 1);
}

TEST(SassPaths, AMissingListingIsAnEmptyTable) {
  EXPECT_TRUE(gmb::sass_paths_beside("/nonexistent/gmembench", 90).empty());
}

}  // namespace
