// The SASS of the built binaries, for every architecture they have code for (cuobjdump needs
// no GPU): what -dlcm=ca and -dlcm=cg change and what they leave alone, the explicit cache
// operators, the read-only path, the on-chip paths, cp.async and bulk copies (TMA) where the
// GPU has them; and what the prediction model assumes of a kernel's instructions (the staged
// AoS's loads, one at a time).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/device/binaries.hpp"

namespace {

using gmb::test::binary_of;
using gmb::test::result;
using gmb::test::run;

using tokens = std::set<std::string>;

/// One kernel's global loads (LDG...) and stores (STG...) as sets of dot-separated tokens.
/// Tokens, not strings: modifier order varies (docs/design.md). `other` holds the kernel's other
/// memory instructions (cp.async LDGSTS, bulk copies UBLKCP, tensor copies UTMALDG/UTMASTG,
/// local LDL/STL, constant LDC, texture TEX/TLD, surface SUST/SULD) whole, operands included
/// (LDC's bank tells a __constant__ table from the kernel's parameters).
struct kernel_sass {
  std::vector<tokens> loads, stores;
  std::vector<std::string> other;
};

/// A cheap look before the regex: whether a SASS line may hold an instruction of `other`.
bool mentions_other_access(const std::string& line) {
  for (const char* op :
       {"LDGSTS", "UBLKCP", "UTMALDG", "UTMASTG", "LDL", "STL", "LDC", "TEX", "TLD", "SUST", "SULD"}) {
    if (line.find(op) != std::string::npos) return true;
  }
  return false;
}

/// `cuobjdump -sass -arch <arch> <binary>`, kept beside the binary (<binary>.<arch>.sass) while
/// the binary is not newer: CTest runs each test in a process of its own, and a dump takes
/// about 10 s per flavor and architecture.
std::string sass_text(const std::string& binary, const std::string& arch) {
  namespace fs = std::filesystem;
  const fs::path kept = binary + "." + arch + ".sass";
  std::error_code ec;
  if (fs::exists(kept, ec) && fs::last_write_time(kept, ec) >= fs::last_write_time(binary, ec)) {
    std::ifstream in(kept);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // cuobjdump runs nvdisasm, which sits beside it (in the toolkit or in PyPI's packages).
  const std::string tool = GMB_CUOBJDUMP;
  const std::string dir = tool.substr(0, tool.find_last_of('/'));
  const result dump =
      run("PATH='" + dir + "':\"$PATH\" '" + tool + "' -sass -arch " + arch + " " + binary);
  EXPECT_EQ(dump.exit_code, 0) << dump.output.substr(0, 500);
  if (dump.exit_code == 0) {
    const fs::path partial = kept.string() + ".partial" + std::to_string(::getpid());
    std::ofstream(partial) << dump.output;
    fs::rename(partial, kept, ec);
  }
  return dump.output;
}

/// Every kernel of a binary's code for one architecture ("sm_90") by mangled name (a template
/// instantiated in two files appears twice; its instructions are pooled).
std::map<std::string, kernel_sass> disassemble(const std::string& binary, const std::string& arch) {
  const std::string text = sass_text(binary, arch);
  std::map<std::string, kernel_sass> kernels;
  const std::regex function_line(R"(Function : (\S+))");
  const std::regex access(R"(\b(LDG|STG)(\.[A-Z0-9_]+)*\b)");  // not LDGSTS
  const std::regex other_access(
      R"(\b(LDGSTS|UBLKCP|UTMALDG|UTMASTG|LDL|STL|LDC|TEX|TLD|SUST|SULD)(\.[A-Z0-9_]+)*[^;]*)");
  std::istringstream lines(text);
  kernel_sass* current = nullptr;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, function_line)) {
      current = &kernels[m[1].str()];
    } else if (current && std::regex_search(line, m, access)) {
      tokens t;
      std::istringstream instruction(m[0].str());
      for (std::string part; std::getline(instruction, part, '.');) t.insert(part);
      (m[1] == "LDG" ? current->loads : current->stores).push_back(t);
    } else if (current && mentions_other_access(line) && std::regex_search(line, m, other_access)) {
      current->other.push_back(m[0].str());
    }
  }
  return kernels;
}

