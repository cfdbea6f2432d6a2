// gmembench: registers every family's benchmarks on one GPU and runs them with Google
// Benchmark. Own flags: --device=N, --gmb_bytes=SIZE, --gmb_info, ...; all --benchmark_* flags
// work, --benchmark_filter applied by gmembench itself (name_filter.hpp).
// Every failure a user can cause or meet ends in one line "gmembench: error: ..." and exit 1.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarks/families.hpp"
#include "gmb/git_sha.hpp"
#include "gmb/health_monitor.hpp"
#include "gmb/host_link.hpp"
#include "gmb/name_filter.hpp"
#include "gmb/peer_link.hpp"
#include "gmb/peer_scope.hpp"
#include "gmb/result_file.hpp"
#include "gmb/screen.hpp"
#include "gmb/sizing.hpp"
#include "gmb/stop_gate.hpp"
#include "gmb/stop_signal.hpp"
#include "gmb/traffic_model.hpp"

namespace {

// The architectures nvcc compiled this binary for ("900", or "800,900"), for error messages.
#define GMB_STRINGIFY_IMPL(...) #__VA_ARGS__
#define GMB_STRINGIFY(...) GMB_STRINGIFY_IMPL(__VA_ARGS__)
#ifdef __CUDA_ARCH_LIST__
constexpr const char* kBuiltArchitectures = GMB_STRINGIFY(__CUDA_ARCH_LIST__);
#else
constexpr const char* kBuiltArchitectures = "unknown";
#endif

// GPU time per repetition unless --benchmark_min_time says otherwise. Google Benchmark sizes a
// repetition to about 1.4x it (15 ms): at the default array size a coalesced copy runs 3 or
// more iterations of 4 launches, each verified work of 10^8+ bytes, and the three builds'
// 1,800+ benchmarks fit the default run's 6 minutes. Given as the flag's default value, never
// per benchmark: Google Benchmark would put it into every name. 1.8 takes "0.011s"; 1.7 only a
// plain number.
#ifdef GMB_BENCHMARK_MIN_TIME_SUFFIX
constexpr const char* kDefaultMinTimeFlag = "--benchmark_min_time=0.011s";
#else
constexpr const char* kDefaultMinTimeFlag = "--benchmark_min_time=0.011";
#endif

struct fatal_error {
  std::string message;
};

struct options {
  int device = 0;
  std::optional<std::size_t> array_bytes;
  int launches = 0;  // 0: chosen from the sizes
  gmb::sweep sweep = gmb::sweep::kQuick;
  bool screen = false;  // --gmb_sweep=screen: the quick sweep's screening benchmarks only
  bool info = false;
  bool profile = false;
  bool user_min_time = false;
  std::string filter;
  std::optional<std::string> progress_label;  // --gmb_progress[=LABEL]
  bool health = true;
  std::string health_out;
  bool every_flavor = false;  // --gmb_every_flavor: also the cases built alike in every flavor
  int peer_partner = -1;      // --gmb_peer_partner=J; -1: (device + 1) mod count
  gmb::peer_scope peer = gmb::peer_scope::kAll;  // --gmb_peer=all|skip|only
  gmb::pattern_options pattern;            // --gmb_pattern=EXPR (repeatable) and --gmb_pattern_*
  std::vector<std::string> pattern_flags;  // the --gmb_pattern_* flags given
  std::string skip_list;                   // --gmb_skip_list=FILE: names not to run
  std::string out;                         // --benchmark_out, as Google Benchmark reads it
  std::string out_format = "json";         // --benchmark_out_format
};

/// Whether this binary is a caching build (ca, cg): cases whose kernels compile alike in every
/// build run in the default flavor only, unless asked for.
constexpr bool kCachingBuild = std::string_view(GMB_FLAVOR) != "default";

void print_usage() {
  std::printf(
      "gmembench [--device=N] [--gmb_bytes=SIZE] [--gmb_launches=N] [--gmb_info]\n"
      "          [--benchmark_* flags]\n"
      "  --device=N          GPU to run on (default 0)\n"
      "  --gmb_bytes=SIZE    bytes per array, e.g. 512M or 2G, at most 8G (default 32x the\n"
      "                      GPU's L2, rounded up to whole MiB)\n"
      "  --gmb_launches=N    launches timed back to back per iteration, after one L2 flush\n"
      "                      (default: enough for 128x the L2 when arrays are >= 8x the\n"
      "                      L2, else 1)\n"
      "  --gmb_sweep=quick|full|screen  the quick default points, all of them, or the few\n"
      "                      that screen a GPU of a fleet (one flavor in seconds)\n"
      "  --gmb_profile       for Nsight Compute (scripts/gmb ncu): every benchmark launches\n"
      "                      its kernel once, unverified; its times are not results\n"
      "  --gmb_progress[=LABEL]  a progress line on stderr (benchmark n of N, time left)\n"
      "  --gmb_health=on|off watch the GPU through NVML while running (default on)\n"
      "  --gmb_health_out=FILE  the GPU's state at the start and the end, as JSON\n"
      "  --gmb_every_flavor  ca/cg builds: also run the families whose kernels compile alike\n"
      "                      in every build (texture, constant, local, host, managed), which\n"
      "                      otherwise run in the default flavor only\n"
      "  --gmb_pattern=EXPR  your own access pattern (repeatable): EXPR is the element that\n"
      "                      thread i touches, over i lane warp tid block k n (docs/pattern.md);\n"
      "                      compiled by NVRTC, measured as pattern/<EXPR>/...; with\n"
      "                      --gmb_pattern_op=read|write|copy|gather|scatter (read),\n"
      "                      --gmb_pattern_word=f32|f64|f32x2|f32x4|sN (f32), --gmb_pattern_k=K\n"
      "                      elements per thread (1), --gmb_pattern_block=B (256),\n"
      "                      --gmb_pattern_n=N elements or --gmb_pattern_bytes=SIZE (the\n"
      "                      array's), --gmb_pattern_threads=T (n / K)\n"
      "  --gmb_peer_partner=J  the partner GPU of peer/ and ref/memcpy_peer (default\n"
      "                      (device + 1) mod the number of GPUs)\n"
      "  --gmb_peer=all|skip|only  all benchmarks (default), none that touch another GPU\n"
      "                      (peer/, ref/memcpy_peer), or only those\n"
      "  --gmb_info          print the GPU's description as JSON and exit (with the NVLinks\n"
      "                      as NVML reports them)\n"
      "  --gmb_skip_list=FILE  do not run the benchmarks named in FILE, one per line (what\n"
      "                      gmb run --resume passes: the ones a stopped run finished)\n"
      "A first SIGINT, SIGTERM or SIGHUP stops the run after the benchmark in progress: the\n"
      "output file keeps every finished benchmark, with context gmb_interrupted, and the exit\n"
      "status is 128 + the signal's number; a second signal ends it at once.\n"
      "--benchmark_filter=REGEX selects by the names --benchmark_list_tests prints, with or\n"
      "without their '/manual_time'. Google Benchmark's flags follow.\n\n");
}

/// A whole number >= `min` or a fatal error that names the flag.
int parse_count(const std::string& flag, const std::string& text, int min, const char* what) {
  std::size_t used = 0;
  int value = min - 1;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < min) {
    throw fatal_error{flag + ": '" + text + "' is not " + what};
  }
  return value;
}

