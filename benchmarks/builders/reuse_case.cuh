#pragma once
// The case builder of the re-use and cache-operator families (kernels/reuse.cuh): as many
// threads as the environment's input holds under the pattern's map, the xor_case checks, the
// distinct words read as the logical bytes, and the kernel's carve-out set before it runs.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "benchmarks/builders/xor_case.cuh"
#include "gmb/carveout.cuh"
#include "kernels/reuse.cuh"

namespace gmb {

/// Distinct words the threads read: the whole span for the dense maps, one per thread for a
/// strided gather, the fields loaded for structures (the logical bytes of docs/design.md, not the lines
/// the hardware moves).
template <class Map>
std::size_t words_read(const Map& map, std::size_t n) {
  return elements_spanned(map, n);
}
inline std::size_t words_read(const strided_map&, std::size_t n) {
  return n;
}
/// The fields loaded, not the structures' span (one field of each: a third of a 12-B struct).
inline std::size_t words_read(const aos_map& map, std::size_t n) {
  return n * map.fields;
}

/// The most threads, a multiple of `multiple`, whose reads under `map` stay within `words`.
template <class Map>
std::size_t threads_within(const Map& map, std::size_t words, std::size_t multiple) {
  std::size_t lo = 0, hi = words / multiple;  // in multiples; elements_spanned grows with n
  while (lo < hi) {
    const std::size_t mid = (lo + hi + 1) / 2;
    if (elements_spanned(map, mid * multiple) <= words) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo * multiple;
}

/// A kernels/reuse.cuh benchmark on the environment's arrays: as many threads as the input
/// holds (whole blocks), the given xor-of-reads kernel (Slots words per thread under `map`),
/// and the kernel's preferred carve-out set before it runs.
template <unsigned Slots, class Map>
bench_case xor_reads_case(void (*kernel)(const std::uint32_t*, std::uint32_t*, std::size_t, Map),
                          environment& env, std::string name, const Map& map, std::size_t multiple,
                          l1_carveout carveout = l1_carveout::kUnset) {
  // The kernel reads Slots words per thread; the map (and so the checks) must agree, and the
  // threads must fill whole blocks.
  if (map.slots() != Slots || (multiple % kReuseBlock != 0 && kReuseBlock % multiple != 0)) {
    throw std::invalid_argument(name + ": map slots or thread multiple do not fit the kernel");
  }
  const std::size_t words = env.array_bytes() / sizeof(std::uint32_t);
  const std::size_t n = threads_within(map, words, std::max<std::size_t>(multiple, kReuseBlock));
  const unsigned grid = static_cast<unsigned>(n / kReuseBlock);
  bench_case c = xor_case(
      std::move(name),
      [=](environment& e) {
        kernel<<<grid, kReuseBlock, 0, e.stream()>>>(e.in().data<const std::uint32_t>(),
                                                     e.out().data<std::uint32_t>(), n, map);
      },
      mapped_xor_words<Map>{kInputPattern, map, n}, predict_traffic(map, n, 4, access_kind::kLoad),
      4.0 * words_read(map, n));
  c.kernel = kernel_id(kernel);
  c.prepare = [fill = c.prepare, kernel, carveout](environment& e) {
    prefer_carveout(kernel, carveout);
    fill(e);
  };
  return c;
}

/// xor_reads_case with xor_reads: 4-B loads with operator Load, stores with Store.
template <unsigned Slots, cache_op Load = cache_op::kDefault, store_op Store = store_op::kDefault,
          class Map>
bench_case reuse_case(environment& env, std::string name, const Map& map, std::size_t multiple,
                      l1_carveout carveout = l1_carveout::kUnset) {
  return xor_reads_case<Slots, Map>(xor_reads<Slots, Map, Load, Store>, env, std::move(name), map,
                                    multiple, carveout);
}

}  // namespace gmb
