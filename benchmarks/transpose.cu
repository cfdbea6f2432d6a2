// Transpose ladder (kernels/transpose.cuh, gmb/transpose_plan.hpp): transpose/f32/<rung>/n:N,
// square matrices of about 1 GiB (at least 8x the L2 of an H100 or H200; halved while the
// arrays do not hold them): f32 at N 16384 and 16000 (both multiples of 32; the second not of
// the top rung's 64-wide tile) and f64 at 11584 and 11568 (not a multiple of 32). Rows stay
// whole 128-B lines, so those sizes add edge tiles, not misaligned rows (the offset family's
// cost). Rung 0 is a plain 2-D copy of the same bytes: the ladder's roof. The counter `rung`
// orders the ladder for the scripts. Quick (the default run's time budget): seven rungs of f32
// at 16384 (add_ladder says which), the copy and the top rung of f64 at 11584; full: every
// rung at every size. Model: the traffic model of the same rung on a 128x128 matrix (sectors
// per request do not depend on the size), its DRAM bytes scaled to N x N.
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "benchmarks/families.hpp"
#include "gmb/element_types.cuh"
#include "gmb/naming.hpp"
#include "kernels/transpose.cuh"
#include "kernels/transpose_probes.cuh"
#include "kernels/transpose_tma.cuh"