/// A whole number >= 1 that may exceed an int (element and thread counts).
std::size_t parse_size(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value == 0 || text[0] == '-') {
    throw fatal_error{flag + ": '" + text + "' is not a whole number of 1 or more"};
  }
  return static_cast<std::size_t>(value);
}

/// One --gmb_pattern_* flag (value_of: main's --flag=value / --flag value reader).
template <class ValueOf>
void parse_pattern_flag(const std::string& arg, ValueOf& value_of, options& opt) {
  gmb::pattern_options& p = opt.pattern;
  if (auto v = value_of("--gmb_pattern_op")) {
    p.op = *v;
  } else if (auto w = value_of("--gmb_pattern_word")) {
    p.word = *w;
  } else if (auto k = value_of("--gmb_pattern_k")) {
    p.k = static_cast<unsigned>(parse_count("--gmb_pattern_k", *k, 1, "1 to 16 elements"));
  } else if (auto b = value_of("--gmb_pattern_block")) {
    p.block = static_cast<unsigned>(parse_count("--gmb_pattern_block", *b, 32, "32 to 1024"));
  } else if (auto n = value_of("--gmb_pattern_n")) {
    p.n = parse_size("--gmb_pattern_n", *n);
  } else if (auto t = value_of("--gmb_pattern_threads")) {
    p.threads = parse_size("--gmb_pattern_threads", *t);
  } else if (auto s = value_of("--gmb_pattern_bytes")) {
    try {
      p.bytes = gmb::parse_bytes(*s);
    } catch (const std::invalid_argument& e) {
      throw fatal_error{std::string("--gmb_pattern_bytes: ") + e.what()};
    }
  } else {
    throw fatal_error{"unknown flag '" + arg + "' (see --help)"};
  }
  opt.pattern_flags.push_back(arg.substr(0, arg.find('=')));
}

