#pragma once
// A run-time kernel's warp instructions (the model's `model_warp_instructions`, as the build
// counts them for the binary's own kernels: sass_paths.hpp): NVRTC's cubin written to a
// temporary file and listed by the cuobjdump the build found (GMB_CUOBJDUMP, CMakeLists.txt).
// 0 wherever that cannot be done (no cuobjdump, a listing without the kernel): then the
// counter is left out, never a failed run.
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
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

/// `text` as one word for the shell (single quotes, each quote inside closed and escaped).
inline std::string shell_word(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The straight path of `kernel` (an extern "C" name) in `cubin` for sm_<sm>, one pass.
inline int rtc_kernel_instructions(const std::vector<char>& cubin, const std::string& kernel,
                                   int sm, const std::string& cuobjdump = kCuobjdump) {
  if (cuobjdump.empty() || cubin.empty()) return 0;
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(error);
  if (error) return 0;
  std::string name = (dir / "gmb_rtc_XXXXXX").string();
  const int fd = ::mkstemp(name.data());  // a file of its own, whoever else shares the folder
  if (fd < 0) return 0;
  bool written = true;
  for (std::size_t done = 0; written && done < cubin.size();) {
    const ssize_t n = ::write(fd, cubin.data() + done, cubin.size() - done);
    written = n > 0;
    done += written ? std::size_t(n) : 0;
  }
  ::close(fd);
  std::string listing;
  if (written) {
    const std::string command =
        shell_word(cuobjdump) + " -sass " + shell_word(name) + " 2>/dev/null";
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
      char chunk[4096];
      for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0;) {
        listing.append(chunk, n);
      }
      if (::pclose(pipe) != 0) listing.clear();
    }
  }
  std::filesystem::remove(name, error);
  std::istringstream in(listing);
  const auto paths = sass_paths(in, sm);
  const auto found = paths.find(kernel);
  return found == paths.end() ? 0 : found->second.executed(1);
}

}  // namespace gmb
