#pragma once
// The pattern family's NVRTC program: the launch's shape as macros, the kernels of
// kernels/pattern_rtc.cuh (embedded at build time), then the user's expression as the body of
// gmb_pattern_index; and the operation and word choices a user can make. Host only, so the
// host tests compile real programs with NVRTC (no GPU needed).
#include <sstream>
#include <stdexcept>
#include <string>

#include "gmb/pattern_rtc_source.hpp"
#include "gmb/pattern_table.hpp"

namespace gmb {

/// The operation, in the order of kernels/pattern_rtc.cuh's GMB_PATTERN_OP.
enum class pattern_op { kRead, kWrite, kCopy, kGather, kScatter };
inline constexpr const char* kPatternOps[] = {"read", "write", "copy", "gather", "scatter"};

inline pattern_op parse_pattern_op(const std::string& op) {
  for (int k = 0; k < 5; ++k) {
    if (op == kPatternOps[k]) return static_cast<pattern_op>(k);
  }
  throw std::invalid_argument("--gmb_pattern_op: '" + op +
                              "' is not read, write, copy, gather (read the pattern, write "
                              "coalesced) or scatter (the reverse)");
}

inline const char* op_name(pattern_op op) {
  return kPatternOps[static_cast<int>(op)];
}

/// A word a user names: f32, f64, f32x2, f32x4, or sN (a structure of N bytes, N a multiple
/// of 4, aligned as the compiler aligns it).
struct word_choice {
  std::string name;
  word_shape shape;
};

inline word_choice parse_pattern_word(const std::string& w) {
  if (w == "f32") return {w, {4, 4}};
  if (w == "f64" || w == "f32x2") return {w, {8, 8}};
  if (w == "f32x4") return {w, {16, 16}};
  if (w.size() > 1 && w.size() <= 4 && w[0] == 's' &&
      w.find_first_not_of("0123456789", 1) == std::string::npos) {
    const unsigned bytes = static_cast<unsigned>(std::stoul(w.substr(1)));
    if (bytes >= 4 && bytes <= 256 && bytes % 4 == 0) return {w, {bytes, word_alignment(bytes)}};
  }
  throw std::invalid_argument("--gmb_pattern_word: '" + w +
                              "' is not f32, f64, f32x2, f32x4 or sN (a structure of N bytes, N "
                              "a multiple of 4 from 4 to 256)");
}

/// The whole program NVRTC compiles for one expression and launch shape. The expression sits
/// on a line of its own named "expression", so NVRTC's diagnostics point into it.
inline std::string pattern_program(const std::string& expr, pattern_op op, const word_shape& word,
                                   unsigned k, unsigned block, bool whole_tiles = false) {
  std::ostringstream src;
  src << "#define GMB_PATTERN_OP " << static_cast<int>(op) << "\n#define GMB_PATTERN_K " << k
      << "\n#define GMB_PATTERN_BLOCK " << block << "\n#define GMB_PATTERN_WORD " << word.word_bytes
      << "\n#define GMB_PATTERN_ALIGN " << word.align << "\n#define GMB_PATTERN_WHOLE_TILES "
      << (whole_tiles ? 1 : 0) << "\n"
      << kPatternRtcSource << "\ntemplate <bool C>\n"
      << "__device__ __forceinline__ gmb_int<C> gmb_pattern_index(gmb_int<C> i, gmb_int<C> lane,"
         " gmb_int<C> warp, gmb_int<C> tid, gmb_int<C> block, gmb_int<C> k, gmb_int<C> n) {\n"
      << "  return gmb_int<C>(\n#line 1 \"expression\"\n"
      << expr << "\n  );\n}\n";
  return src.str();
}

/// NVRTC's options for a build flavor's -dlcm ("" for nvcc's default loads).
inline std::vector<std::string> pattern_compile_options(const std::string& dlcm) {
  std::vector<std::string> options = {"--std=c++17"};
  if (!dlcm.empty()) options.push_back("--ptxas-options=-dlcm=" + dlcm);
  return options;
}

}  // namespace gmb
