// The ladders' kernels on shapes the benchmarks never use: every transpose rung on matrices
// that are not multiples of the tile (1xN, Nx1, tiny), every reduction rung on counts that are
// not multiples of a block, each checked element by element or against the host's sum.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gmb/cuda_check.hpp"
#include "kernels/reduce.cuh"
#include "kernels/transpose.cuh"
#include "tests/device/gpu.hpp"

namespace gmb {
namespace {

template <class T>
struct device_array {
  T* p = nullptr;
  explicit device_array(std::size_t n) { GMB_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T) + 16)); }
  ~device_array() { cudaFree(p); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
};

template <class T, transpose_rung Rung>
std::size_t wrong_transposed(std::size_t rows, std::size_t cols) {
  const std::size_t n = rows * cols;
  std::vector<T> host(n), back(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<T>(i + 1);
  device_array<T> in(n), out(n);
  GMB_CUDA_CHECK(cudaMemcpy(in.p, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  GMB_CUDA_CHECK(cudaMemset(out.p, 0xFF, n * sizeof(T)));
  launch_transpose<T, Rung>(transpose_plan{Rung, rows, cols}, in.p, out.p, nullptr);
  GMB_CUDA_CHECK(cudaGetLastError());
  GMB_CUDA_CHECK(cudaMemcpy(back.data(), out.p, n * sizeof(T), cudaMemcpyDeviceToHost));
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t at = Rung == transpose_rung::kCopy ? r * cols + c : c * rows + r;
      wrong += back[at] != host[r * cols + c];
    }
  }
  return wrong;
}

template <class T, int R = 0>
void expect_every_rung_transposes(std::size_t rows, std::size_t cols) {
  if constexpr (R < kTransposeRungs) {
    constexpr auto rung = static_cast<transpose_rung>(R);
    EXPECT_EQ((wrong_transposed<T, rung>(rows, cols)), 0u)
        << transpose_rung_name(rung) << " " << rows << "x" << cols;
    expect_every_rung_transposes<T, R + 1>(rows, cols);
  }
}

TEST(Ladders, EveryTransposeRungIsRightOnEdgeShapes) {
  GMB_REQUIRE_GPU();
  for (auto [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1, 1}, {1, 1000}, {1000, 1}, {3, 5}, {33, 65}, {100, 257}, {256, 256}}) {
    expect_every_rung_transposes<float>(rows, cols);
    expect_every_rung_transposes<double>(rows, cols);
  }
}

template <class T>
void expect_every_rung_sums(std::size_t n) {
  const bool as_float = std::is_same_v<T, float>;
  std::vector<std::uint32_t> words(n);
  for (std::size_t w = 0; w < n; ++w) words[w] = reduce_words{3, as_float}(w);
  device_array<T> in(n), out(kReducePartialsWord + 4 * (n + 1024));
  GMB_CUDA_CHECK(cudaMemcpy(in.p, words.data(), n * 4, cudaMemcpyHostToDevice));
  const long long expected = reduce_expected_sum(n, 3);
  for (int r = 0; r < kReduceRungs; ++r) {
    const auto rung = static_cast<reduce_rung>(r);
    GMB_CUDA_CHECK(cudaMemset(out.p, 0, 4 * (kReducePartialsWord + 4 * (n + 1024))));
    for (int launch = 0; launch < 2; ++launch) {  // the one-pass ticket must reset itself
      for (const reduce_pass& p : reduce_passes(rung, n, 264)) {
        launch_reduce_pass<T>(rung, p, in.p, out.p,
                              reinterpret_cast<unsigned*>(out.p) + kReduceTicketWord, nullptr);
      }
    }
    GMB_CUDA_CHECK(cudaGetLastError());
    T got;
    GMB_CUDA_CHECK(cudaMemcpy(&got, out.p + kReduceResultWord, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT_EQ(static_cast<double>(got), static_cast<double>(expected))
        << reduce_rung_name(rung) << " n=" << n;
  }
}

TEST(Ladders, EveryReductionRungSumsOddCounts) {
  GMB_REQUIRE_GPU();
  for (std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(255), std::size_t(256),
                        std::size_t(257), std::size_t(1023), std::size_t(1025),
                        3 * kOnePassTile + 7, std::size_t(100003), std::size_t(1 << 22) + 5}) {
    expect_every_rung_sums<float>(n);
    expect_every_rung_sums<int>(n);
  }
}

}  // namespace
}  // namespace gmb