/// Takes gmembench's own flags out of argv (both --flag=value and --flag value forms) and
/// leaves the rest for Google Benchmark in `rest` (argv[0] first).
options parse_own_flags(int argc, char** argv, std::vector<char*>& rest) {
  options opt;
  rest = {argv[0]};
  // Google Benchmark also reads its flags from the environment: those are the user's too.
  if (const char* f = std::getenv("BENCHMARK_FILTER")) opt.filter = f;
  if (const char* o = std::getenv("BENCHMARK_OUT")) opt.out = o;
  if (const char* f = std::getenv("BENCHMARK_OUT_FORMAT")) opt.out_format = f;
  opt.user_min_time = std::getenv("BENCHMARK_MIN_TIME") != nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value_of = [&](const std::string& flag) -> std::optional<std::string> {
      if (arg.rfind(flag + "=", 0) == 0) return arg.substr(flag.size() + 1);
      if (arg == flag) {
        if (i + 1 >= argc) throw fatal_error{flag + " needs a value"};
        return std::string(argv[++i]);
      }
      return std::nullopt;
    };
    if (auto v = value_of("--device")) {
      opt.device = parse_count("--device", *v, 0, "a GPU index");
    } else if (auto l = value_of("--gmb_launches")) {
      opt.launches = parse_count("--gmb_launches", *l, 1, "a number of launches (1 or more)");
    } else if (auto b = value_of("--gmb_bytes")) {
      try {
        opt.array_bytes = gmb::array_bytes_from_flag(*b);
      } catch (const std::invalid_argument& e) {
        throw fatal_error{std::string("--gmb_bytes: ") + e.what()};
      }
    } else if (auto w = value_of("--gmb_sweep")) {
      if (*w != "quick" && *w != "full" && *w != "screen") {
        throw fatal_error{"--gmb_sweep: '" + *w + "' is not quick, full or screen"};
      }
      opt.sweep = *w == "full" ? gmb::sweep::kFull : gmb::sweep::kQuick;
      opt.screen = *w == "screen";
    } else if (arg == "--gmb_profile") {
      opt.profile = true;
    } else if (arg == "--gmb_progress" || arg.rfind("--gmb_progress=", 0) == 0) {
      opt.progress_label = arg == "--gmb_progress" ? GMB_FLAVOR : arg.substr(15);
    } else if (auto h = value_of("--gmb_health")) {
      if (*h != "on" && *h != "off")
        throw fatal_error{"--gmb_health: '" + *h + "' is not on or off"};
      opt.health = *h == "on";
    } else if (auto o = value_of("--gmb_health_out")) {
      opt.health_out = *o;
    } else if (arg.rfind("--benchmark_filter=", 0) == 0) {
      opt.filter = arg.substr(19);
    } else if (arg == "--gmb_info") {
      opt.info = true;
    } else if (auto j = value_of("--gmb_peer_partner")) {
      opt.peer_partner = parse_count("--gmb_peer_partner", *j, 0, "a GPU index");
    } else if (auto p = value_of("--gmb_peer")) {
      const auto scope = gmb::parse_peer_scope(*p);
      if (!scope) throw fatal_error{"--gmb_peer: '" + *p + "' is not all, skip or only"};
      opt.peer = *scope;
    } else if (auto k = value_of("--gmb_skip_list")) {
      opt.skip_list = *k;
    } else if (arg == "--gmb_every_flavor") {
      opt.every_flavor = true;
    } else if (auto e = value_of("--gmb_pattern")) {
      opt.pattern.expressions.push_back(*e);
    } else if (arg.rfind("--gmb_pattern_", 0) == 0) {
      parse_pattern_flag(arg, value_of, opt);
    } else if (arg.rfind("--gmb_", 0) == 0) {
      throw fatal_error{"unknown flag '" + arg + "' (see --help)"};
    } else {
      if (arg == "--help" || arg == "-h") print_usage();
      if (arg.rfind("--benchmark_min_time", 0) == 0) opt.user_min_time = true;
      if (arg.rfind("--benchmark_out=", 0) == 0) {
        opt.out = arg.substr(16);
        continue;  // the file is run_registered's (below)
      }
      if (arg.rfind("--benchmark_out_format=", 0) == 0) opt.out_format = arg.substr(23);
      rest.push_back(argv[i]);
    }
  }
  if (!opt.pattern_flags.empty() && opt.pattern.expressions.empty()) {
    throw fatal_error{opt.pattern_flags.front() + " needs --gmb_pattern=EXPR"};
  }
  // A pattern alone, with the device-to-device copy beside it, unless the user filters.
  if (!opt.pattern.expressions.empty() && opt.filter.empty()) {
    opt.filter = "^(pattern/|ref/memcpy_d2d$)";
  }
  if (!opt.user_min_time) rest.insert(rest.begin() + 1, const_cast<char*>(kDefaultMinTimeFlag));
  // gmembench filters at registration; Google Benchmark must run what was registered, even
  // with BENCHMARK_FILTER set.
  static char run_all[] = "--benchmark_filter=.";
  rest.push_back(run_all);
  // Google Benchmark opens --benchmark_out itself (and truncates it); gmembench writes the file
  // through an output_file, so the library's copy goes nowhere. It still needs the flag to
  // take a file reporter, and refuses an unknown --benchmark_out_format itself.
  // Always given, so BENCHMARK_OUT in the environment never opens a file of the library's own.
  static char nowhere[] = "--benchmark_out=/dev/null";
  static char no_file[] = "--benchmark_out=";
  rest.push_back(opt.out.empty() ? no_file : nowhere);
  return opt;
}