namespace gmb {

namespace {

/// The output's words: the input's element at the transposed place (the copy rung: the same
/// place), poison after the matrix.
struct transposed_words {
  word_pattern in;
  transpose_plan plan;
  unsigned words_per_element;
  GMB_HD std::uint32_t operator()(std::size_t w) const {
    const std::size_t e = w / words_per_element;
    if (e >= plan.rows * plan.cols) return kPoisonWord;
    std::size_t source = e;
    if (plan.rung != transpose_rung::kCopy) {  // output (row c, col r) holds input (r, c)
      source = (e % plan.rows) * plan.cols + e / plan.rows;
    }
    return in(source * words_per_element + w % words_per_element);
  }
};

traffic_prediction rung_model(transpose_rung rung, unsigned element_bytes, std::size_t n) {
  constexpr std::size_t kProxy = 128;
  const transpose_plan proxy{rung, kProxy, kProxy};
  const std::size_t threads = proxy.blocks() * proxy.threads_per_block();
  element_bytes *= proxy.pair_width();
  traffic_prediction p =
      predict_traffic(transpose_side_map{proxy, false}, threads, element_bytes,
                      access_kind::kLoad) +
      predict_traffic(transpose_side_map{proxy, true}, threads, element_bytes, access_kind::kStore);
  const double scale = double(n) * double(n) / double(kProxy * kProxy);
  p.dram_bytes *= scale;
  p.useful_bytes *= scale;
  p.loads.requests *= scale;
  p.loads.sectors *= scale;
  p.stores.requests *= scale;
  p.stores.sectors *= scale;
  return p;
}

template <class T, transpose_rung Rung>
bench_case transpose_case(std::size_t n) {
  const transpose_plan plan{Rung, n, n};
  const transposed_words expected{kInputPattern, plan, kWordsPer<T>};
  bench_case c;
  c.name = bench_name("transpose",
                      std::string(element_traits<T>::kName) + "/" + transpose_rung_name(Rung),
                      {{"n", static_cast<long long>(n)}});
  c.prepare = [](environment& e) {
    e.in().fill(kInputPattern, e.stream());
    e.out().poison(e.stream());
  };
  if constexpr (Rung == transpose_rung::kTileTma) {
    static_assert(std::is_same_v<T, float>, "the TMA rung moves 32x32 tiles of f32");
    // The tensor maps name the arrays: made at the first launch, again if they moved.
    auto maps = std::make_shared<built_once::transpose_tma_maps>();
    auto made_for = std::make_shared<std::pair<const void*, const void*>>(nullptr, nullptr);
    c.launch = [plan, maps, made_for](environment& e) {
      const std::pair<const void*, const void*> arrays{e.in().data<const void>(),
                                                       e.out().data<const void>()};
      if (*made_for != arrays) {
        *maps = built_once::make_transpose_tma_maps(plan, e.in().data<const float>(),
                                                    e.out().data<float>());
        *made_for = arrays;
      }
      built_once::launch_transpose_tma(plan, *maps, e.stream());
    };
    c.needs = gpu_feature::kBulkCopy;
  } else {
    c.launch = [plan](environment& e) {
      launch_transpose<T, Rung>(plan, e.in().data<const T>(), e.out().data<T>(), e.stream());
    };
  }
  c.verify = [expected](environment& e) { return verify_words(e, e.out(), expected, "out"); };
  c.bytes_read = c.bytes_written = double(n) * double(n) * sizeof(T);
  c.model = rung_model(Rung, sizeof(T), n);
  c.measured = [](environment&) { return measurements{{"rung", static_cast<int>(Rung)}}; };
  if (Rung == transpose_rung::kTileAsync) c.needs = gpu_feature::kAsyncCopy;
  return c;
}

/// The words a probe leaves: `moved`'s tiles at their transposed places, rows kept; the
/// exchange's and the stores' the transpose of the input's words.
struct moved_words {
  word_pattern in;
  std::size_t n;
  GMB_HD std::uint32_t operator()(std::size_t w) const {
    return w < n * n ? in(moved_index(w / n, w % n, n)) : kPoisonWord;
  }
};

/// model/transpose/f32/<probe>/<key>:<value> on the rung's plan, n x n (a multiple of 32).
template <tile_probe Probe, transpose_rung Rung>
bench_case probe_case(std::size_t n, const char* key, const char* value) {
  const transpose_plan plan{Rung, n, n};
  bench_case c;
  c.name = bench_name("model", std::string("transpose/f32/") + name(Probe), {{key, value}});
  c.prepare = fill_input_poison_output;
  c.launch = [plan](environment& e) {
    launch_transpose_probe<Probe, Rung>(plan, e.in().data<const std::uint32_t>(),
                                        e.out().data<std::uint32_t>(), kInputPattern, e.stream());
  };
  if constexpr (Probe == tile_probe::kMoved) {
    c.verify = [n](environment& e) {
      return verify_words(e, e.out(), moved_words{kInputPattern, n}, "out");
    };
    c.bytes_read = double(n) * double(n) * 4;
  } else {
    const transposed_words expected{kInputPattern, plan, 1};
    c.verify = [expected](environment& e) { return verify_words(e, e.out(), expected, "out"); };
  }
  c.bytes_written = double(n) * double(n) * 4;
  return c;
}

/// Which rungs a ladder registers: every one, the quick sweep's (one lesson each: the two
/// naive sides, the tile and its padding, 32x8 threads, the top), or the roof and the top.
enum class rungs { kEvery, kQuick, kRoofAndTop };

template <class T>
void add_ladder(std::vector<bench_case>& cases, std::size_t n, rungs which) {
  using R = transpose_rung;
  const bool every = which == rungs::kEvery, quick = every || which == rungs::kQuick;
  cases.push_back(transpose_case<T, R::kCopy>(n));
  if (every) cases.push_back(transpose_case<T, R::kThreadPerCol>(n));
  if (quick) {
    cases.push_back(transpose_case<T, R::kNaiveRows>(n));
    cases.push_back(transpose_case<T, R::kNaiveCols>(n));
  }
  if (every) cases.push_back(transpose_case<T, R::kWarpPerCol>(n));
  if (quick) {
    cases.push_back(transpose_case<T, R::kTile>(n));
    cases.push_back(transpose_case<T, R::kTilePadded>(n));
    cases.push_back(transpose_case<T, R::kTileRows8>(n));
  }
  if (every) {
    cases.push_back(transpose_case<T, R::kTileDiagonal>(n));
    cases.push_back(transpose_case<T, R::kTileAsync>(n));
  }
  // The TMA rung (f32 tiles of 128-B rows), in the quick ladder too: Hopper's own way to move a
  // tile, beside the tiled rungs.
  if constexpr (std::is_same_v<T, float>) {
    if (quick) cases.push_back(transpose_case<T, R::kTileTma>(n));
  }
  cases.push_back(transpose_case<T, R::kBest>(n));
}

/// The side `n`, halved while an array cannot hold an n x n matrix of `element_bytes`.
std::size_t fitting(std::size_t n, std::size_t element_bytes, std::size_t array_bytes) {
  while (n > 1 && n * n * element_bytes > array_bytes) n /= 2;
  return n;
}

}  // namespace

std::vector<bench_case> transpose_calibration_cases(environment& env) {
  // The tiled rungs taken apart, on the quick ladder's f32 matrix: the tiles moved to their
  // transposed places (32 x 8 and 32 x 32 threads), the padded exchange, and its stores alone
  const std::size_t n = fitting(16384, 4, env.array_bytes()) / kTransposeTile * kTransposeTile;
  using R = transpose_rung;
  std::vector<bench_case> cases;
  if (n == 0) return cases;
  cases.push_back(probe_case<tile_probe::kMoved, R::kTileRows8>(n, "block", "32x8"));
  cases.push_back(probe_case<tile_probe::kMoved, R::kTilePadded>(n, "block", "32x32"));
  cases.push_back(probe_case<tile_probe::kExchange, R::kTilePadded>(n, "pad", "1"));
  cases.push_back(probe_case<tile_probe::kStores, R::kTilePadded>(n, "block", "32x32"));
  return cases;
}

std::vector<bench_case> transpose_cases(environment& env, sweep s) {
  const std::size_t bytes = env.array_bytes();
  std::vector<bench_case> cases;
  if (s == sweep::kQuick) {
    add_ladder<float>(cases, fitting(16384, 4, bytes), rungs::kQuick);
    add_ladder<double>(cases, fitting(11584, 8, bytes), rungs::kRoofAndTop);
    return cases;
  }
  add_ladder<float>(cases, fitting(16384, 4, bytes), rungs::kEvery);
  add_ladder<float>(cases, fitting(16000, 4, bytes), rungs::kEvery);
  add_ladder<double>(cases, fitting(11584, 8, bytes), rungs::kEvery);
  add_ladder<double>(cases, fitting(11568, 8, bytes), rungs::kEvery);
  return cases;
}

}  // namespace gmb
