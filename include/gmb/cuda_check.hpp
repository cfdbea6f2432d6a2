#pragma once
// CUDA error handling: every runtime call is checked; a failure throws with file, line and call.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace gmb {

class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* expr, const char* file,
                                          int line) {
  cudaGetLastError();  // reported here: clear it, or the next unrelated check reports it again
  throw cuda_error(code, std::string(cudaGetErrorName(code)) + " (" + cudaGetErrorString(code) +
                             ") in " + expr + " at " + file + ":" + std::to_string(line));
}

}  // namespace gmb

#define GMB_CUDA_CHECK(expr)                                                  \
  do {                                                                        \
    const cudaError_t gmb_status_ = (expr);                                   \
    if (gmb_status_ != cudaSuccess) {                                         \
      ::gmb::throw_cuda_error(gmb_status_, #expr, __FILE__, __LINE__);        \
    }                                                                         \
  } while (0)