/// The names of --gmb_skip_list=FILE, one per line, with or without "/manual_time".
std::set<std::string> read_skip_list(const std::string& path) {
  std::set<std::string> names;
  if (path.empty()) return names;
  std::ifstream in(path);
  if (!in) throw fatal_error{"--gmb_skip_list: cannot read '" + path + "'"};
  const std::string suffix = gmb::kTimeSuffix;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.size() > suffix.size() &&
        line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0) {
      line.resize(line.size() - suffix.size());
    }
    if (!line.empty()) names.insert(line);
  }
  return names;
}

/// The exit status of a run whose output file could not be written (sysexits' EX_IOERR).
constexpr int kWriteFaultStatus = 74;

/// Runs what was registered; a stop (signal, write fault) leaves the output file closed and
/// holding every finished benchmark. Returns the exit status: 0, 128 + the signal's number, or
/// kWriteFaultStatus.
int run_registered(const options& opt, int registered) {
  std::string write_fault;
  auto on_fault = [&write_fault](const std::string& why) {
    write_fault = why;
    gmb::request_stop();
  };
  gmb::kept_reporter display(benchmark::CreateDefaultDisplayReporter(), gmb::skipped_by_stop);
  std::unique_ptr<gmb::output_file> out;
  std::unique_ptr<gmb::kept_reporter> file;
  if (!opt.out.empty()) {
    if (auto inner = gmb::file_reporter_for(opt.out_format)) {
      try {
        out = std::make_unique<gmb::output_file>(opt.out);
      } catch (const std::runtime_error& e) {
        std::fprintf(stderr, "gmembench: error: %s\n", e.what());
        return kWriteFaultStatus;
      }
      file = std::make_unique<gmb::kept_reporter>(std::move(inner), gmb::skipped_by_stop, on_fault,
                                                  out.get());
    }
  }
  if (file) {
    benchmark::RunSpecifiedBenchmarks(&display, file.get());
  } else {
    benchmark::RunSpecifiedBenchmarks(&display);
  }
  const int sig = gmb::stop_signal();
  const int kept = file ? file->kept() : display.kept();
  const std::string last = file ? file->last() : display.last();
  const std::string after = " after " + std::to_string(kept) + " of " +
                            std::to_string(registered) + " benchmarks" +
                            (last.empty() ? "" : " (last finished: " + last + ")");
  std::string what;
  if (!write_fault.empty()) {
    what = "write fault (" + write_fault + ")" + after;
  } else if (sig != 0) {
    what = gmb::signal_name(sig) + after;
  }
  const std::string unclosed = file ? file->close_file(what) : "";
  if (!write_fault.empty()) {  // its own status, so gmb run stops instead of trying the next
    std::fprintf(stderr,
                 "gmembench: error: cannot write '%s' (%s): stopped after %d of %d benchmarks; "
                 "%s\n",
                 opt.out.c_str(), write_fault.c_str(), kept, registered,
                 unclosed.empty() ? "the file is closed after them (gmb_interrupted says so)"
                 : kept == 0     ? unclosed.c_str()
                                 : (unclosed + "; it ends after its last whole benchmark, "
                                               "which gmb run and --resume read").c_str());
    return kWriteFaultStatus;
  }
  if (!unclosed.empty()) {
    std::fprintf(stderr, "gmembench: error: '%s': %s\n", opt.out.c_str(), unclosed.c_str());
    return kWriteFaultStatus;
  }
  if (sig == 0) return 0;
  std::fprintf(stderr, "gmembench: interrupted by %s%s\n", what.c_str(),
               opt.out.empty() ? "" : ("; the finished ones are in " + opt.out).c_str());
  return 128 + sig;
}