const std::map<std::string, kernel_sass>& sass_of(const std::string& flavor,
                                                  const std::string& arch) {
  static std::map<std::string, std::map<std::string, kernel_sass>> cache;
  const std::string key = flavor + "/" + arch;
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, disassemble(binary_of(flavor), arch)).first;
  return it->second;
}

/// The architectures a binary has code for ("sm_80", "sm_90", ...), from cuobjdump --list-elf.
std::vector<std::string> archs_in(const std::string& binary) {
  const std::string tool = GMB_CUOBJDUMP;
  const result list = run("'" + tool + "' --list-elf " + binary);
  EXPECT_EQ(list.exit_code, 0) << list.output.substr(0, 500);
  std::set<int> numbers;  // sm_80 before sm_100
  const std::regex elf(R"(\.sm_([0-9]+)\.cubin)");
  for (auto it = std::sregex_iterator(list.output.begin(), list.output.end(), elf);
       it != std::sregex_iterator(); ++it) {
    numbers.insert(std::stoi((*it)[1].str()));
  }
  std::vector<std::string> archs;
  for (int n : numbers) archs.push_back("sm_" + std::to_string(n));
  return archs;
}

/// Every architecture the build has code for: each SASS test runs on each (the ci preset has
/// five, the all preset seven; docs/gpus.md). The three flavors are built for the same.
const std::vector<std::string>& built_archs() {
  static const std::vector<std::string> archs = [] {
    const std::vector<std::string> found = archs_in(binary_of("default"));
    for (const char* flavor : {"ca", "cg"}) EXPECT_EQ(archs_in(binary_of(flavor)), found);
    return found;
  }();
  return archs;
}

/// "sm_90" -> 90.
int sm_number(const std::string& arch) {
  return std::stoi(arch.substr(3));
}

/// Whether the architecture has cp.async (LDGSTS): sm_80 and newer.
bool has_async_copy(const std::string& arch) {
  return sm_number(arch) >= 80;
}

