// Registration of the coalesced baselines (kernels/coalesced.cuh): read, write, copy of
// f32, f64, f32x2, f32x4 with 1, 2, 4, 8 elements per thread, on a full grid (one thread per
// Ilp elements) and on a persistent grid (the resident blocks striding over the tiles).
// Names: read/f32x4/ilp:4/grid:persistent. The vector family reuses the copy: the same bytes
// in 1-, 2-, 4-, 8- and 16-byte words, 1 to 8 per thread (vector/w16/ilp:4).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "benchmarks/families.hpp"
#include "gmb/element_types.cuh"
#include "gmb/naming.hpp"
#include "kernels/coalesced.cuh"

namespace gmb {

namespace {

enum class grid_kind { kFull, kPersistent };

const char* name(grid_kind g) {
  return g == grid_kind::kFull ? "full" : "persistent";
}

template <class Kernel>
unsigned grid_size(const environment& env, Kernel kernel, std::size_t tiles, grid_kind g) {
  std::size_t blocks = tiles;
  if (g == grid_kind::kPersistent) {
    int per_sm = 0;
    GMB_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kCoalescedBlock, 0));
    blocks = std::min(tiles, static_cast<std::size_t>(per_sm) * env.device().sms);
  }
  return static_cast<unsigned>(blocks);
}

/// Elements of T in an array, checked to be a whole number of Ilp-element tiles.
template <class T, unsigned Ilp>
std::size_t tiles_of(const environment& env) {
  constexpr std::size_t kTileElements = std::size_t(kCoalescedBlock) * Ilp;
  const std::size_t n = env.array_bytes() / sizeof(T);
  if (n % kTileElements != 0) {
    throw std::invalid_argument("coalesced: array size is not a whole number of tiles");
  }
  return n / kTileElements;
}

/// in -> out with Ilp elements of T per thread by `kernel` (`launch` runs it on `grid` blocks);
/// the output's words must equal the input's.
template <class T, unsigned Ilp, class Kernel, class Launch>
bench_case copy_case_of(environment& env, std::string name, Kernel kernel, unsigned grid,
                        Launch launch) {
  const std::size_t tiles = tiles_of<T, Ilp>(env);
  const coalesced_map<kCoalescedBlock, Ilp> map;
  const std::size_t threads = tiles * kCoalescedBlock;
  bench_case c;
  c.name = std::move(name);
  c.prepare = [](environment& e) {
    e.in().fill(kInputPattern, e.stream());
    e.out().poison(e.stream());
  };
  c.launch = [=](environment& e) {
    launch(grid, e.stream(), e.in().template data<const T>(), e.out().template data<T>(), tiles);
  };
  c.kernel = kernel_id(kernel);
  c.verify = [](environment& e) { return verify_words(e, e.out(), kInputPattern, "out"); };
  c.bytes_read = c.bytes_written = static_cast<double>(env.array_bytes());
  c.model = predict_traffic(map, threads, sizeof(T), access_kind::kLoad) +
            predict_traffic(map, threads, sizeof(T), access_kind::kStore);
  return c;
}

/// The coalesced copy of Ilp elements of T per thread.
template <class T, unsigned Ilp>
bench_case copy_case(environment& env, std::string name, grid_kind g) {
  auto kernel = coalesced_copy<T, Ilp, cache_op::kDefault, store_op::kDefault>;
  const unsigned grid = grid_size(env, kernel, tiles_of<T, Ilp>(env), g);
  return copy_case_of<T, Ilp>(env, std::move(name), kernel, grid,
                              [kernel](unsigned blocks, cudaStream_t s, const T* in, T* out,
                                       std::size_t tiles) {
                                kernel<<<blocks, kCoalescedBlock, 0, s>>>(in, out, tiles);
                              });
}

/// model/instructions/f32/extra:K: the f32 copy with K more instructions per warp.
template <unsigned Extra>
bench_case instruction_case(environment& env) {
  auto kernel = instruction_copy<Extra>;
  const unsigned grid = static_cast<unsigned>(tiles_of<float, 1>(env));
  return copy_case_of<float, 1>(
      env, bench_name("model", "instructions/f32", {{"extra", Extra}}), kernel, grid,
      [kernel](unsigned blocks, cudaStream_t s, const float* in, float* out, std::size_t tiles) {
        kernel<<<blocks, kCoalescedBlock, 0, s>>>(in, out, tiles, 1u, 0u);
      });
}

/// model/copy/<type>/ilp:16: the copy with sixteen elements per thread in flight.
template <class T>
bench_case deep_copy_case(environment& env) {
  return copy_case<T, 16>(
      env, bench_name("model", std::string("copy/") + element_traits<T>::kName, {{"ilp", 16u}}),
      grid_kind::kFull);
}

