#pragma once
// Makes a GPU current for a scope: buffers on another GPU (a peer's) are made and freed with
// their own GPU current.
#include <cuda_runtime_api.h>

#include "gmb/cuda_check.hpp"

namespace gmb {

class scoped_device {
 public:
  explicit scoped_device(int device) {
    GMB_CUDA_CHECK(cudaGetDevice(&saved_));
    GMB_CUDA_CHECK(cudaSetDevice(device));
  }
  ~scoped_device() { cudaSetDevice(saved_); }
  scoped_device(const scoped_device&) = delete;
  scoped_device& operator=(const scoped_device&) = delete;

 private:
  int saved_ = 0;
};

}  // namespace gmb
