#pragma once
// Times work on a stream with CUDA events: the GPU's own clock, no host work inside.
#include <cuda_runtime.h>

#include "gmb/cuda_check.hpp"

namespace gmb {

class event_timer {
 public:
  event_timer() {
    GMB_CUDA_CHECK(cudaEventCreate(&start_));
    GMB_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~event_timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;

  void start(cudaStream_t stream) { GMB_CUDA_CHECK(cudaEventRecord(start_, stream)); }
  void stop(cudaStream_t stream) { GMB_CUDA_CHECK(cudaEventRecord(stop_, stream)); }

  /// Waits for the stop event; seconds between the two events.
  double seconds() const {
    GMB_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    GMB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace gmb
