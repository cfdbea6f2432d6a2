// Pattern family: the user's own index expression (--gmb_pattern=EXPR), compiled at run time by
// NVRTC into the kernels of kernels/pattern_rtc.cuh and run through the harness like every
// family. Before anything is registered the expression is evaluated on the GPU into an index
// table: an index outside [0, n) or an undefined operation stops the run with one line naming
// the first thread; the traffic model reads the table's sampled warps as it reads the built-in
// maps, and the loads' DRAM bytes from the whole table replayed through the L2 (l2_replay.hpp);
// verification checks every output against the table. Bytes: threads * K * word read
// and/or written. Names: pattern/<expr>/<op>/<word>/k:K/block:B (n:N, nthreads:T when given;
// not threads:, which Google Benchmark appends to names of its own).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/builders/residency.cuh"
#include "benchmarks/families.hpp"
#include "gmb/inflight.hpp"
#include "gmb/l2_replay.hpp"
#include "gmb/rtc_sass.hpp"
#include "gmb/naming.hpp"
#include "gmb/pattern_expr.hpp"
#include "gmb/pattern_program.hpp"
#include "gmb/pattern_table.hpp"
#include "gmb/rtc.hpp"
#include "gmb/sizing.hpp"

namespace gmb {

namespace {

pattern_options g_options;

constexpr std::size_t kMemoryReserve = 512 * kMiB;  // left free for the driver and checks
/// Everything one expression needs at run time: its compiled kernels and its index table.
struct compiled_pattern {
  std::unique_ptr<rtc_library> library;
  const void* table_kernel = nullptr;
  const void* probe_kernel = nullptr;
  const void* run_kernel = nullptr;
  const void* check_kernel = nullptr;
  device_buffer table;
  double compile_seconds = 0;
  bool cached = false;
  int run_instructions = 0;  // the run kernel's warp instructions, one pass (0: not counted)
};

/// Fills the table on the GPU; throws one line naming the first thread with a bad slot: out of
/// range, undefined, or an element one of its earlier slots touched.
void build_table(compiled_pattern& p, const std::string& expr, std::size_t threads, unsigned k,
                 unsigned block, std::size_t n, cudaStream_t stream) {
  p.table = device_buffer(round_up(threads * k * sizeof(std::uint32_t), 16));
  device_buffer fault(16);
  GMB_CUDA_CHECK(cudaMemsetAsync(fault.data<void>(), 0xFF, 16, stream));
  const unsigned grid = static_cast<unsigned>((threads + block - 1) / block);
  rtc_launch(p.table_kernel, grid, block, stream, p.table.data<std::uint32_t>(),
             static_cast<long long>(threads), static_cast<long long>(n),
             fault.data<unsigned long long>());
  unsigned long long first = 0;
  GMB_CUDA_CHECK(
      cudaMemcpyAsync(&first, fault.data<void>(), sizeof first, cudaMemcpyDeviceToHost, stream));
  GMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (first == ~0ull) return;

  // Evaluate that thread's slots again, as that thread, for the message.
  const auto t = static_cast<long long>(first);
  device_buffer probe(round_up(k * (sizeof(long long) + sizeof(int)), 16));
  long long* values = probe.data<long long>();
  int* undefined = reinterpret_cast<int*>(values + k);
  rtc_launch(p.probe_kernel, static_cast<unsigned>(t / block + 1), block, stream, t,
             static_cast<long long>(n), values, undefined);
  std::vector<long long> v(k);
  std::vector<int> u(k);
  GMB_CUDA_CHECK(
      cudaMemcpyAsync(v.data(), values, k * sizeof(long long), cudaMemcpyDeviceToHost, stream));
  GMB_CUDA_CHECK(
      cudaMemcpyAsync(u.data(), undefined, k * sizeof(int), cudaMemcpyDeviceToHost, stream));
  GMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::ostringstream msg;
  msg << "--gmb_pattern '" << expr << "': thread i=" << t;
  for (unsigned s = 0; s < k; ++s) {
    const std::string at = k > 1 ? " (k=" + std::to_string(s) + ")" : "";
    if (u[s]) {
      msg << at << " divides by zero or shifts by a negative count or 64 or more";
      throw std::invalid_argument(msg.str());
    }
    if (v[s] < 0 || v[s] >= static_cast<long long>(n)) {
      msg << at << " touches element " << v[s] << ", outside [0, n=" << n << ")"
          << (v[s] >= 0 ? ": lower --gmb_pattern_threads or raise --gmb_pattern_n" : "");
      throw std::invalid_argument(msg.str());
    }
    for (unsigned j = 0; j < s; ++j) {
      if (v[j] == v[s]) {
        msg << " touches element " << v[s] << " in slots k=" << j << " and k=" << s
            << ": each slot must touch an element of its own (use k, e.g. i * " << k << " + k)";
        throw std::invalid_argument(msg.str());
      }
    }
  }
  msg << ": a bad slot the probe could not find again";
  throw std::invalid_argument(msg.str());
}

compiled_pattern compile_pattern(environment& env, const std::string& expr, pattern_op op,
                                 const word_shape& word, unsigned k, unsigned block,
                                 bool whole_tiles) {
  compiled_pattern p;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> options = pattern_compile_options(g_options.dlcm);
  const int cc = env.device().cc_major * 10 + env.device().cc_minor;
  std::vector<char> cubin;
  try {
    cubin = rtc_compile(pattern_program(expr, op, word, k, block, whole_tiles), "pattern.cu",
                        options, cc, &p.cached);
  } catch (const rtc_compile_error& e) {
    throw std::invalid_argument("--gmb_pattern '" + expr + "': NVRTC: " + e.what());
  }
  p.library = std::make_unique<rtc_library>(cubin);
  p.table_kernel = p.library->kernel("gmb_pattern_table");
  p.probe_kernel = p.library->kernel("gmb_pattern_probe");
  p.run_kernel = p.library->kernel("gmb_pattern_run");
  p.check_kernel = p.library->kernel("gmb_pattern_check");
  p.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  p.run_instructions = rtc_kernel_instructions(cubin, "gmb_pattern_run", cc);  // untimed
  return p;
}

/// The table's slots for the warps the traffic model samples, copied to the host.
sampled_table sample_table(const device_buffer& table, std::size_t threads, unsigned k,
                           cudaStream_t stream) {
  return sample_windows(threads, k, [&](std::size_t first, std::size_t count) {
    return table.copy_words_to_host(first, count, stream);
  });
}

/// The loads' DRAM bytes over the whole launch (l2_replay.hpp): what the traffic model's windows
/// of 64 warps miss, a line re-read far apart, from the L2 or not. For the operations whose
/// loads follow the expression; the stores go to the other array (a gather's coalesced).
l2_replay_result replay_loads(const compiled_pattern& p, pattern_op op, std::size_t threads,
                              unsigned k, unsigned block, unsigned word_bytes, environment& env) {
  const std::size_t in_flight = std::size_t(resident_blocks(p.run_kernel, block, 0)) * block *
                                std::size_t(env.device().sms);
  const l2_replay_launch launch{threads, k, block, std::min(in_flight, threads),
                                env.device().l2_bytes};
  const std::uint64_t out = std::uint64_t(1) << 40;  // past any array: the other buffer
  const coalesced_slots_map coalesced{block, k, word_shape{word_bytes, word_bytes}};
  return replay_l2(
      launch, word_bytes,
      [&](std::size_t first, std::size_t count) {
        return p.table.copy_words_to_host(first, count, env.stream());
      },
      [&](std::size_t t, unsigned s, std::uint64_t e) -> std::uint64_t {
        if (op == pattern_op::kCopy) return out + e * word_bytes;
        if (op == pattern_op::kGather) return out + std::uint64_t(coalesced(t, s)) * word_bytes;
        return kNoAccess;
      });
}

/// Loads an SM keeps in flight (inflight.hpp): its resident blocks' K loads of the word.
double resident_bytes_in_flight(const void* kernel, unsigned block, unsigned k,
                                unsigned word_bytes) {
  const int blocks = resident_blocks(kernel, block, 0);
  return bytes_in_flight_per_sm(launch_shape{block, static_cast<unsigned>(blocks)}, k, word_bytes);
}

bench_case make_case(environment& env, const std::string& expr, pattern_op op, const word_choice& w,
                     unsigned k, unsigned block, std::size_t n, std::size_t threads) {
  auto p = std::make_shared<compiled_pattern>(
      compile_pattern(env, expr, op, w.shape, k, block, threads % block == 0));
  build_table(*p, expr, threads, k, block, n, env.stream());
  const sampled_table sampled = sample_table(p->table, threads, k, env.stream());

  const unsigned wb = w.shape.word_bytes, align = w.shape.align;
  const std::size_t blocks = (threads + block - 1) / block;
  const std::size_t coalesced_elems = blocks * block * k;  // what gmb_coalesced reaches
  const std::size_t in_elems = op == pattern_op::kWrite     ? 0
                               : op == pattern_op::kScatter ? coalesced_elems
                                                            : n;
  const std::size_t out_elems = op == pattern_op::kRead     ? 0
                                : op == pattern_op::kGather ? coalesced_elems
                                                            : n;
  const std::size_t in_bytes = round_up(in_elems * wb, kMiB);
  const std::size_t out_bytes = round_up(out_elems * wb, kMiB);
  const bool own = std::max(in_bytes, out_bytes) > env.array_bytes();
  struct buffers {
    device_buffer in, out;
  };
  auto owned = std::make_shared<buffers>();
  auto in = [own, owned](environment& e) -> device_buffer& { return own ? owned->in : e.in(); };
  auto out = [own, owned](environment& e) -> device_buffer& { return own ? owned->out : e.out(); };

  std::vector<name_param> params = {{"k", static_cast<long long>(k)},
                                    {"block", static_cast<long long>(block)}};
  if (g_options.n > 0 || g_options.bytes > 0) params.emplace_back("n", static_cast<long long>(n));
  if (g_options.threads > 0) params.emplace_back("nthreads", static_cast<long long>(threads));
  bench_case c;
  c.name =
      bench_name("pattern", pattern_name_part(expr) + "/" + op_name(op) + "/" + w.name, params);
  c.prepare = [=](environment& e) {
    if (!own || owned->in.bytes() + owned->out.bytes() == 0) {
      if (own)
        *owned = buffers{device_buffer(std::max(in_bytes, kMiB)),
                         device_buffer(std::max(out_bytes, kMiB))};
      if (op != pattern_op::kWrite) in(e).fill(kInputPattern, e.stream());
    }
    if (op != pattern_op::kRead) out(e).poison(e.stream());
    e.reset_counter();
  };
  const unsigned grid = static_cast<unsigned>(blocks);
  auto launch = [=](environment& e, std::uint32_t in_seed) {
    rtc_launch(p->run_kernel, grid, block, e.stream(), in(e).template data<const void>(),
               out(e).template data<void>(), static_cast<long long>(threads),
               static_cast<long long>(n), static_cast<long long>(blocks), in_seed,
               kWritePattern.seed, e.counter());
  };
  c.launch = [=](environment& e) { launch(e, kInputPattern.seed); };
  c.verify = [=](environment& e) -> std::string {
    const double slots = double(threads) * k;
    if (op == pattern_op::kRead) {
      if (const auto wrong = e.read_counter(); wrong != 0) {
        return std::to_string(wrong) + " element reads saw a wrong word";
      }
      // The check must see what is wrong: told to expect other words, every read reports.
      e.reset_counter();
      launch(e, kInputPattern.seed ^ 1u);
      const auto all = e.read_counter();
      e.reset_counter();
      if (double(all) != slots) {
        return "the read checks nothing: expecting other words it reported " + std::to_string(all) +
               " of " + std::to_string(threads * k) + " reads";
      }
      return "";
    }
    device_buffer bad(16);
    const unsigned long long init[2] = {0, ~0ull};
    GMB_CUDA_CHECK(cudaMemcpyAsync(bad.data<void>(), init, 16, cudaMemcpyHostToDevice, e.stream()));
    rtc_launch(p->check_kernel, grid, block, e.stream(), p->table.data<const std::uint32_t>(),
               out(e).template data<const void>(), static_cast<long long>(threads),
               kInputPattern.seed, kWritePattern.seed, bad.data<unsigned long long>());
    unsigned long long got[2];
    GMB_CUDA_CHECK(cudaMemcpyAsync(got, bad.data<void>(), 16, cudaMemcpyDeviceToHost, e.stream()));
    GMB_CUDA_CHECK(cudaStreamSynchronize(e.stream()));
    if (got[0] != 0) {
      std::ostringstream msg;
      msg << "thread " << got[1] / k << " (k=" << got[1] % k << ") left a wrong value (" << got[0]
          << " of " << threads * k << " slots wrong)";
      return msg.str();
    }
    return "";
  };
  if (own) c.release = [owned](environment&) { *owned = buffers{}; };
  const double moved = double(threads) * k * wb;
  c.bytes_read = op == pattern_op::kWrite ? 0 : moved;
  c.bytes_written = op == pattern_op::kRead ? 0 : moved;
  // One launch per iteration when a launch moves less than 8 L2s (it would find the data of
  // the previous one in the L2); else the environment's back-to-back launches.
  if (c.bytes_read + c.bytes_written < double(kL2Multiple * env.device().l2_bytes)) {
    c.launches_per_iteration = 1;
  }

  const sampled_table_map pattern_side{&sampled, w.shape};
  const coalesced_slots_map coalesced_side{block, k, w.shape};
  // The loads that follow the expression: sectors from the windows, DRAM bytes from the
  // whole launch (a line re-read after the windows).
  double set_bytes = std::nan("");  // reported where the whole launch was replayed
  double page_bytes = std::nan("");  // ... and the pages that set lies on (the translation's)
  double replayed_extra = 0;  // the replay's DRAM bytes less the windows' (re-use far apart)
  const auto pattern_loads = [&] {
    traffic_prediction loads = predict_traffic(pattern_side, threads, align, access_kind::kLoad);
    const l2_replay_result replayed = replay_loads(*p, op, threads, k, block, wb, env);
    if (replayed.replayed) {  // else past the replay's bounds: the windows' bytes
      replayed_extra = replayed.load_dram_bytes - loads.dram_bytes;
      loads.dram_bytes = replayed.load_dram_bytes;
      set_bytes = replayed.set_bytes;
      page_bytes = replayed.set_pages * double(kTranslationPageBytes);
    }
    return loads;
  };
  switch (op) {
    case pattern_op::kRead:
      c.model = pattern_loads();
      break;
    case pattern_op::kWrite:
      c.model = predict_traffic(pattern_side, threads, align, access_kind::kStore);
      break;
    case pattern_op::kCopy:
      c.model = pattern_loads() +
                predict_traffic(pattern_side, threads, align, access_kind::kStore);
      break;
    case pattern_op::kGather:
      c.model = pattern_loads() +
                predict_traffic(coalesced_side, threads, align, access_kind::kStore);
      break;
    case pattern_op::kScatter:
      c.model = predict_traffic(coalesced_side, threads, align, access_kind::kLoad) +
                predict_traffic(pattern_side, threads, align, access_kind::kStore);
      break;
  }
  const warp_shape shape = describe_warps(sampled, threads, wb);
  measurements counters = {
      {"pattern_threads", double(threads)},
      {"pattern_elements", double(n)},
      {"pattern_distinct_per_req", shape.distinct_per_request},
      {"pattern_lines_per_req", shape.lines_per_request},
      {"pattern_compile_s", p->compile_seconds},
      {"pattern_cached", p->cached ? 1.0 : 0.0},
      {"bytes_in_flight_per_sm",
       op == pattern_op::kWrite ? 0.0 : resident_bytes_in_flight(p->run_kernel, block, k, wb)}};
  // Reported only where the warps have them (NaN: the step varies, no consecutive lanes).
  const measurements where_defined = {
      {"pattern_lane_step", shape.lane_step},
      {"pattern_aligned_fraction", shape.aligned_fraction},
      {"pattern_set_bytes", set_bytes},
      {"pattern_set_page_bytes", page_bytes},
      // how the loads use the granules they bring, warps near each other (scattered or not)
      {"pattern_window_dram_bytes",
       std::isnan(set_bytes) ? std::nan("") : c.model->dram_bytes - replayed_extra}};
  for (const auto& entry : where_defined) {
    if (!std::isnan(entry.second)) counters.push_back(entry);
  }
  // the block slot by its warps' instructions, as the binary's own kernels have it (harness.cu)
  if (p->run_instructions > 0) {
    counters.push_back({"model_warp_instructions", double(p->run_instructions)});
  }
  c.measured = [counters](environment&) { return counters; };
  return c;
}

}  // namespace

void set_pattern_options(const pattern_options& options) {
  g_options = options;
}

std::vector<bench_case> pattern_cases(environment& env, sweep) {
  std::vector<bench_case> cases;
  if (g_options.expressions.empty()) return cases;
  const word_choice word = parse_pattern_word(g_options.word);
  const pattern_op op = parse_pattern_op(g_options.op);
  const unsigned k = g_options.k, block = g_options.block;
  if (k < 1 || k > 16) throw std::invalid_argument("--gmb_pattern_k: 1 to 16 elements per thread");
  if (block < 32 || block > 1024 || block % 32 != 0) {
    throw std::invalid_argument("--gmb_pattern_block: a multiple of 32 from 32 to 1024");
  }
  const unsigned wb = word.shape.word_bytes;
  std::size_t n = env.array_bytes() / wb;
  if (g_options.bytes > 0) {
    if (g_options.bytes % wb != 0) {
      throw std::invalid_argument("--gmb_pattern_bytes: " + std::to_string(g_options.bytes) +
                                  " bytes is not a whole number of " + std::to_string(wb) +
                                  "-byte words (" + word.name + ")");
    }
    n = g_options.bytes / wb;
  }
  if (g_options.n > 0) n = g_options.n;
  // Words are unique below 2^31 (words.cuh) and the table holds 32-bit indices.
  if (n == 0 || n * wb > kMaxArrayBytes || n >= (std::size_t(1) << 32)) {
    throw std::invalid_argument("pattern: n = " + std::to_string(n) + " elements of " +
                                std::to_string(wb) + " B: an array from 1 element to " +
                                std::to_string(kMaxArrayBytes >> 30) + " GiB");
  }
  const std::size_t threads = g_options.threads > 0 ? g_options.threads : n / k;
  if (threads == 0) {
    throw std::invalid_argument("pattern: no thread: n = " + std::to_string(n) +
                                " elements are fewer than k = " + std::to_string(k));
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  GMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t need = 2 * round_up(n * wb, kMiB) + threads * k * 4 + kMemoryReserve;
  if (need > free_bytes) {
    throw std::invalid_argument("pattern: n = " + std::to_string(n) + " and " +
                                std::to_string(threads) + " threads need " +
                                std::to_string(need >> 20) + " MiB of GPU memory; " +
                                std::to_string(free_bytes >> 20) + " MiB are free");
  }
  for (const std::string& expr : g_options.expressions) {
    try {
      validate_pattern_expr(expr);
    } catch (const pattern_expr_error& e) {
      throw std::invalid_argument("--gmb_pattern '" + expr + "': " + e.what());
    }
    cases.push_back(make_case(env, expr, op, word, k, block, n, threads));
  }
  return cases;
}

}  // namespace gmb
