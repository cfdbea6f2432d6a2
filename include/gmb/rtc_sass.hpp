#pragma once
// A run-time kernel's warp instructions (the model's `model_warp_instructions`, as the build
// counts them for the binary's own kernels: sass_paths.hpp): NVRTC's cubin written to a
// temporary file and listed by the cuobjdump the build found (GMB_CUOBJDUMP, CMakeLists.txt).
// 0 wherever that cannot be done (no cuobjdump, a listing without the kernel): then the
// counter is left out, never a failed run.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmb/sass_paths.hpp"

namespace gmb {

#ifdef GMB_CUOBJDUMP
inline constexpr const char* kCuobjdump = GMB_CUOBJDUMP;
#else
inline constexpr const char* kCuobjdump = "";
#endif

/// The straight path of `kernel` (an extern "C" name) in `cubin` for sm_<sm>, one pass.
inline int rtc_kernel_instructions(const std::vector<char>& cubin, const std::string& kernel,
                                   int sm, const std::string& cuobjdump = kCuobjdump) {
  if (cuobjdump.empty() || cubin.empty()) return 0;
  std::error_code error;
  const std::filesystem::path file = std::filesystem::temp_directory_path(error) /
                                     ("gmb_rtc_" + std::to_string(::getpid()) + ".cubin");
  if (error) return 0;
  {
    std::ofstream out(file, std::ios::binary);
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    if (!out) return 0;
  }
  std::string listing;
  const std::string command = "'" + cuobjdump + "' -sass '" + file.string() + "' 2>/dev/null";
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0;) listing.append(chunk, n);
    const int status = ::pclose(pipe);
    if (status != 0) listing.clear();
  }
  std::filesystem::remove(file, error);
  std::istringstream in(listing);
  const auto paths = sass_paths(in, sm);
  const auto found = paths.find(kernel);
  return found == paths.end() ? 0 : found->second.executed(1);
}

}  // namespace gmb