/// The scope -dlcm=ca (and ld.ca) gives a load: the SM's L1 (STRONG.SM), named CTA before
/// sm_80 (sm_75: LDG.E.STRONG.CTA).
const char* ca_scope(const std::string& arch) {
  return sm_number(arch) < 80 ? "CTA" : "SM";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// The mangled template argument of an explicit operator: cache_op or store_op value k.
std::string mangled_op(const char* op_type, int k) {
  return std::string(op_type) + "E" + std::to_string(k) + "E";
}

/// Which of the values 0..count-1 of the enum `type` the kernel's template arguments name;
/// -1 for none.
int mangled_value(const std::string& name, const char* type, int count) {
  for (int k = 0; k < count; ++k) {
    if (contains(name, mangled_op(type, k))) return k;
  }
  return -1;
}

/// Whether a kernel's template arguments name an explicit load operator (cache_op 1..6).
bool explicit_load(const std::string& name) {
  return mangled_value(name, "cache_op", 7) >= 1;
}

/// Kernels whose global loads -dlcm cannot change: CUB's reduction (ld.global.nc, built once
/// for every flavor), the transpose's cp.async tile and the inflight family's cp.async reads
/// where the architecture has cp.async (rung 9 and inflight_read_async: LDGSTS; before sm_80
/// plain loads, which -dlcm changes), the read-only
/// path of `const __restrict__` pointers (LDG.E.CONSTANT), and the other paths' families,
/// compiled once for every flavor (namespace gmb::built_once).
bool loads_outside_dlcm(const std::string& name, const std::string& arch) {
  return contains(name, "3cub") ||
         (has_async_copy(arch) &&
          (contains(name, "transpose_rungE9E") || contains(name, "inflight_read_async"))) ||
         contains(name, "restrict_xor_reads") || contains(name, "10built_once");
}

/// Whether a kernel's template arguments name an explicit store operator (store_op 1..3).
bool explicit_store(const std::string& name) {
  return mangled_value(name, "store_op", 4) >= 1;
}

class EveryFlavorSass : public ::testing::TestWithParam<std::string> {};

#define GMB_REQUIRE_CUOBJDUMP()                              \
  do {                                                       \
    if (std::string(GMB_CUOBJDUMP).empty()) {                \
      GTEST_SKIP() << "no cuobjdump (scripts/setup --test)"; \
    }                                                        \
  } while (false)

/// The plain loads of the coalesced read and copy kernels are what the flavors change:
/// LDG.E (default), LDG.E.STRONG.SM (-dlcm=ca; .STRONG.CTA before sm_80), LDG.E.STRONG.GPU
/// (-dlcm=cg); never .CONSTANT. On every architecture of the build.
TEST_P(EveryFlavorSass, PlainLoadsCarryTheFlavorsCacheQualifier) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    const std::string flavor = GetParam();
    for (const char* kernel : {"coalesced_read", "coalesced_copy"}) {
      std::size_t loads = 0, wide = 0;
      for (const auto& [name, sass] : sass_of(flavor, arch)) {
        if (!contains(name, kernel) || !contains(name, mangled_op("cache_op", 0))) continue;
        for (const auto& t : sass.loads) {
          ++loads;
          EXPECT_EQ(t.count("CONSTANT"), 0u) << name;
          if (flavor == "default") {
            EXPECT_EQ(t.count("STRONG"), 0u) << name;
          } else {
            EXPECT_EQ(t.count("STRONG"), 1u) << name;
            EXPECT_EQ(t.count(flavor == "ca" ? ca_scope(arch) : "GPU"), 1u) << name;
          }
          if (contains(name, "float4")) {
            ++wide;
            EXPECT_EQ(t.count("128"), 1u) << name << ": float4 loads are not 16 bytes wide";
          }
        }
      }
      EXPECT_GE(loads, 16u) << kernel;  // 16 instantiations, at least one load each (or more)
      EXPECT_GT(wide, 0u) << kernel;
    }
  }
}

/// An explicit operator is the programmer's choice: its qualifier is the same in every build.
TEST_P(EveryFlavorSass, ExplicitOperatorsKeepTheirQualifierInEveryBuild) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    // cache_op 1..6 (ldg ca cg cs lu cv) and store_op 1..3 (cg cs wt), docs/design.md's table.
    const std::vector<tokens> load_qualifier = {
        {},     {"CONSTANT"}, {"STRONG", ca_scope(arch)}, {"STRONG", "GPU"},
        {"EF"}, {"LU"},       {"STRONG", "SYS"}};
    const std::vector<tokens> store_qualifier = {{}, {"STRONG", "GPU"}, {"EF"}, {"STRONG", "SYS"}};
    auto has_all = [](const tokens& t, const tokens& wanted) {
      for (const auto& w : wanted) {
        if (t.count(w) == 0) return false;
      }
      return true;
    };
    std::vector<int> kernels_with_load(7, 0), kernels_with_store(4, 0);
    for (const auto& [name, sass] : sass_of(GetParam(), arch)) {
      if (!contains(name, "xor_reads")) continue;
      for (int k = 1; k < 7; ++k) {
        if (!contains(name, mangled_op("cache_op", k))) continue;
        ++kernels_with_load[k];
        ASSERT_FALSE(sass.loads.empty()) << name;
        for (const auto& t : sass.loads) EXPECT_TRUE(has_all(t, load_qualifier[k])) << name;
      }
      for (int k = 1; k < 4; ++k) {
        if (!contains(name, mangled_op("store_op", k))) continue;
        ++kernels_with_store[k];
        ASSERT_FALSE(sass.stores.empty()) << name;
        for (const auto& t : sass.stores) EXPECT_TRUE(has_all(t, store_qualifier[k])) << name;
      }
    }
    // cache_op/{copy,stencil,gather}: three kernels per operator; __ldg has five more of its own
    // in readonly/ (offset, aos, gather and the stencils of radius 1 and 4).
    for (int k = 1; k < 7; ++k) EXPECT_EQ(kernels_with_load[k], k == 1 ? 8 : 3) << "cache_op " << k;
    for (int k = 1; k < 4; ++k) EXPECT_EQ(kernels_with_store[k], 3) << "store_op " << k;
  }
}

