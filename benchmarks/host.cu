// Host family (kernels/host.cuh): kernels reading and writing pinned, mapped host memory over
// the host link (zero-copy), coalesced, offset and strided, beside the copy engine
// (cudaMemcpyAsync) from and to pinned and pageable memory. Bytes: those crossing the link
// (host/read: threads*sizeof(T) read from host memory into a device array; host/write: from a
// device array into host memory; ref/memcpy_*: the bytes copied), pct_peak of the link's
// theoretical rate (host_link.hpp). Names: host/read/f32x4/ilp:4,
// host/write/f32x4/ilp:4/grid:persistent, host/read/f32/off:1, host/write/f32/s:8,
// ref/memcpy_h2d/mem:pinned, ref/memcpy_d2h/mem:pageable.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/builders/mapped_case.cuh"
#include "gmb/element_types.cuh"
#include "gmb/host_link.hpp"
#include "gmb/mapped_check.cuh"
#include "gmb/naming.hpp"
#include "kernels/host.cuh"

namespace gmb {

namespace {

using built_once::kLinkBlock;
using built_once::link_copy;
using built_once::link_map;
using built_once::link_tiles;

/// The device side of every copy, and the whole of a memcpy: element t is element t.
const link_map<offset_map> kIdentity{offset_map{0}};

/// The family's host memory, made on first use and kept for the process (pinning costs tens
/// of milliseconds: once, not per case), and what it holds: reads need the input pattern,
/// writes poison it first.
struct host_state {
  std::size_t bytes = 0;
  double peak = 0;
  pinned_mapped_buffer pinned;
  std::unique_ptr<std::uint32_t[]> pageable;
  bool pinned_holds_input = false;
  bool pageable_holds_input = false;
  std::unique_ptr<nvml_link_reader> link;  // the link's state after each run (NVML)

  pinned_mapped_buffer& host() {
    if (pinned.bytes() == 0) pinned = pinned_mapped_buffer(bytes);
    return pinned;
  }
  std::uint32_t* pageable_words() {
    if (!pageable) pageable.reset(new std::uint32_t[bytes / sizeof(std::uint32_t)]);
    return pageable.get();
  }
  /// Pinned memory holding the input pattern (written by the GPU, in stream order).
  void pinned_input(cudaStream_t stream) {
    if (pinned_holds_input) return;
    fill_words(host().device(), bytes, kInputPattern, stream);
    pinned_holds_input = true;
  }
  void poison_pinned(cudaStream_t stream) {
    pinned_holds_input = false;
    fill_words(host().device(), bytes, word_constant{kPoisonWord}, stream);
  }
  /// Pageable memory holding the input pattern (written by the CPU).
  void pageable_input() {
    if (pageable_holds_input) return;
    std::uint32_t* words = pageable_words();
    for (std::size_t w = 0; w < bytes / sizeof(std::uint32_t); ++w) words[w] = kInputPattern(w);
    pageable_holds_input = true;
  }
  void poison_pageable() {
    pageable_holds_input = false;
    std::memset(pageable_words(), kPoisonByte, bytes);
  }
};

/// Checks host[W(t)] == in[R(t)] (the input pattern's element R(t)) for every t: on the
/// device through the mapped pointer, then a sample on the host, reading the memory itself.
template <class T, class ReadMap, class WriteMap>
std::string verify_host_output(environment& env, host_state& state, std::size_t threads,
                               const ReadMap& read, const WriteMap& write) {
  auto describe = [&](std::size_t t, const char* how) {
    std::ostringstream msg;
    msg << "host[" << write(t, 0) << "] (thread " << t << ") does not hold in[" << read(t, 0) << "]"
        << how;
    return msg.str();
  };
  const mismatch_report report = check_mapped(state.pinned.device<const T>(), threads, read, write,
                                              kInputPattern, env.stream());
  if (report.count != 0) {
    return describe(report.first, "") + " (" + std::to_string(report.count) + " of " +
           std::to_string(threads) + " threads wrong)";
  }
  const T* host = state.pinned.host<const T>();
  std::mt19937_64 rng(threads);
  for (int i = 0; i < 32; ++i) {
    const std::size_t t = i == 0 ? 0 : i == 1 ? threads - 1 : rng() % threads;
    if (element_mismatch(host[write(t, 0)], kInputPattern, read(t, 0)) != 0) {
      return describe(t, " (host check)");
    }
  }
  return "";
}

/// Every word of pageable host memory against the input pattern, on the host.
std::string verify_pageable(const std::uint32_t* words, std::size_t count) {
  std::size_t wrong = 0, first = count;
  for (std::size_t w = 0; w < count; ++w) {
    if (words[w] != kInputPattern(w)) {
      if (wrong++ == 0) first = w;
    }
  }
  if (wrong == 0) return "";
  std::ostringstream msg;
  msg << "pageable host memory: word " << first << " is 0x" << std::hex << words[first]
      << ", expected 0x" << kInputPattern(first) << std::dec << " (" << wrong << " of " << count
      << " words wrong)";
  return msg.str();
}

/// What every case of the family shares: built once, one launch of milliseconds per
/// iteration, the link's peak, and the link's generation and width read after the run (an
/// idle link trains down; right after the timed launches it shows what they ran on).
/// The L2 flush stays (cold_l2): it is untimed, and the launch then starts cold whether or
/// not the L2 keeps lines of host memory; writes cannot hide there past the timer, as a
/// finished kernel's writes to host memory are visible to the host.
void link_defaults(bench_case& c, const std::shared_ptr<host_state>& state) {
  c.every_flavor = false;
  c.launches_per_iteration = 1;
  c.peak_bytes_per_second = state->peak;
  c.measured = [state](environment&) {
    measurements m;
    if (!state->link) return m;
    const auto [gen, width] = state->link->current();
    m.emplace_back("pcie_gen", gen);
    m.emplace_back("pcie_width", width);
    return m;
  };
}

/// A kernel copy over the link: host memory -> device array (to_host false) or back, Ilp
/// elements of T per thread, on a full grid or the resident blocks only.
template <class T, unsigned Ilp, class ReadMap, class WriteMap>
bench_case link_case(environment& env, const std::shared_ptr<host_state>& state, std::string name,
                     bool to_host, std::size_t threads, const ReadMap& read, const WriteMap& write,
                     bool persistent) {
  auto kernel = link_copy<T, Ilp, ReadMap, WriteMap>;
  const std::size_t tiles = link_tiles(threads, Ilp);
  std::size_t blocks = tiles;
  if (persistent) {
    int per_sm = 0;
    GMB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kLinkBlock, 0));
    blocks = std::min(tiles, static_cast<std::size_t>(per_sm) * env.device().sms);
  }
  const auto grid = static_cast<unsigned>(blocks);
  bench_case c;
  c.name = std::move(name);
  link_defaults(c, state);
  c.prepare = [state, to_host](environment& e) {
    if (to_host) {
      e.in().fill(kInputPattern, e.stream());
      state->poison_pinned(e.stream());
    } else {
      state->pinned_input(e.stream());
      e.out().poison(e.stream());
    }
  };
  c.launch = [=](environment& e) {
    const T* in = to_host ? e.in().data<const T>() : state->pinned.device<const T>();
    T* out = to_host ? state->pinned.device<T>() : e.out().data<T>();
    kernel<<<grid, kLinkBlock, 0, e.stream()>>>(in, out, threads, read, write);
  };
  c.verify = [=](environment& e) {
    return to_host ? verify_host_output<T>(e, *state, threads, read, write)
                   : verify_mapped<T>(e, e.out(), threads, read, write);
  };
  const double bytes = static_cast<double>(threads) * sizeof(T);
  if (to_host) {
    c.bytes_written = bytes;
    c.model = predict_traffic(write, threads, sizeof(T), access_kind::kStore);
  } else {
    c.bytes_read = bytes;
    c.model = predict_traffic(read, threads, sizeof(T), access_kind::kLoad);
  }
  return c;
}

