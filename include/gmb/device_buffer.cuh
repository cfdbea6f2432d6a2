#pragma once
// RAII device memory with the operations every benchmark needs around a timed launch:
// poison (so unwritten outputs show), fill from a word generator, check against one, copy back.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "gmb/cuda_check.hpp"
#include "gmb/words.cuh"

namespace gmb {

/// Result of checking a buffer: how many words differ and the index of the first one.
struct mismatch_report {
  unsigned long long count = 0;
  unsigned long long first = ~0ull;
};

namespace detail {

inline constexpr int kUtilityBlock = 256;

/// Grid for the utility kernels: enough blocks to fill the device, never more than the work.
inline unsigned utility_grid(std::size_t vectors) {
  int device = 0, sms = 0;
  GMB_CUDA_CHECK(cudaGetDevice(&device));
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t needed = (vectors + kUtilityBlock - 1) / kUtilityBlock;
  const std::size_t cap = static_cast<std::size_t>(sms) * 8;
  return static_cast<unsigned>(needed < cap ? (needed ? needed : 1) : cap);
}

template <class Gen>
__global__ void fill_words_kernel(uint4* out, std::size_t vectors, Gen gen) {
  for (std::size_t v = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; v < vectors;
       v += std::size_t(gridDim.x) * blockDim.x) {
    out[v] = make_element<uint4>(gen, v);
  }
}

}  // namespace detail

/// Fills `bytes` (whole 16-B vectors) at any address the GPU can write (device memory, mapped
/// host memory, managed memory) with a word generator, on `stream`.
template <class Gen>
void fill_words(void* data, std::size_t bytes, const Gen& gen, cudaStream_t stream) {
  const std::size_t vectors = bytes / sizeof(uint4);
  detail::fill_words_kernel<<<detail::utility_grid(vectors), detail::kUtilityBlock, 0, stream>>>(
      static_cast<uint4*>(data), vectors, gen);
  GMB_CUDA_CHECK(cudaGetLastError());
}

/// Writes one word at any address the copy engine reaches, and waits for it.
inline void write_word(std::uint32_t* words, std::size_t index, std::uint32_t value,
                       cudaStream_t stream) {
  GMB_CUDA_CHECK(cudaMemcpyAsync(words + index, &value, sizeof(value), cudaMemcpyDefault, stream));
  GMB_CUDA_CHECK(cudaStreamSynchronize(stream));
}

namespace detail {

/// Reads every word (16 B at a time) and counts those the generator disagrees with; one atomic
/// per thread-vector that found any (checking is untimed, so simplicity wins over speed).
template <class Gen>
__global__ void count_mismatches_kernel(const uint4* in, std::size_t vectors, Gen gen,
                                        mismatch_report* report) {
  for (std::size_t v = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; v < vectors;
       v += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 got = in[v];
    const std::uint32_t words[4] = {got.x, got.y, got.z, got.w};
    unsigned bad = 0;
    unsigned long long first = ~0ull;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (words[i] != gen(v * 4 + i)) {
        ++bad;
        if (first == ~0ull) first = v * 4 + i;
      }
    }
    if (bad) {
      atomicAdd(&report->count, static_cast<unsigned long long>(bad));
      atomicMin(&report->first, first);
    }
  }
}

}  // namespace detail

/// Runs `launch(report)` (which queues check kernels accumulating into `report`, device
/// memory) on `stream` and returns the report; synchronizes the stream.
template <class Launch>
mismatch_report run_check(cudaStream_t stream, Launch&& launch) {
  mismatch_report* report = nullptr;
  GMB_CUDA_CHECK(cudaMallocAsync(&report, sizeof(mismatch_report), stream));
  const mismatch_report init;
  GMB_CUDA_CHECK(cudaMemcpyAsync(report, &init, sizeof(init), cudaMemcpyHostToDevice, stream));
  launch(report);
  mismatch_report result;
  GMB_CUDA_CHECK(cudaMemcpyAsync(&result, report, sizeof(result), cudaMemcpyDeviceToHost, stream));
  GMB_CUDA_CHECK(cudaFreeAsync(report, stream));
  GMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return result;
}

class device_buffer {
 public:
  device_buffer() = default;
  /// `bytes` must be a whole number of 16-B vectors (the utility kernels move 16 B per thread).
  explicit device_buffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes % sizeof(uint4) != 0) {
      throw std::invalid_argument("device_buffer: size must be a multiple of 16 bytes");
    }
    GMB_CUDA_CHECK(cudaMalloc(&data_, bytes));
  }
  ~device_buffer() {
    if (data_) cudaFree(data_);
  }
  device_buffer(device_buffer&& o) noexcept { *this = std::move(o); }
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  template <class T = void>
  T* data() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }
  std::size_t words() const { return bytes_ / sizeof(std::uint32_t); }

  void poison(cudaStream_t stream) {
    GMB_CUDA_CHECK(cudaMemsetAsync(data_, kPoisonByte, bytes_, stream));
  }

  template <class Gen>
  void fill(const Gen& gen, cudaStream_t stream) {
    fill_words(data_, bytes_, gen, stream);
  }

  /// Queues a full read-and-check of the buffer; `report` (device memory) accumulates.
  template <class Gen>
  void launch_check(const Gen& gen, mismatch_report* report, cudaStream_t stream) const {
    const std::size_t vectors = bytes_ / sizeof(uint4);
    detail::count_mismatches_kernel<<<detail::utility_grid(vectors), detail::kUtilityBlock, 0,
                                      stream>>>(data<const uint4>(), vectors, gen, report);
    GMB_CUDA_CHECK(cudaGetLastError());
  }

  /// Checks every word against the generator; synchronizes the stream.
  template <class Gen>
  mismatch_report check(const Gen& gen, cudaStream_t stream) const {
    return run_check(stream, [&](mismatch_report* report) { launch_check(gen, report, stream); });
  }

  /// Copies words to the host in `stream` order (after the work queued before it); synchronizes.
  std::vector<std::uint32_t> copy_words_to_host(std::size_t first_word, std::size_t count,
                                                cudaStream_t stream) const {
    std::vector<std::uint32_t> host(count);
    GMB_CUDA_CHECK(cudaMemcpyAsync(host.data(), data<std::uint32_t>() + first_word,
                                   count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
    GMB_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
  }

  /// The buffer's first sizeof(T) bytes as one T (a record a kernel filled), in `stream` order;
  /// synchronizes.
  template <class T>
  T copy_record_to_host(cudaStream_t stream) const {
    T record{};
    GMB_CUDA_CHECK(
        cudaMemcpyAsync(&record, data<void>(), sizeof record, cudaMemcpyDeviceToHost, stream));
    GMB_CUDA_CHECK(cudaStreamSynchronize(stream));
    return record;
  }

  /// Overwrites one word in `stream` order; synchronizes (the value lives on the host stack).
  void write_word(std::size_t index, std::uint32_t value, cudaStream_t stream) {
    gmb::write_word(data<std::uint32_t>(), index, value, stream);
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace gmb