/// Not only the qualifier: a kernel with an explicit operator loads and stores exactly alike
/// in the three builds (-dlcm must not add to what the programmer chose).
TEST(FlavorSass, ExplicitOperatorKernelsAreTheSameInEveryBuild) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    std::size_t compared = 0;
    for (const auto& [name, sass] : sass_of("default", arch)) {
      if (!contains(name, "xor_reads") || !(explicit_load(name) || explicit_store(name))) continue;
      for (const char* flavor : {"ca", "cg"}) {
        const auto other = sass_of(flavor, arch).find(name);
        ASSERT_NE(other, sass_of(flavor, arch).end()) << name << " is missing from " << flavor;
        // Plain stores of a load-operator kernel and plain loads of a store-operator kernel
        // follow the flavor; only the explicit side must match.
        if (explicit_load(name)) {
          EXPECT_EQ(sass.loads, other->second.loads) << name << " loads differ in " << flavor;
        } else {
          EXPECT_EQ(sass.stores, other->second.stores) << name << " stores differ in " << flavor;
        }
      }
      ++compared;
    }
    // three patterns, six load and three store operators; five more __ldg kernels (readonly/)
    EXPECT_EQ(compared, 3u * (6 + 3) + 5);
  }
}

/// readonly/: __ldg and plain loads from `const __restrict__` pointers take the read-only path
/// (LDG.E.CONSTANT) in every build; the same kernels' plain loads never do.
TEST_P(EveryFlavorSass, ReadOnlyLoadsTakeTheReadOnlyPathInEveryBuild) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    std::size_t restricted = 0, ldg = 0, plain = 0;
    for (const auto& [name, sass] : sass_of(GetParam(), arch)) {
      if (!contains(name, "xor_reads")) continue;
      const bool is_restrict = contains(name, "restrict_xor_reads");
      const bool is_ldg = contains(name, mangled_op("cache_op", 1));
      const bool is_plain =
          !is_restrict && contains(name, mangled_op("cache_op", 0)) && !explicit_store(name);
      if (!is_restrict && !is_ldg && !is_plain) continue;
      ASSERT_FALSE(sass.loads.empty()) << name;
      for (const auto& t : sass.loads) {
        EXPECT_EQ(t.count("CONSTANT"), is_plain ? 0u : 1u) << name;
      }
      restricted += is_restrict;
      ldg += is_ldg;
      plain += is_plain;
    }
    EXPECT_EQ(restricted, 7u);  // readonly/: offset, stride, aos, gather, three stencils
    EXPECT_EQ(ldg, 8u);
    EXPECT_GT(plain, 0u);
  }
}

/// The ca/cg comparison means something only where the two builds differ: every kernel with
/// plain loads (no explicit load operator) must load differently in gmembench-ca and -cg.
TEST(FlavorSass, PlainLoadKernelsDifferBetweenCaAndCg) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    const auto& ca = sass_of("ca", arch);
    const auto& cg = sass_of("cg", arch);
    std::set<std::string> compared;
    for (const auto& [name, sass] : ca) {
      // The fills and checks (gmb::detail) verify and measure nothing; a family built once
      // instantiates them once, alike for every flavor.
      if (explicit_load(name) || sass.loads.empty() || contains(name, "_ZN3gmb6detail")) continue;
      const auto other = cg.find(name);
      ASSERT_NE(other, cg.end()) << name << " is missing from gmembench-cg";
      if (loads_outside_dlcm(name, arch)) {
        EXPECT_EQ(sass.loads, other->second.loads) << name << " loads differ in ca and cg";
        continue;
      }
      EXPECT_NE(sass.loads, other->second.loads) << name << " loads the same in ca and cg";
      for (const char* kernel : {"xor_reads", "working_set_read", "aos_all_fields", "aos_one_field",
                                 "mapped_copy", "matrix_copy", "coalesced_read"}) {
        if (contains(name, kernel)) compared.insert(kernel);
      }
    }
    EXPECT_EQ(compared.size(), 7u) << "a kernel family of the comparison was not found";
  }
}