template <class T, unsigned Ilp>
void add_cases(environment& env, std::vector<bench_case>& cases) {
  const std::size_t tiles = tiles_of<T, Ilp>(env);
  const std::size_t n = env.array_bytes() / sizeof(T);
  const double bytes = static_cast<double>(env.array_bytes());
  const coalesced_map<kCoalescedBlock, Ilp> map;
  const std::size_t threads = tiles * kCoalescedBlock;
  const auto load_model = predict_traffic(map, threads, sizeof(T), access_kind::kLoad);
  const auto store_model = predict_traffic(map, threads, sizeof(T), access_kind::kStore);
  const char* type = element_traits<T>::kName;

  for (grid_kind g : {grid_kind::kFull, grid_kind::kPersistent}) {
    const auto params = {name_param("ilp", Ilp), name_param("grid", name(g))};
    {
      auto kernel = coalesced_read<T, Ilp, cache_op::kDefault>;
      const unsigned grid = grid_size(env, kernel, tiles, g);
      bench_case c;
      c.name = bench_name("read", type, params);
      c.prepare = [](environment& e) {
        e.in().fill(kInputPattern, e.stream());
        e.reset_counter();
      };
      const checking_read_launch launch = [=](environment& e, word_pattern expected) {
        kernel<<<grid, kCoalescedBlock, 0, e.stream()>>>(e.in().data<const T>(), tiles, expected,
                                                         e.counter());
      };
      c.launch = [launch](environment& e) { launch(e, kInputPattern); };
      c.kernel = kernel_id(kernel);
      c.verify = [launch, n](environment& e) {
        return verify_checking_read(e, e.in(), kInputPattern, n, launch);
      };
      c.bytes_read = bytes;
      c.model = load_model;
      cases.push_back(std::move(c));
    }
    {
      auto kernel = coalesced_write<T, Ilp, store_op::kDefault>;
      const unsigned grid = grid_size(env, kernel, tiles, g);
      bench_case c;
      c.name = bench_name("write", type, params);
      c.prepare = [](environment& e) { e.out().poison(e.stream()); };
      c.launch = [=](environment& e) {
        kernel<<<grid, kCoalescedBlock, 0, e.stream()>>>(e.out().data<T>(), tiles, kWritePattern);
      };
      c.kernel = kernel_id(kernel);
      c.verify = [](environment& e) { return verify_words(e, e.out(), kWritePattern, "out"); };
      c.bytes_written = bytes;
      c.model = store_model;
      cases.push_back(std::move(c));
    }
    cases.push_back(copy_case<T, Ilp>(env, bench_name("copy", type, params), g));
  }
}

/// Calls f(std::integral_constant<unsigned, K>) for every elements-per-thread K of the suite.
template <class F>
void for_each_ilp(F&& f) {
  f(std::integral_constant<unsigned, 1>{});
  f(std::integral_constant<unsigned, 2>{});
  f(std::integral_constant<unsigned, 4>{});
  f(std::integral_constant<unsigned, 8>{});
}

template <class T>
void add_type(environment& env, std::vector<bench_case>& cases) {
  for_each_ilp([&](auto ilp) { add_cases<T, decltype(ilp)::value>(env, cases); });
}

/// The vector family: the same bytes copied in words of sizeof(T) bytes, Ilp words per thread.
template <class T, unsigned Ilp>
void add_vector_case(environment& env, std::vector<bench_case>& cases) {
  const std::string variant = "w" + std::to_string(sizeof(T));
  cases.push_back(
      copy_case<T, Ilp>(env, bench_name("vector", variant, {{"ilp", Ilp}}), grid_kind::kFull));
}

template <class T>
void add_word(environment& env, std::vector<bench_case>& cases) {
  for_each_ilp([&](auto ilp) { add_vector_case<T, decltype(ilp)::value>(env, cases); });
}

}  // namespace

std::vector<bench_case> vector_cases(environment& env, sweep) {
  std::vector<bench_case> cases;
  add_word<std::uint8_t>(env, cases);
  add_word<std::uint16_t>(env, cases);
  add_word<float>(env, cases);
  add_word<float2>(env, cases);
  add_word<float4>(env, cases);
  return cases;
}

std::vector<bench_case> instruction_calibration_cases(environment& env) {
  std::vector<bench_case> cases;
  cases.push_back(instruction_case<4>(env));
  cases.push_back(instruction_case<16>(env));
  cases.push_back(instruction_case<32>(env));
  cases.push_back(instruction_case<64>(env));
  return cases;
}

std::vector<bench_case> copy_depth_calibration_cases(environment& env) {
  // 64, 128 and 256 B per thread: past the sweep's 4 to 128 B, none of its kernels
  return {deep_copy_case<float>(env), deep_copy_case<double>(env), deep_copy_case<float4>(env)};
}

std::vector<bench_case> coalesced_cases(environment& env, sweep) {
  std::vector<bench_case> cases;
  add_type<float>(env, cases);
  add_type<double>(env, cases);
  add_type<float2>(env, cases);
  add_type<float4>(env, cases);
  return cases;
}

}  // namespace gmb
