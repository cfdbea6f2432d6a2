#pragma once
// Warp instructions on each kernel's straight path, from cuobjdump's SASS listing of the
// benchmark binary (written beside it by the build where cuobjdump is found,
// cmake/Flavor.cmake): from the kernel's first instruction to its first EXIT, predicated or
// not, once the path has passed its global load (LDG) and its global store (STG), those of the
// two the kernel has; NOPs aside. A kernel with neither: to its first unpredicated EXIT. So an
// early exit of threads with no element (before the store) is not the path, and a read's check
// exits where it found no wrong word. For a kernel whose threads make one pass (a block per
// tile) and whose loads are not in a loop, that is what each warp issues: Nsight Compute's
// smsp__inst_executed per warp agrees (docs/model.md). The counter model_warp_instructions
// carries it (docs/design.md).
#include <fstream>
#include <istream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace gmb {

/// Per mangled kernel name, the straight path's instructions in the listing's code for
/// `sm_<sm>` (90 for compute capability 9.0); other architectures' code is skipped.
inline std::map<std::string, int> sass_paths(std::istream& listing, int sm) {
  struct op {
    std::string name;
    bool predicated;
  };
  std::map<std::string, int> paths;
  const std::string wanted = "sm_" + std::to_string(sm);
  auto starts = [](const std::string& s, const char* p) { return s.rfind(p, 0) == 0; };
  auto is = [&](const std::string& s, const char* base) {
    return s == base || starts(s, (std::string(base) + ".").c_str());
  };
  // One kernel's instructions in order: the straight path's length, or nothing without an EXIT.
  auto path_of = [&](const std::vector<op>& ops) -> std::optional<int> {
    bool has_load = false, has_store = false, loaded = false, stored = false;
    for (const op& o : ops) {
      has_load = has_load || is(o.name, "LDG");
      has_store = has_store || is(o.name, "STG");
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      loaded = loaded || is(ops[i].name, "LDG");
      stored = stored || is(ops[i].name, "STG");
      const bool passed = (has_load || has_store) && (loaded || !has_load) && (stored || !has_store);
      if (ops[i].name == "EXIT" && (passed || (!has_load && !has_store && !ops[i].predicated))) {
        return static_cast<int>(i + 1);
      }
    }
    return std::nullopt;
  };
  bool arch = false;
  std::string kernel, line;
  std::vector<op> ops;
  auto finish = [&]() {
    if (!kernel.empty()) {
      if (const auto n = path_of(ops)) paths[kernel] = *n;
    }
    kernel.clear();
    ops.clear();
  };
  while (std::getline(listing, line)) {
    const auto code = line.find("code for sm_");
    if (code != std::string::npos) {
      finish();
      std::istringstream words(line.substr(code + 9));
      std::string name;
      words >> name;
      arch = name == wanted;
      continue;
    }
    const auto function = line.find("Function : ");
    if (function != std::string::npos) {
      finish();
      if (arch) std::istringstream(line.substr(function + 11)) >> kernel;
      continue;
    }
    if (kernel.empty()) continue;
    // an instruction: "/*0090*/   @P0 EXIT ;   /* 0x... */"
    const auto open = line.find("/*");
    if (open == std::string::npos || line.compare(open + 6, 2, "*/") != 0) continue;
    std::istringstream words(line.substr(open + 8));
    op o{"", false};
    words >> o.name;
    if (!o.name.empty() && o.name[0] == '@') {
      o.predicated = true;
      words >> o.name;
    }
    if (o.name.empty() || starts(o.name, "NOP")) continue;
    ops.push_back(o);
  }
  finish();
  return paths;
}

/// The table of the binary at `executable` (`<executable>.sass`), empty where the build wrote
/// none (no cuobjdump).
inline std::map<std::string, int> sass_paths_beside(const std::string& executable, int sm) {
  std::ifstream listing(executable + ".sass");
  if (!listing) return {};
  return sass_paths(listing, sm);
}

}  // namespace gmb