/// The kernels built once (gmb_bench_once, namespace gmb::built_once) named `kernel`.
std::vector<std::pair<std::string, const kernel_sass*>> built_once_kernels(
    const std::string& flavor, const std::string& arch, const std::string& kernel) {
  std::vector<std::pair<std::string, const kernel_sass*>> found;
  const std::string mangled = "10built_once" + std::to_string(kernel.size()) + kernel + "I";
  for (const auto& [name, sass] : sass_of(flavor, arch)) {
    if (contains(name, mangled)) found.emplace_back(name, &sass);
  }
  return found;
}

/// How many of a kernel's other memory instructions have opcode `op` (LDL matches LDL.LU too).
std::size_t count_op(const kernel_sass& sass, const std::string& op) {
  return std::count_if(sass.other.begin(), sass.other.end(), [&](const std::string& i) {
    return i.rfind(op, 0) == 0 &&
           (i.size() == op.size() || i[op.size()] == '.' || i[op.size()] == ' ');
  });
}

/// texture_path values (kernels/texture.cuh): global ldg tex1d tex2d array surface.
TEST(OnChipSass, TextureKernelsFetchAndStoreThroughTheirPath) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    std::vector<int> reads(5, 0), writes(6, 0);
    for (const auto& [name, sass] : built_once_kernels("default", arch, "texture_read")) {
      const int path = mangled_value(name, "texture_path", 5);
      ASSERT_GE(path, 0) << name;
      ++reads[path];
      EXPECT_FALSE(sass->stores.empty()) << name;  // out[t]: a plain store
      const std::size_t tex = count_op(*sass, "TEX"), tld = count_op(*sass, "TLD");
      if (path <= 1) {  // plain loads (never read-only) and __ldg (always)
        ASSERT_FALSE(sass->loads.empty()) << name;
        for (const auto& t : sass->loads)
          EXPECT_EQ(t.count("CONSTANT"), path == 1 ? 1u : 0u) << name;
        EXPECT_EQ(tex + tld, 0u) << name;
      } else {  // fetches only: tex1Dfetch is TLD, tex2D is TEX
        EXPECT_TRUE(sass->loads.empty()) << name;
        EXPECT_GT(path == 2 ? tld : tex, 0u) << name;
      }
    }
    for (const auto& [name, sass] : built_once_kernels("default", arch, "texture_write")) {
      const bool surface = contains(name, mangled_op("texture_path", 5));
      ++writes[surface ? 5 : 0];
      EXPECT_EQ(sass->stores.empty(), surface) << name;
      EXPECT_EQ(count_op(*sass, "SUST") > 0, surface) << name;
    }
    // Four walk types (rows, columns, stencil, tile gather) per read path; rows and columns
    // written by plain stores and by the surface.
    EXPECT_EQ(reads, std::vector<int>(5, 4));
    EXPECT_EQ(writes, (std::vector<int>{2, 0, 0, 0, 0, 2}));
  }
}

/// constant_path values (kernels/constant.cuh): constant global ldg.
TEST(OnChipSass, ConstantKernelsReadTheConstantBankWithARegisterIndex) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    std::vector<int> seen(3, 0);
    for (const auto& [name, sass] : built_once_kernels("default", arch, "constant_read")) {
      const int path = mangled_value(name, "constant_path", 3);
      ASSERT_GE(path, 0) << name;
      ++seen[path];
      // The user's __constant__ data sits in bank 3 (kernel parameters in bank 0) on every
      // architecture of the build:
      // LDC with a per-thread register index, the instruction the serialization curve measures.
      const std::size_t indexed = std::count_if(
          sass->other.begin(), sass->other.end(),
          [](const std::string& i) { return i.rfind("LDC", 0) == 0 && contains(i, "c[0x3][R"); });
      if (path == 0) {
        EXPECT_GE(indexed, 16u) << name;  // the loop is unrolled 16 times
        EXPECT_TRUE(sass->loads.empty()) << name;
      } else {
        EXPECT_EQ(indexed, 0u) << name;
        ASSERT_FALSE(sass->loads.empty()) << name;
        for (const auto& t : sass->loads)
          EXPECT_EQ(t.count("CONSTANT"), path == 2 ? 1u : 0u) << name;
      }
    }
    EXPECT_EQ(seen, std::vector<int>(3, 1));
  }
}