/// Fails with a clear message when there is no usable GPU or the binary has no code for it.
gmb::device_info open_device(int ordinal) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    throw fatal_error{std::string("no CUDA device found (cudaGetDeviceCount: ") +
                      cudaGetErrorString(status) + ")"};
  }
  if (ordinal >= count) {
    throw fatal_error{"--device=" + std::to_string(ordinal) + ": this machine has " +
                      std::to_string(count) + " CUDA device(s), numbered from 0"};
  }
  GMB_CUDA_CHECK(cudaSetDevice(ordinal));
  const gmb::device_info device = gmb::query_device(ordinal);
  cudaFuncAttributes attributes{};
  const cudaError_t probe =
      cudaFuncGetAttributes(&attributes, gmb::detail::fill_words_kernel<gmb::word_pattern>);
  if (probe != cudaSuccess) {
    throw fatal_error{
        "this binary has GPU code for compute capability " + std::string(kBuiltArchitectures) +
        " (x100) only, but GPU " + std::to_string(ordinal) + " (" + device.name + ") is " +
        device.compute_capability() +
        ": rebuild with the 'release' preset (this GPU) or 'all' (every GPU since Turing) [" +
        cudaGetErrorString(probe) + "]"};
  }
  return device;
}

void check_free_memory(const gmb::device_info& device, std::size_t array_bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  GMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t needed = gmb::environment::required_bytes(device, array_bytes);
  if (needed > free_bytes) {
    throw fatal_error{"the working set needs " + std::to_string(needed / gmb::kMiB) +
                      " MiB (3 arrays of " + std::to_string(array_bytes / gmb::kMiB) +
                      " MiB with the index table, + the L2 flush buffer and a 256-MiB probe) but"
                      " GPU " +
                      std::to_string(device.ordinal) + " has " +
                      std::to_string(free_bytes / gmb::kMiB) +
                      " MiB free: pass a smaller --gmb_bytes"};
  }
}

