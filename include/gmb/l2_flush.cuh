#pragma once
// Makes the L2 cold before a timed launch by READING a clean buffer of at least twice its size.
// A memset flush would leave dirty lines whose write-back lands inside the next timed kernel;
// a read evicts the benchmark's lines (writing back its dirty ones now, untimed) and leaves
// only clean lines behind.
#include <cuda_runtime.h>

#include <cstddef>

#include "gmb/device_buffer.cuh"
#include "gmb/sizing.hpp"

namespace gmb {

class l2_flush {
 public:
  /// `l2_bytes` from the device; the buffer is rounded up to whole MiB.
  explicit l2_flush(std::size_t l2_bytes) : buffer_(bytes_for(l2_bytes)) {
    GMB_CUDA_CHECK(cudaMalloc(&report_, sizeof(mismatch_report)));
    buffer_.fill(kContent, nullptr);
    GMB_CUDA_CHECK(cudaDeviceSynchronize());
    // Evict the fill's own dirty lines once, so that every later flush only reads.
    flush(nullptr);
    flush(nullptr);
    GMB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~l2_flush() { cudaFree(report_); }
  l2_flush(const l2_flush&) = delete;
  l2_flush& operator=(const l2_flush&) = delete;

  /// Queues the flush on `stream`; the read is the mismatch check, which keeps its loads alive.
  void flush(cudaStream_t stream) { buffer_.launch_check(kContent, report_, stream); }

  std::size_t bytes() const { return buffer_.bytes(); }
  static std::size_t bytes_for(std::size_t l2_bytes) { return round_up(2 * l2_bytes, kMiB); }

 private:
  static constexpr word_pattern kContent{0x0F1E2D3Cu};

  device_buffer buffer_;
  mismatch_report* report_ = nullptr;
};

}  // namespace gmb