/// ref/memcpy_h2d|d2h/mem:pinned|pageable: cudaMemcpyAsync of the family's host array.
bench_case memcpy_case(const std::shared_ptr<host_state>& state, bool to_host, bool pinned) {
  const std::size_t bytes = state->bytes;
  bench_case c;
  c.name = bench_name("ref", to_host ? "memcpy_d2h" : "memcpy_h2d",
                      {name_param("mem", pinned ? "pinned" : "pageable")});
  link_defaults(c, state);
  c.prepare = [state, to_host, pinned](environment& e) {
    if (to_host) {
      e.in().fill(kInputPattern, e.stream());
      if (pinned) {
        state->poison_pinned(e.stream());
      } else {
        state->poison_pageable();
      }
    } else {
      if (pinned) {
        state->pinned_input(e.stream());
      } else {
        state->pageable_input();
      }
      e.out().poison(e.stream());
    }
  };
  c.launch = [state, to_host, pinned, bytes](environment& e) {
    void* host = pinned ? state->pinned.host() : static_cast<void*>(state->pageable.get());
    if (to_host) {
      GMB_CUDA_CHECK(
          cudaMemcpyAsync(host, e.in().data(), bytes, cudaMemcpyDeviceToHost, e.stream()));
    } else {
      GMB_CUDA_CHECK(
          cudaMemcpyAsync(e.out().data(), host, bytes, cudaMemcpyHostToDevice, e.stream()));
    }
  };
  c.verify = [state, to_host, pinned, bytes](environment& e) -> std::string {
    const std::size_t vectors = bytes / sizeof(float4);
    if (!to_host) return verify_mapped<float4>(e, e.out(), vectors, kIdentity, kIdentity);
    if (pinned) return verify_host_output<float4>(e, *state, vectors, kIdentity, kIdentity);
    GMB_CUDA_CHECK(cudaStreamSynchronize(e.stream()));
    return verify_pageable(state->pageable.get(), bytes / sizeof(std::uint32_t));
  };
  (to_host ? c.bytes_written : c.bytes_read) = static_cast<double>(bytes);
  return c;
}