std::vector<std::pair<std::string, std::string>> run_context(const gmb::device_info& device,
                                                             std::size_t array_bytes, int launches,
                                                             const options& opt) {
  auto entries = gmb::context_entries(device);
  entries.insert(entries.begin(), {"gmb_flavor", GMB_FLAVOR});
  entries.emplace_back("gmb_array_bytes", std::to_string(array_bytes));
  entries.emplace_back("gmb_launches_per_iteration", std::to_string(launches));
  entries.emplace_back("gmb_sweep", opt.screen                       ? "screen"
                                    : opt.sweep == gmb::sweep::kFull ? "full"
                                                                     : "quick");
  entries.emplace_back("gmb_profile", opt.profile ? "1" : "0");
  entries.emplace_back("gmb_built_for", kBuiltArchitectures);
  entries.emplace_back("model_dram_granule_bytes", std::to_string(gmb::kDramChunkBytes));
  entries.emplace_back("git_sha", GMB_GIT_SHA);
  // Named as the flags: gmb_peer is --gmb_peer's scope, gmb_peer_partner the partner's index
  // (--gmb_peer_partner's, or the default's). Files before that: data/context_keys.py.
  const gmb::peer_partner peer = gmb::describe_peer(device.ordinal);
  entries.emplace_back("gmb_peer", gmb::describe(opt.peer));
  entries.emplace_back("gmb_peer_partner", peer.device >= 0 ? std::to_string(peer.device)
                                                            : "none (" + peer.reason + ")");
  entries.emplace_back("gmb_peer_partner_source", opt.peer_partner >= 0
                                                      ? "--gmb_peer_partner"
                                                      : "default: (device + 1) mod count");
  // peer/copy/.../dir:both is each GPU pushing (dir:both_pull each pulling); files without
  // this key named the pulls dir:both and the pushes dir:both_push (data/context_keys.py)
  entries.emplace_back("gmb_peer_both", "push");
  if (opt.info)
    entries.emplace_back("gpu_nvlinks_nvml", gmb::read_nvlinks(device.ordinal).describe());
  if (peer.device >= 0) {  // the link's rate (NVML), the pct_peak of peer/ and ref/memcpy_peer
    for (auto& entry :
         gmb::peer_link_context(gmb::query_peer_link(device.ordinal, {peer.device}))) {
      entries.push_back(std::move(entry));
    }
    // what the driver says of the pair (cudaDeviceGetP2PAttribute)
    for (const auto& [key, attribute] :
         {std::pair{"gmb_peer_performance_rank", cudaDevP2PAttrPerformanceRank},
          std::pair{"gmb_peer_native_atomics", cudaDevP2PAttrNativeAtomicSupported}}) {
      int value = 0;
      GMB_CUDA_CHECK(cudaDeviceGetP2PAttribute(&value, attribute, device.ordinal, peer.device));
      entries.emplace_back(key, std::to_string(value));
    }
  }
  // The other paths to memory: whether host/ and managed/ run here (or why not), and the
  // host link whose rate is host/'s peak.
  entries.emplace_back("gmb_host_mapped", gmb::host_mapped_support(device.ordinal));
  entries.emplace_back("gmb_managed", gmb::managed_support(device.ordinal));
  for (auto& entry : gmb::host_link_context(gmb::host_link(device.ordinal))) {
    entries.push_back(std::move(entry));
  }
  return entries;
}

/// Starts the NVML watch of the GPU, or says in one line why there is none.
std::unique_ptr<gmb::health::monitor> watch_health(const options& opt, std::string* why_not) {
  if (!opt.health) {
    *why_not = "off (--gmb_health=off)";
    return nullptr;
  }
  return gmb::health::monitor::start(opt.device, why_not);
}

/// The health keys of the context: NVML's state at the start, or why there is none.
void add_health_context(std::vector<std::pair<std::string, std::string>>& context,
                        const gmb::health::monitor* monitor, const std::string& why_not) {
  context.emplace_back("health_nvml", monitor ? "on" : why_not);
  if (!monitor) return;
  const auto& start = monitor->at_start();
  context.emplace_back("nvidia_driver", start.nvidia_driver);
  context.emplace_back("gpu_uuid", start.uuid);
  for (auto& entry : start.entries("health_start_")) context.push_back(std::move(entry));
}