/// local_index values (kernels/local.cuh): static uniform lane.
TEST(OnChipSass, LocalMemoryInstructionsExactlyWhereTheArraysAndSpillsAre) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    int arrays = 0, spills = 0;
    for (const auto& [name, sass] : built_once_kernels("default", arch, "local_array")) {
      ++arrays;
      const bool run_time_index = contains(name, mangled_op("local_index", 1)) ||
                                  contains(name, mangled_op("local_index", 2));
      // Arrays of 32 and 128 words indexed at run time live in local memory; 8 words stay in
      // registers (CUDA 13.0's choice: the quick sweep's control), and so does every array
      // indexed at compile time.
      const bool local = run_time_index && !contains(name, "ELj8E");
      EXPECT_EQ(count_op(*sass, "LDL") > 0, local) << name;
      EXPECT_EQ(count_op(*sass, "STL") > 0, local) << name;
    }
    for (const auto& [name, sass] : built_once_kernels("default", arch, "local_spill")) {
      ++spills;
      const bool bounded = contains(name, "ILj32E");  // at most 32 registers
      EXPECT_EQ(count_op(*sass, "LDL") > 0, bounded) << name;
      EXPECT_EQ(count_op(*sass, "STL") > 0, bounded) << name;
    }
    EXPECT_EQ(arrays, 9);  // sizes 8, 32, 128 x three index kinds
    EXPECT_EQ(spills, 2);
  }
}

/// The on-chip families' kernels are compiled once: the same instructions in every binary.
TEST(OnChipSass, BuiltOnceKernelsAreTheSameInEveryBuild) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    std::size_t compared = 0;
    for (const char* kernel :
         {"texture_read", "texture_write", "constant_read", "local_array", "local_spill"}) {
      for (const auto& [name, sass] : built_once_kernels("default", arch, kernel)) {
        for (const char* flavor : {"ca", "cg"}) {
          const auto other = sass_of(flavor, arch).find(name);
          ASSERT_NE(other, sass_of(flavor, arch).end()) << name << " is missing from " << flavor;
          EXPECT_EQ(sass->loads, other->second.loads) << name << " in " << flavor;
          EXPECT_EQ(sass->stores, other->second.stores) << name << " in " << flavor;
          EXPECT_EQ(sass->other, other->second.other) << name << " in " << flavor;
        }
        ++compared;
      }
    }
    EXPECT_EQ(compared, 5u * 4 + 4 + 3 + 9 + 2);
  }
}

/// The transpose's cp.async rung stages its tile by LDGSTS on every architecture that has it
/// (sm_80 on), and so do the inflight family's cp.async reads; an older one gets ordinary loads,
/// and the binary skips those benchmarks there (gmb/arch_facts.hpp, docs/gpus.md). The other
/// rungs never use it.
TEST(FeatureSass, AsyncCopyTileComesByLdgstsFromAmpereOn) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    const bool has = has_async_copy(arch);
    std::size_t async_kernels = 0, async_reads = 0;
    for (const auto& [name, sass] : sass_of("default", arch)) {
      if (contains(name, "inflight_read_async")) {
        ++async_reads;
        EXPECT_EQ(count_op(sass, "LDGSTS") > 0, has) << name;
        if (has) EXPECT_TRUE(sass.loads.empty()) << name;  // the words come by LDGSTS only
      }
      if (!contains(name, "transpose_tiled")) continue;
      const bool async = contains(name, "transpose_rungE9E");
      async_kernels += async;
      EXPECT_EQ(count_op(sass, "LDGSTS") > 0, async && has) << name;
    }
    EXPECT_EQ(async_kernels, 2u);  // f32 and f64
    EXPECT_EQ(async_reads, 12u);   // 4-, 8- and 16-B words x 1, 2, 4, 8 per thread
  }
}

