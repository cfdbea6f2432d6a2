#pragma once
// Kernels compiled at run time: NVRTC turns a source into a cubin for this GPU, a cache on disk
// keeps it for the next run (the same source, options, NVRTC version and GPU give the same
// file), and the CUDA runtime loads it (cudaLibraryLoadData: no driver API to link).
#include <cuda_runtime.h>
#include <nvrtc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "gmb/cuda_check.hpp"

namespace gmb {

/// A source NVRTC refused: `what()` is its first diagnostic, one line, without the file name.
struct rtc_compile_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The first line of an NVRTC log that says "error" (else the first line), without the
/// "name(line): " in front: what a user needs to fix the source.
inline std::string first_diagnostic(const std::string& log) {
  std::string first, line;
  for (std::size_t at = 0; at <= log.size();) {
    const std::size_t end = std::min(log.find('\n', at), log.size());
    line = log.substr(at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    if (first.empty()) first = line;
    if (line.find("error") != std::string::npos) {
      first = line;
      break;
    }
  }
  const std::size_t colon = first.find("): ");
  return colon != std::string::npos ? first.substr(colon + 3) : first;
}

/// 64-bit FNV-1a: a stable name for a cache entry (std::hash may differ between builds).
inline std::uint64_t fnv1a(const std::string& text, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

/// Where compiled kernels are kept: $GMB_RTC_CACHE, else $XDG_CACHE_HOME/gmembench, else
/// ~/.cache/gmembench; empty (no cache) when none is set.
inline std::filesystem::path rtc_cache_dir() {
  if (const char* dir = std::getenv("GMB_RTC_CACHE")) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "gmembench";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".cache" / "gmembench";
  }
  return {};
}

/// Whether this NVRTC can build a cubin for compute capability `cc` (e.g. 90).
inline bool nvrtc_knows(int cc) {
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return false;
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return false;
  return std::find(archs.begin(), archs.end(), cc) != archs.end();
}

/// A cubin for the GPU of compute capability `cc` (e.g. 90), from the cache or from NVRTC.
/// `cached` says which. Throws rtc_compile_error when NVRTC refuses the source.
inline std::vector<char> rtc_compile(const std::string& source, const std::string& name,
                                     std::vector<std::string> options, int cc,
                                     bool* cached = nullptr) {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  if (!nvrtc_knows(cc)) {  // a GPU newer than this CUDA: the message says what is needed
    throw rtc_compile_error("NVRTC " + std::to_string(major) + "." + std::to_string(minor) +
                            " cannot compile for sm_" + std::to_string(cc) +
                            ": run-time kernels need a CUDA that knows this GPU");
  }
  options.push_back("--gpu-architecture=sm_" + std::to_string(cc));
  std::string key = source + "\n" + std::to_string(major) + "." + std::to_string(minor);
  for (const auto& o : options) key += "\n" + o;
  const std::filesystem::path dir = rtc_cache_dir();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
  const std::filesystem::path file = dir.empty() ? dir : dir / (std::string(hex) + ".cubin");
  if (cached) *cached = false;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    std::vector<char> cubin((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!cubin.empty()) {
      if (cached) *cached = true;
      return cubin;
    }
  }

  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    throw std::runtime_error("NVRTC could not create a program");
  }
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult result =
      nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) nvrtcGetProgramLog(program, log.data());
  if (result != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    throw rtc_compile_error(first_diagnostic(log));
  }
  std::size_t size = 0;
  nvrtcGetCUBINSize(program, &size);
  std::vector<char> cubin(size);
  nvrtcGetCUBIN(program, cubin.data());
  nvrtcDestroyProgram(&program);

  if (!file.empty()) {  // best effort: a cache that cannot be written only costs time
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::filesystem::path tmp = file.string() + ".tmp" + std::to_string(::getpid());
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    }
    std::filesystem::rename(tmp, file, ec);
    if (ec) std::filesystem::remove(tmp, ec);
  }
  return cubin;
}

/// A loaded cubin and its kernels (unloaded with the object).
class rtc_library {
 public:
  explicit rtc_library(const std::vector<char>& cubin) {
    GMB_CUDA_CHECK(
        cudaLibraryLoadData(&library_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  }
  ~rtc_library() {
    if (library_) cudaLibraryUnload(library_);
  }
  rtc_library(const rtc_library&) = delete;
  rtc_library& operator=(const rtc_library&) = delete;

  /// An extern "C" kernel of the library, launchable with cudaLaunchKernel.
  const void* kernel(const char* name) const {
    cudaKernel_t k = nullptr;
    GMB_CUDA_CHECK(cudaLibraryGetKernel(&k, library_, name));
    return reinterpret_cast<const void*>(k);
  }

 private:
  cudaLibrary_t library_ = nullptr;
};

/// Launches `kernel` with the given arguments (each passed by address, as CUDA requires).
template <class... Args>
void rtc_launch(const void* kernel, unsigned grid, unsigned block, cudaStream_t stream,
                Args... args) {
  void* argv[] = {static_cast<void*>(&args)...};
  GMB_CUDA_CHECK(cudaLaunchKernel(kernel, dim3(grid), dim3(block), argv, 0, stream));
}

}  // namespace gmb
