// 2-D arrays (kernels/matrix.cuh): matrix/rows|cols/w:W/pad:0|1, f32, widths that are (1024,
// 4096) and are not (1000, 4000) multiples of 32 elements; pad:1 uses the row pitch that
// cudaMallocPitch returns for the width (registered only where it differs from the width).
// The matrix fills the arrays; words outside it (padding) must stay poisoned.
#include <algorithm>
#include <vector>

#include "benchmarks/families.hpp"
#include "gmb/naming.hpp"
#include "gmb/pattern.cuh"
#include "kernels/matrix.cuh"

namespace gmb {

namespace {

/// What the output holds after a copy: the input's words inside the matrix, poison outside.
struct matrix_words {
  word_pattern in;
  std::size_t width, height, pitch;
  GMB_HD std::uint32_t operator()(std::size_t w) const {
    return w % pitch < width && w / pitch < height ? in(w) : kPoisonWord;
  }
};

std::size_t pitch_for(std::size_t width) {
  void* probe = nullptr;
  std::size_t pitch_bytes = 0;
  GMB_CUDA_CHECK(cudaMallocPitch(&probe, &pitch_bytes, width * sizeof(float), 1));
  GMB_CUDA_CHECK(cudaFree(probe));
  return pitch_bytes / sizeof(float);
}

template <bool ColumnMajor>
bench_case matrix_case(environment& env, std::size_t width, std::size_t pitch, bool padded) {
  const std::size_t height = env.array_bytes() / sizeof(float) / pitch;
  const std::size_t elements = width * height;
  const matrix_map map{width, height, pitch, ColumnMajor};
  const dim3 block(kMatrixBlockX, kMatrixBlockY);
  const dim3 grid(static_cast<unsigned>((map.along_extent() + kMatrixBlockX - 1) / kMatrixBlockX),
                  static_cast<unsigned>(std::min<std::size_t>(
                      (map.across_extent() + kMatrixBlockY - 1) / kMatrixBlockY, 65535)));
  const matrix_words expected{kInputPattern, width, height, pitch};

  bench_case c;
  c.name = bench_name("matrix", ColumnMajor ? "cols" : "rows",
                      {{"w", static_cast<long long>(width)}, {"pad", padded ? 1 : 0}});
  c.prepare = [](environment& e) {
    e.in().fill(kInputPattern, e.stream());
    e.out().poison(e.stream());
  };
  c.launch = [=](environment& e) {
    matrix_copy<cache_op::kDefault>
        <<<grid, block, 0, e.stream()>>>(e.in().data<const float>(), e.out().data<float>(), map);
  };
  c.kernel = kernel_id(matrix_copy<cache_op::kDefault>);
  c.verify = [expected](environment& e) { return verify_words(e, e.out(), expected, "out"); };
  c.bytes_read = c.bytes_written = 4.0 * elements;
  c.model = predict_traffic(map, map.threads(), 4, access_kind::kLoad) +
            predict_traffic(map, map.threads(), 4, access_kind::kStore);
  return c;
}

}  // namespace

std::vector<bench_case> matrix_calibration_cases(environment& env) {
  // walks 2,000 wide (the sweep runs 1,000 to 4,096): by columns every lane's store is alone
  // in its line, so the crossbar's store requests into the L2, one line each, set its rate; by
  // rows each block's eight warps load eight rows: how long a block waits for the slowest
  std::vector<bench_case> cases;
  cases.push_back(matrix_case<true>(env, 2000, 2000, false));
  cases.push_back(matrix_case<false>(env, 2000, 2000, false));
  for (bench_case& c : cases) c.name = "model/" + c.name;
  return cases;
}

std::vector<bench_case> matrix_cases(environment& env, sweep) {
  std::vector<bench_case> cases;
  for (std::size_t width : {1000, 1024, 4000, 4096}) {
    const std::size_t pitch = pitch_for(width);
    for (bool padded : {false, true}) {
      if (padded && pitch == width) continue;  // already aligned: padding changes nothing
      const std::size_t p = padded ? pitch : width;
      cases.push_back(matrix_case<false>(env, width, p, padded));
      cases.push_back(matrix_case<true>(env, width, p, padded));
    }
  }
  return cases;
}

}  // namespace gmb
