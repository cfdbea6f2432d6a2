#pragma once
// One helper builds every mapped-copy benchmark (kernels/mapped.cuh): buffers, launch,
// verification against the index maps, logical bytes and the traffic model, so the offset
// and stride families only choose maps and names.
#include <algorithm>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "benchmarks/harness/harness.cuh"
#include "gmb/mapped_check.cuh"
#include "gmb/pattern.cuh"
#include "gmb/words.cuh"
#include "kernels/mapped.cuh"

namespace gmb {

/// Offsets shift f32 reads and writes by up to 32 elements (128 B: aligned again).
inline constexpr std::size_t kMaxOffset = 32;

/// Checks out[W(t)] == in[R(t)] for every t on the device, then a sample on the host; `in`
/// holds `source` (the input pattern unless told otherwise).
template <class T, class ReadMap, class WriteMap>
std::string verify_mapped(environment& env, const device_buffer& out, std::size_t threads,
                          const ReadMap& read, const WriteMap& write,
                          const word_pattern& source = kInputPattern) {
  auto host_element = [&](std::size_t t) {
    const auto words =
        out.copy_words_to_host(write(t, 0) * kWordsPer<T>, kWordsPer<T>, env.stream());
    T value;
    memcpy(&value, words.data(), sizeof(T));
    return value;
  };
  auto describe = [&](std::size_t t, const char* how) {
    std::ostringstream msg;
    msg << "out[" << write(t, 0) << "] (thread " << t << ") does not hold in[" << read(t, 0) << "]"
        << how;
    return msg.str();
  };
  const mismatch_report report =
      check_mapped(out.data<const T>(), threads, read, write, source, env.stream());
  if (report.count != 0) {
    return describe(report.first, "") + " (" + std::to_string(report.count) + " of " +
           std::to_string(threads) + " threads wrong)";
  }
  std::mt19937_64 rng(threads);
  for (int i = 0; i < 32; ++i) {
    const std::size_t t = i == 0 ? 0 : i == 1 ? threads - 1 : rng() % threads;
    if (element_mismatch(host_element(t), source, read(t, 0)) != 0) {
      return describe(t, " (host check)");
    }
  }
  return "";
}

/// A mapped copy of `threads` elements, Ilp per thread. Uses the environment's arrays when the
/// maps fit in them; otherwise allocates its own (large strides) in prepare and frees them in
/// release (harness.cuh: when another case starts).
template <class T, cache_op Load, unsigned Ilp = 1, class ReadMap, class WriteMap>
bench_case mapped_case(environment& env, std::string name, std::size_t threads, const ReadMap& read,
                       const WriteMap& write) {
  struct buffers {
    device_buffer in, out;
  };
  const std::size_t in_bytes = round_up(elements_spanned(read, threads) * sizeof(T), kMiB);
  const std::size_t out_bytes = round_up(elements_spanned(write, threads) * sizeof(T), kMiB);
  const bool own = std::max(in_bytes, out_bytes) > env.array_bytes();
  auto owned = std::make_shared<buffers>();
  auto in = [own, owned](environment& e) -> device_buffer& { return own ? owned->in : e.in(); };
  auto out = [own, owned](environment& e) -> device_buffer& { return own ? owned->out : e.out(); };

  bench_case c;
  c.name = std::move(name);
  c.prepare = [=](environment& e) {
    // Own buffers (up to 64 GiB) are made and filled once while the harness holds them: no
    // kernel writes its input. The shared arrays are refilled, as other cases reuse them.
    if (!own || owned->out.bytes() == 0) {
      if (own) *owned = buffers{device_buffer(in_bytes), device_buffer(out_bytes)};  // both or none
      in(e).fill(kInputPattern, e.stream());
    }
    out(e).poison(e.stream());
  };
  const unsigned grid = mapped_grid(threads, Ilp);
  c.launch = [=](environment& e) {
    mapped_copy<T, ReadMap, WriteMap, Load, Ilp><<<grid, kMappedBlock, 0, e.stream()>>>(
        in(e).template data<const T>(), out(e).template data<T>(), threads, read, write);
  };
  c.kernel = kernel_id(mapped_copy<T, ReadMap, WriteMap, Load, Ilp>);
  c.verify = [=](environment& e) { return verify_mapped<T>(e, out(e), threads, read, write); };
  if (own) c.release = [owned](environment&) { *owned = buffers{}; };
  c.bytes_read = c.bytes_written = static_cast<double>(threads) * sizeof(T);
  c.model = predict_traffic(read, threads, sizeof(T), access_kind::kLoad) +
            predict_traffic(write, threads, sizeof(T), access_kind::kStore);
  return c;
}

}  // namespace gmb