/// The bulk family's copies are the copy unit's (TMA) on every architecture from sm_90:
/// UBLKCP.S.G (global -> shared, cp.async.bulk.shared::cluster.global) in bulk_read, bulk_copy
/// and bulk_latency, UBLKCP.G.S (shared -> global, cp.async.bulk.global.shared::cta) in
/// bulk_write and bulk_copy; no LDG or STG, and the same in every build (built once). Below
/// sm_90 the kernels trap (the binary skips them there). No other kernel has a UBLKCP.
TEST(FeatureSass, BulkCopiesAreUblkcpFromHopperOn) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    const bool has = sm_number(arch) >= 90;
    std::set<std::string> bulk_kernels;
    for (const auto& [name, sass] : sass_of("default", arch)) {
      const std::size_t to_shared = count_op(sass, "UBLKCP.S.G");
      const std::size_t to_global = count_op(sass, "UBLKCP.G.S");
      if (!contains(name, "10built_once") || !contains(name, "bulk_")) {
        EXPECT_EQ(count_op(sass, "UBLKCP"), 0u) << name;
        continue;
      }
      for (const char* kernel : {"bulk_read", "bulk_write", "bulk_copy", "bulk_latency"}) {
        if (contains(name, kernel)) bulk_kernels.insert(kernel);
      }
      const bool reads = !contains(name, "bulk_write");
      const bool writes = contains(name, "bulk_write") || contains(name, "bulk_copy");
      EXPECT_EQ(to_shared > 0, has && reads) << name;
      EXPECT_EQ(to_global > 0, has && writes) << name;
      EXPECT_EQ(count_op(sass, "UBLKCP"), to_shared + to_global) << name;
      EXPECT_TRUE(sass.loads.empty()) << name;   // the words come by UBLKCP, not LDG
      EXPECT_TRUE(sass.stores.empty()) << name;  // and leave by UBLKCP, not STG
      for (const char* flavor : {"ca", "cg"}) {
        const auto other = sass_of(flavor, arch).find(name);
        ASSERT_NE(other, sass_of(flavor, arch).end()) << name << " is missing from " << flavor;
        EXPECT_EQ(sass.other, other->second.other) << name << " in " << flavor;
      }
    }
    EXPECT_EQ(bulk_kernels,
              (std::set<std::string>{"bulk_read", "bulk_write", "bulk_copy", "bulk_latency"}));
  }
}

/// The transpose ladder's TMA rung moves its tiles by tensor copies from sm_90 on: UTMALDG
/// (cp.async.bulk.tensor global -> shared) and UTMASTG (shared -> global) in transpose_tma, no
/// LDG or STG there, the same in every build; no other kernel has a tensor copy.
TEST(FeatureSass, TmaTransposeIsUtmaFromHopperOn) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    const bool has = sm_number(arch) >= 90;
    bool found = false;
    for (const auto& [name, sass] : sass_of("default", arch)) {
      const std::size_t in = count_op(sass, "UTMALDG"), out = count_op(sass, "UTMASTG");
      if (!contains(name, "transpose_tma")) {
        EXPECT_EQ(in + out, 0u) << name;
        continue;
      }
      found = true;
      EXPECT_TRUE(contains(name, "10built_once")) << name;
      EXPECT_EQ(in > 0, has) << name;
      EXPECT_EQ(out > 0, has) << name;
      EXPECT_TRUE(sass.loads.empty()) << name;
      EXPECT_TRUE(sass.stores.empty()) << name;
      for (const char* flavor : {"ca", "cg"}) {
        const auto other = sass_of(flavor, arch).find(name);
        ASSERT_NE(other, sass_of(flavor, arch).end()) << name << " is missing from " << flavor;
        EXPECT_EQ(sass.other, other->second.other) << name << " in " << flavor;
      }
    }
    EXPECT_TRUE(found);
  }
}

