#pragma once
// Warp instructions on each kernel's straight path, from cuobjdump's SASS listing of the
// benchmark binary (written beside it by the build where cuobjdump is found,
// cmake/Flavor.cmake): from the kernel's first instruction to its first EXIT, predicated or
// not, after its last global load or store (LDG, STG) before its first unpredicated EXIT;
// NOPs aside. A kernel with neither: to its first unpredicated EXIT. So an early exit of
// threads with no element (before the store) is not the path, and a read's check exits where
// it found no wrong word. For a kernel whose threads make one pass (a block per
// tile) and whose loads are not in a loop, that is what each warp issues: Nsight Compute's
// smsp__inst_executed per warp agrees (docs/model.md). The path holds its loop (the last
// backward branch on it and the instructions from its target) once; a kernel whose loop runs
// T times issues the path plus T - 1 more bodies (`sass_path::executed`: for a kernel with one
// loop on its path; of nested or consecutive loops only the last is counted), and its local
// stores likewise (STL: one 128-B line of a warp per 4-B word of a lane, the lanes' words
// interleaved). The counters model_warp_instructions and model_local_store_lines carry them
// (docs/design.md).
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace gmb {

/// One kernel's straight path as its SASS has it.
struct sass_path {
  int instructions = 0;       // on the path, its loop's body once
  int loop = 0;               // the body of the path's last loop (0: none)
  int local_stores = 0;       // STL on the path, in 4-B words per lane (STL.64: 2, .128: 4)
  int loop_local_stores = 0;  // ... of them in the loop's body
  /// Warp instructions (local store lines) of a warp whose loop runs `trips` times.
  int executed(int trips) const { return instructions + (trips > 1 ? trips - 1 : 0) * loop; }
  int local_store_lines(int trips) const {
    return local_stores + (trips > 1 ? trips - 1 : 0) * loop_local_stores;
  }
};

/// Per mangled kernel name, the straight path's instructions in the listing's code for
/// `sm_<sm>` (90 for compute capability 9.0; `sm_90a` too), else for the newest architecture of
/// the same major version below it, the code the driver runs there (docs/gpus.md); none where
/// the listing has neither.
inline std::map<std::string, sass_path> sass_paths(std::istream& listing, int sm) {
  struct op {
    std::string name;
    bool predicated;
    long address;  // the listing's, in bytes
    long target;   // a branch's (BRA 0xd0), else -1
  };
  std::map<int, std::map<std::string, sass_path>> by_arch;  // architecture (90) -> kernel -> path
  std::map<std::string, sass_path>* paths = nullptr;
  auto starts = [](const std::string& s, const char* p) { return s.rfind(p, 0) == 0; };
  auto is = [&](const std::string& s, const char* base) {
    return s == base || starts(s, (std::string(base) + ".").c_str());
  };
  auto access = [&](const op& o) { return is(o.name, "LDG") || is(o.name, "STG"); };
  // One kernel's instructions in order: the straight path's length, or nothing without an EXIT.
  // The path runs to the first EXIT after the last load or store before the first unpredicated
  // EXIT: an unrolled copy's early exits (an element past the end) come before its last store.
  auto end_of = [&](const std::vector<op>& ops) -> std::optional<std::size_t> {
    std::size_t end = ops.size();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].name == "EXIT" && !ops[i].predicated) {
        end = i;
        break;
      }
    }
    if (end == ops.size()) return std::nullopt;
    std::size_t from = 0;  // past the last access before `end` (none: from the start)
    bool any = false;
    for (std::size_t i = 0; i < end; ++i) {
      if (access(ops[i])) from = i, any = true;
    }
    for (std::size_t i = any ? from : end; i <= end; ++i) {
      if (ops[i].name == "EXIT") return i + 1;
    }
    return std::nullopt;
  };
  auto local_words = [&](const op& o) {  // STL's 4-B words per lane
    if (!is(o.name, "STL")) return 0;
    if (o.name.find(".128") != std::string::npos) return 4;
    return o.name.find(".64") != std::string::npos ? 2 : 1;
  };
  auto path_of = [&](const std::vector<op>& ops) -> std::optional<sass_path> {
    const auto end = end_of(ops);
    if (!end) return std::nullopt;
    sass_path path;
    path.instructions = static_cast<int>(*end);
    std::size_t loop_from = *end, loop_to = *end;  // the last backward branch's body
    for (std::size_t i = 0; i < *end; ++i) {
      path.local_stores += local_words(ops[i]);
      if (ops[i].target < 0 || ops[i].target >= ops[i].address) continue;
      std::size_t first = i;
      while (first > 0 && ops[first - 1].address >= ops[i].target) --first;
      loop_from = first, loop_to = i + 1;
    }
    path.loop = static_cast<int>(loop_to - loop_from);
    for (std::size_t i = loop_from; i < loop_to; ++i) path.loop_local_stores += local_words(ops[i]);
    return path;
  };
  std::string kernel, line;
  std::vector<op> ops;
  auto finish = [&]() {
    if (!kernel.empty() && paths != nullptr) {
      if (const auto n = path_of(ops)) (*paths)[kernel] = *n;
    }
    kernel.clear();
    ops.clear();
  };
  while (std::getline(listing, line)) {
    const auto code = line.find("code for sm_");
    if (code != std::string::npos) {
      finish();
      // "sm_90", "sm_90a", "sm_100f": the digits
      int number = 0;
      for (std::size_t i = code + 12;
           i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0; ++i) {
        number = number * 10 + (line[i] - '0');
      }
      paths = number > 0 ? &by_arch[number] : nullptr;
      continue;
    }
    const auto function = line.find("Function : ");
    if (function != std::string::npos) {
      finish();
      if (paths != nullptr) std::istringstream(line.substr(function + 11)) >> kernel;
      continue;
    }
    if (kernel.empty()) continue;
    // an instruction: "/*0090*/   @P0 EXIT ;   /* 0x... */" (an address of 4 hex digits or more)
    const auto open = line.find("/*");
    if (open == std::string::npos) continue;
    const auto close = line.find("*/", open + 2);
    if (close == std::string::npos || close < open + 6 ||
        line.find_first_not_of("0123456789abcdef", open + 2) != close) {
      continue;
    }
    std::istringstream words(line.substr(close + 2));
    op o{"", false, std::stol(line.substr(open + 2, close - open - 2), nullptr, 16), -1};
    words >> o.name;
    if (!o.name.empty() && o.name[0] == '@') {
      o.predicated = true;
      words >> o.name;
    }
    if (o.name.empty() || starts(o.name, "NOP")) continue;
    if (is(o.name, "BRA")) {  // "BRA 0xd0 ;", "BRA 0x1d0;"
      std::string to;
      words >> to;
      char* end = nullptr;  // a token that is no address leaves the branch out, never throws
      const long target = starts(to, "0x") ? std::strtol(to.c_str() + 2, &end, 16) : -1;
      if (end != nullptr && end != to.c_str() + 2) o.target = target;
    }
    ops.push_back(o);
  }
  finish();
  if (const auto exact = by_arch.find(sm); exact != by_arch.end()) return exact->second;
  for (auto it = by_arch.rbegin(); it != by_arch.rend(); ++it) {
    if (it->first < sm && it->first / 10 == sm / 10) return it->second;
  }
  return {};
}

/// The table of the binary at `executable` (`<executable>.sass`), empty where the build wrote
/// none (no cuobjdump).
inline std::map<std::string, sass_path> sass_paths_beside(const std::string& executable, int sm) {
  std::ifstream listing(executable + ".sass");
  if (!listing) return {};
  return sass_paths(listing, sm);
}

}  // namespace gmb