/// Coalesced copies of T, Ilp per thread: read and write, on a full grid (no grid key) and,
/// in the full sweep, on a persistent one.
template <class T, unsigned Ilp>
void add_coalesced(environment& env, const std::shared_ptr<host_state>& state, sweep s,
                   std::vector<bench_case>& cases) {
  const std::size_t threads = state->bytes / sizeof(T);
  const std::string type = element_traits<T>::kName;
  for (const bool persistent : {false, true}) {
    if (persistent && s != sweep::kFull) continue;
    for (const bool to_host : {false, true}) {
      const std::string variant = std::string(to_host ? "write/" : "read/") + type;
      const std::string name =
          persistent ? bench_name("host", variant,
                                  {name_param("ilp", Ilp), name_param("grid", "persistent")})
                     : bench_name("host", variant, {name_param("ilp", Ilp)});
      cases.push_back(
          link_case<T, Ilp>(env, state, name, to_host, threads, kIdentity, kIdentity, persistent));
    }
  }
}

/// f32 reads or writes of host memory shifted by `off` elements (the device side aligned),
/// the same threads at every offset.
void add_offsets(environment& env, const std::shared_ptr<host_state>& state, sweep s,
                 std::vector<bench_case>& cases) {
  const std::vector<std::size_t> quick = {1};  // off:0 reads as host/*/f32/ilp:1
  const std::vector<std::size_t> full = {0, 1, 2, 3, 4, 8, 16, 24, 31, 32};
  const std::size_t threads = (state->bytes / sizeof(float) - kMaxOffset) / kLinkBlock * kLinkBlock;
  for (const bool to_host : {false, true}) {
    for (const std::size_t off : s == sweep::kFull ? full : quick) {
      const link_map<offset_map> shifted{offset_map{off}};
      const std::string name = bench_name("host", to_host ? "write/f32" : "read/f32",
                                          {name_param("off", static_cast<long long>(off))});
      cases.push_back(
          to_host
              ? link_case<float, 1>(env, state, name, true, threads, kIdentity, shifted, false)
              : link_case<float, 1>(env, state, name, false, threads, shifted, kIdentity, false));
    }
  }
}

/// f32 reads or writes of host memory with lanes `st` elements apart, over the whole host
/// array at every stride (threads = array / stride: the useful bytes shrink with the stride).
void add_strides(environment& env, const std::shared_ptr<host_state>& state, sweep s,
                 std::vector<bench_case>& cases) {
  const std::vector<std::size_t> quick_read = {8}, quick_write = {};
  const std::vector<std::size_t> full = {1, 2, 3, 4, 8, 16, 32, 64, 128};
  for (const bool to_host : {false, true}) {
    const auto& list = s == sweep::kFull ? full : to_host ? quick_write : quick_read;
    for (const std::size_t st : list) {
      const link_map<strided_map> spread{strided_map{st}};
      const std::size_t threads = state->bytes / (st * sizeof(float));
      const std::string name = bench_name("host", to_host ? "write/f32" : "read/f32",
                                          {name_param("s", static_cast<long long>(st))});
      cases.push_back(
          to_host
              ? link_case<float, 1>(env, state, name, true, threads, kIdentity, spread, false)
              : link_case<float, 1>(env, state, name, false, threads, spread, kIdentity, false));
    }
  }
}

}  // namespace

std::vector<bench_case> host_cases(environment& env, sweep s) {
  const int device = env.device().ordinal;
  if (host_mapped_support(device) != "yes") return {};  // the context says why
  auto state = std::make_shared<host_state>();
  state->bytes = host_link_bytes(env.array_bytes());
  state->peak = host_link(device).bytes_per_second();
  std::string no_nvml;
  state->link = nvml_link_reader::open(device, &no_nvml);

  std::vector<bench_case> cases;
  for (const bool to_host : {false, true}) {
    for (const bool pinned : {true, false}) {
      if (pinned || s == sweep::kFull) cases.push_back(memcpy_case(state, to_host, pinned));
    }
  }
  add_coalesced<float4, 4>(env, state, s, cases);
  if (s == sweep::kFull) {
    add_coalesced<float4, 1>(env, state, s, cases);
    add_coalesced<float4, 2>(env, state, s, cases);
    add_coalesced<float4, 8>(env, state, s, cases);
    add_coalesced<float, 1>(env, state, s, cases);
    add_coalesced<float, 2>(env, state, s, cases);
    add_coalesced<float, 4>(env, state, s, cases);
    add_coalesced<float, 8>(env, state, s, cases);
  }
  add_offsets(env, state, s, cases);
  add_strides(env, state, s, cases);
  return cases;
}

}  // namespace gmb