/// What the flags change on each architecture, printed for docs/gpus.md: the tokens of the
/// plain f32 load of coalesced_read in each flavor. ca and cg always differ from each other.
TEST(FlavorSass, WhatTheFlagsChangeOnEachArchitecture) {
  GMB_REQUIRE_CUOBJDUMP();
  for (const std::string& arch : built_archs()) {
    SCOPED_TRACE(arch);
    std::map<std::string, std::string> load;  // flavor -> "LDG.E.STRONG.SM"
    for (const char* flavor : {"default", "ca", "cg"}) {
      for (const auto& [name, sass] : sass_of(flavor, arch)) {
        if (!contains(name, "coalesced_read") || !contains(name, "IfLj1ELNS_8cache_opE0E") ||
            sass.loads.empty()) {
          continue;
        }
        std::string text;
        for (const char* token : {"LDG", "E", "STRONG", "CONSTANT", "CTA", "SM", "GPU", "SYS"}) {
          if (sass.loads.front().count(token))
            text += (text.empty() ? "" : ".") + std::string(token);
        }
        load[flavor] = text;
        break;
      }
    }
    ASSERT_EQ(load.size(), 3u);
    EXPECT_NE(load["ca"], load["cg"]);
    EXPECT_NE(load["default"], load["cg"]);
    std::cout << "[ flags    ] " << arch << ": default " << load["default"] << ", -dlcm=ca "
              << load["ca"] << ", -dlcm=cg " << load["cg"] << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Flavors, EveryFlavorSass, ::testing::Values("default", "ca", "cg"),
                         [](const auto& info) { return info.param; });

/// The opcodes (without modifiers or predicates) of each kernel of a binary's code for one
/// architecture, in order, by mangled name.
std::map<std::string, std::vector<std::string>> opcodes_of(const std::string& binary,
                                                           const std::string& arch) {
  std::map<std::string, std::vector<std::string>> kernels;
  const std::regex function_line(R"(Function : (\S+))");
  const std::regex instruction(R"(/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*))");
  std::istringstream lines(sass_text(binary, arch));
  std::vector<std::string>* current = nullptr;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, function_line)) {
      current = &kernels[m[1].str()];
    } else if (current && std::regex_search(line, m, instruction)) {
      current->push_back(m[1].str());
    }
  }
  return kernels;
}

/// The prediction model's staged AoS (docs/model.md: "the staged AoS"): on Hopper the kernel
/// stores each word to shared memory before it loads the next, so a thread has one load in
/// flight and the last two together: before the barrier, every LDG but the last is followed by
/// its STS before the next LDG. A compiler that batches them changes the model's rounds.
TEST(ModelSass, StagedAosLoadsOneWordAtATimeOnHopper) {
  GMB_REQUIRE_CUOBJDUMP();
  const auto& archs = built_archs();
  if (std::find(archs.begin(), archs.end(), "sm_90") == archs.end()) {
    GTEST_SKIP() << "the build has no sm_90 code";
  }
  int checked = 0;
  for (const auto& [name, ops] : opcodes_of(binary_of("default"), "sm_90")) {
    if (!contains(name, "aos_staged")) continue;
    SCOPED_TRACE(name);
    std::vector<std::string> staging;  // LDG and STS before the barrier
    for (const std::string& op : ops) {
      if (op == "BAR") break;
      if (op == "LDG" || op == "STS") staging.push_back(op);
    }
    const auto loads = std::count(staging.begin(), staging.end(), "LDG");
    ASSERT_GE(loads, 2) << "a structure of two words or more";
    // LDG STS LDG STS ... LDG LDG STS STS: the last two loads together, one at a time before
    std::vector<std::string> expected;
    for (long k = 0; k + 2 < loads; ++k) expected.insert(expected.end(), {"LDG", "STS"});
    expected.insert(expected.end(), {"LDG", "LDG", "STS", "STS"});
    EXPECT_EQ(staging, expected);
    ++checked;
  }
  EXPECT_EQ(checked, 6);  // s8 p12 a12 s16 s32 s64
}

}  // namespace