/// --gmb_health_out: the state at the start and the end, and every benchmark that ran under a
/// health flag, for `gmb run`'s run_info.json.
void write_health(const std::string& path, const gmb::environment& env,
                  const gmb::health::monitor* monitor, const std::string& why_not,
                  const gmb::health::snapshot* end) {
  nlohmann::json doc;
  doc["nvml"] = monitor ? "on" : why_not;
  auto object = [](const std::vector<std::pair<std::string, std::string>>& entries) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [key, value] : entries) o[key] = value;
    return o;
  };
  if (monitor) {
    doc["start"] = object(monitor->at_start().entries(""));
    doc["end"] = object(end->entries(""));
  }
  doc["flagged"] = nlohmann::json::object();
  for (const auto& [name, flags] : env.flagged()) {
    doc["flagged"][name] = {{"flags", flags}, {"why", gmb::health::describe(flags)}};
  }
  try {
    gmb::write_whole_file(path, doc.dump(2) + "\n");
  } catch (const std::runtime_error& e) {
    throw fatal_error{std::string("--gmb_health_out: ") + e.what()};
  }
}

int run(int argc, char** argv) {
  gmb::catch_stop_signals();  // from the start: a stop while the GPU is set up still closes a file
  std::vector<char*> rest;
  options opt = parse_own_flags(argc, argv, rest);
  int gb_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&gb_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, rest.data())) return 1;
  gmb::name_filter filter;
  try {
    filter = gmb::name_filter(opt.filter);
  } catch (const std::invalid_argument& e) {
    throw fatal_error{std::string("--benchmark_filter: ") + e.what()};
  }

  const std::set<std::string> skip = read_skip_list(opt.skip_list);
  const gmb::device_info device = open_device(opt.device);
  gmb::set_peer_options({opt.peer_partner, opt.peer == gmb::peer_scope::kSkip});
  opt.pattern.dlcm = GMB_DLCM;  // this build's, for the kernels NVRTC compiles
  gmb::set_pattern_options(opt.pattern);
  if (opt.peer_partner >= 0) {
    if (const gmb::peer_partner p = gmb::describe_peer(device.ordinal); p.device < 0) {
      throw fatal_error{"--gmb_peer_partner=" + std::to_string(opt.peer_partner) + ": " + p.reason};
    }
  }
  const std::size_t array_bytes =
      opt.array_bytes.value_or(gmb::default_array_bytes(device.l2_bytes));
  const int launches =
      opt.launches > 0 ? opt.launches : gmb::launches_per_iteration(array_bytes, device.l2_bytes);
  auto context = run_context(device, array_bytes, launches, opt);
  std::string no_health;
  auto monitor = watch_health(opt, &no_health);
  add_health_context(context, monitor.get(), no_health);
  if (opt.info) {
    nlohmann::json info;
    for (const auto& [key, value] : context) info[key] = value;
    std::cout << info.dump(2) << std::endl;
    return gmb::stop_signal() != 0 ? 128 + gmb::stop_signal() : 0;
  }
  check_free_memory(device, array_bytes);

  gmb::environment env(opt.device, array_bytes, launches);
  for (const auto& [key, value] : context) benchmark::AddCustomContext(key, value);
  gmb::registration_options registration;
  registration.profile = opt.profile;
  int registered = 0, default_flavor_only = 0, listed = 0;
  std::map<std::string, int> unsupported;  // why -> benchmarks this GPU cannot run
  for (auto& c : gmb::all_cases(env, opt.sweep)) {
    if (!filter.selects(c.name) || (opt.screen && !gmb::in_screen(c.name)) ||
        !gmb::in_peer_scope(opt.peer, c.name)) {
      continue;
    }
    if (skip.count(c.name) != 0) {
      ++listed;
      continue;
    }
    const std::string why = gmb::unsupported_reason(c.needs, device.cc_major, device.cc_minor);
    if (!why.empty()) {
      ++unsupported[why];
      continue;
    }
    if (kCachingBuild && !c.every_flavor && !opt.every_flavor) {
      ++default_flavor_only;
      continue;
    }
    gmb::register_case(env, std::move(c), registration);
    ++registered;
  }
  benchmark::AddCustomContext("gmb_default_flavor_only", std::to_string(default_flavor_only));
  benchmark::AddCustomContext("gmb_benchmarks", std::to_string(registered));
  if (!opt.skip_list.empty()) benchmark::AddCustomContext("gmb_skip_list", std::to_string(listed));
  std::string skipped;  // "4: cp.async (LDGSTS) needs sm_80, this GPU is sm_75; ..."
  int skipped_count = 0;
  for (const auto& [why, count] : unsupported) {
    skipped += (skipped.empty() ? "" : "; ") + std::to_string(count) + ": " + why;
    skipped_count += count;
  }
  benchmark::AddCustomContext("gmb_unsupported", skipped.empty() ? "0" : skipped);
  if (registered == 0 && skipped_count > 0) {
    throw fatal_error{"the filter '" + opt.filter +
                      "' matched only benchmarks this GPU cannot run (" + skipped + ")"};
  }
  if (skipped_count > 0) {
    env.console().message("gmembench: note: " + std::to_string(skipped_count) +
                          " benchmarks skipped, this GPU lacks what they need (" + skipped + ")");
  }
  if (registered == 0 && default_flavor_only > 0) {
    throw fatal_error{"the filter '" + opt.filter +
                      "' matched only benchmarks that compile alike"
                      " in every build and run in the default flavor: use gmembench, or pass"
                      " --gmb_every_flavor"};
  }
  if (registered == 0 && opt.peer == gmb::peer_scope::kOnly) {
    const gmb::peer_partner p = gmb::describe_peer(device.ordinal);
    throw fatal_error{"--gmb_peer=only: no benchmark that touches another GPU" +
                      (p.device < 0 ? " (no partner: " + p.reason + ")"
                                    : " matched the filter '" + opt.filter + "'")};
  }
  if (registered == 0 && listed > 0) {
    throw fatal_error{"--gmb_skip_list: every benchmark the filter '" + opt.filter +
                      "' selects is listed in '" + opt.skip_list + "': nothing left to run"};
  }
  if (registered == 0) throw fatal_error{"no benchmark matched the filter '" + opt.filter + "'"};
  if (default_flavor_only > 0) {
    env.console().message("gmembench: note: " + std::to_string(default_flavor_only) +
                          " benchmarks compile alike in every build and run in the default"
                          " flavor only (--gmb_every_flavor runs them here too)");
  }
  if (!monitor && opt.health) {
    env.console().message("gmembench: note: no run-health watch: " + no_health);
  }
  env.watch_health(std::move(monitor));
  if (opt.progress_label) env.console().enable_progress(*opt.progress_label, registered);

  int status = run_registered(opt, registered);
  gmb::default_stop_signals();
  benchmark::Shutdown();
  env.console().finish();
  env.release_held();
  if (!opt.health_out.empty()) {
    const auto end = env.health() ? std::optional(env.health()->read_snapshot()) : std::nullopt;
    try {
      write_health(opt.health_out, env, env.health(), no_health, end ? &*end : nullptr);
    } catch (const fatal_error& e) {  // the measurements are kept: a fault of its own status
      std::fprintf(stderr, "gmembench: error: %s\n", e.message.c_str());
      if (status == 0) status = kWriteFaultStatus;
    }
  }
  if (!env.flagged().empty()) {
    unsigned all = 0;
    for (const auto& entry : env.flagged()) all |= entry.second;
    std::fprintf(stderr,
                 "gmembench: warning: %zu of %d benchmarks ran under: %s (health_flags in the "
                 "JSON)\n",
                 env.flagged().size(), registered, gmb::health::describe(all).c_str());
  }
  if (status != 0) return status;
  if (gmb::failed_benchmarks() > 0) {
    throw fatal_error{std::to_string(gmb::failed_benchmarks()) +
                      " benchmark(s) failed (wrong result or CUDA error; see the output above" +
                      std::string(opt.progress_label ? ", or the run's <flavor>.log" : "") + ")"};
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const fatal_error& e) {
    std::fprintf(stderr, "gmembench: error: %s\n", e.message.c_str());
  } catch (const gmb::cuda_error& e) {
    std::fprintf(stderr, "gmembench: error: CUDA: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gmembench: error: %s\n", e.what());
  }
  return 1;
}
