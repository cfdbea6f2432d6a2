#pragma once
// Warp instructions on each kernel's straight path, from cuobjdump's SASS listing of the
// benchmark binary (written beside it by the build where cuobjdump is found,
// cmake/Flavor.cmake): from the kernel's first instruction to its first unpredicated EXIT,
// NOPs aside. For a kernel whose threads make one pass (a block per tile) that is what each
// warp issues: Nsight Compute's smsp__inst_executed per warp agrees (docs/model.md). The
// counter model_warp_instructions carries it (docs/design.md).
#include <fstream>
#include <istream>
#include <map>
#include <sstream>
#include <string>

namespace gmb {

/// Per mangled kernel name, the straight path's instructions in the listing's code for
/// `sm_<sm>` (90 for compute capability 9.0); other architectures' code is skipped.
inline std::map<std::string, int> sass_paths(std::istream& listing, int sm) {
  std::map<std::string, int> paths;
  const std::string wanted = "sm_" + std::to_string(sm);
  bool arch = false, counting = false;
  std::string kernel, line;
  int count = 0;
  while (std::getline(listing, line)) {
    const auto code = line.find("code for sm_");
    if (code != std::string::npos) {
      std::istringstream words(line.substr(code + 9));
      std::string name;
      words >> name;
      arch = name == wanted;
      counting = false;
      continue;
    }
    const auto function = line.find("Function : ");
    if (function != std::string::npos) {
      std::istringstream words(line.substr(function + 11));
      words >> kernel;
      count = 0;
      counting = arch && !kernel.empty();
      continue;
    }
    if (!counting) continue;
    // an instruction: "/*0090*/   @P0 EXIT ;   /* 0x... */"
    const auto open = line.find("/*");
    if (open == std::string::npos || line.compare(open + 6, 2, "*/") != 0) continue;
    std::istringstream words(line.substr(open + 8));
    std::string op;
    words >> op;
    if (op.empty() || op.rfind("NOP", 0) == 0) continue;
    ++count;
    if (op == "EXIT") {
      paths[kernel] = count;
      counting = false;
    }
  }
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
