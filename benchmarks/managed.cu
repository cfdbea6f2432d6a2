// Managed family (kernels/managed.cuh): a checking read of a cudaMallocManaged array (f32x4,
// four per thread, full grid: read/f32x4/ilp:4's access) with its pages where each case puts
// them. managed/read/touch:gpu: first touched by a GPU kernel and left there (the steady state:
// device memory, the environment's array size). Pages sent to the host before every
// iteration (untimed), then timed: managed/read/prefetch:gpu (cudaMemPrefetchAsync back to
// the GPU, then the read), managed/read/pages:host (the read migrates them on demand),
// managed/read/advice:read_mostly (read-mostly advice: the read duplicates them on demand);
// those move 64 MiB (at most the array) over the link per iteration, whose rate is their peak.
// Full sweep: managed/write/touch:first (a write of a fresh allocation: the first touch
// itself). The model's calibration: model/managed/read/<placement>/bytes:B, each migration at
// half and twice the family's size. Bytes: read n*sizeof(T), write n*sizeof(T). Managed arrays
// never exceed a quarter of the GPU's free memory (host_link.hpp: larger requests fail with a
// one-line error).
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "gmb/host_link.hpp"
#include "gmb/naming.hpp"
#include "kernels/managed.cuh"

namespace gmb {

namespace {

using T = float4;
constexpr unsigned kIlp = 4;
constexpr std::size_t kTileBytes = sizeof(T) * kCoalescedBlock * kIlp;

enum class placement { kTouchGpu, kPrefetchGpu, kReadMostly, kPagesHost };

/// Where the pages are before each timed iteration, as the case's name says (key:value).
name_param param(placement p) {
  switch (p) {
    case placement::kTouchGpu:
      return {"touch", "gpu"};
    case placement::kPrefetchGpu:
      return {"prefetch", "gpu"};
    case placement::kReadMostly:
      return {"advice", "read_mostly"};
    case placement::kPagesHost:
      return {"pages", "host"};
  }
  return {"placement", "unknown"};
}

constexpr placement kMigrations[] = {placement::kPrefetchGpu, placement::kReadMostly,
                                     placement::kPagesHost};

/// The bytes each migrating case moves: the environment's array, at most 64 MiB.
std::size_t migration_bytes(environment& env) {
  return std::min(env.array_bytes(), kManagedMigrationBytes);
}

/// Waits for the stream, then sends every page of `a` to the host (untimed).
void pages_to_host(environment& e, const managed_buffer& a) {
  GMB_CUDA_CHECK(cudaStreamSynchronize(e.stream()));
  prefetch_managed(a.data(), a.bytes(), -1, e.stream());
  GMB_CUDA_CHECK(cudaStreamSynchronize(e.stream()));
}

/// managed/read/<placement>, or for the model's calibration model/managed/read/<placement>/bytes:B
/// (the same migration of another size).
bench_case read_case(environment& env, placement p, std::size_t bytes, double link_peak,
                     bool calibration = false) {
  const int device = env.device().ordinal;
  const std::size_t tiles = bytes / kTileBytes;
  const std::size_t reads = tiles * kCoalescedBlock * kIlp;
  auto array = std::make_shared<managed_buffer>();  // made in prepare, freed in release

  bench_case c;
  const auto moved = static_cast<long long>(tiles * kTileBytes);  // the bytes it reads
  c.name = calibration ? bench_name("model", "managed/read", {param(p), {"bytes", moved}})
                       : bench_name("managed", "read", {param(p)});
  c.every_flavor = false;
  c.prepare = [array, bytes, p, device](environment& e) {
    if (array->bytes() == 0) {
      *array = managed_buffer(bytes);  // refused above a quarter of the free memory
      // Pages made on the GPU in bulk (a prefetch of untouched pages populates them there:
      // faulting 8 GiB in would take seconds), then written there: never on the host.
      prefetch_managed(array->data(), bytes, device, e.stream());
      fill_words(array->data(), bytes, kInputPattern, e.stream());
      GMB_CUDA_CHECK(cudaStreamSynchronize(e.stream()));
      if (p == placement::kReadMostly) advise_read_mostly(array->data(), bytes, true, device);
    }
    e.reset_counter();
  };
  const checking_read_launch read = [array, tiles](environment& e, word_pattern expected) {
    built_once::managed_read<T, kIlp>
        <<<static_cast<unsigned>(tiles), kCoalescedBlock, 0, e.stream()>>>(
            array->data<const T>(), tiles, expected, e.counter());
  };
  if (p == placement::kPrefetchGpu) {
    c.launch = [array, read, device](environment& e) {
      prefetch_managed(array->data(), array->bytes(), device, e.stream());
      read(e, kInputPattern);
    };
  } else {
    c.launch = [read](environment& e) { read(e, kInputPattern); };
  }
  if (p == placement::kReadMostly) {
    // Unset collapses the read-only copies into one (anywhere), which then goes to the host;
    // set again, the timed read makes the GPU's copies on demand.
    c.before_iteration = [array, device](environment& e) {
      GMB_CUDA_CHECK(cudaStreamSynchronize(e.stream()));
      advise_read_mostly(array->data(), array->bytes(), false, device);
      pages_to_host(e, *array);
      advise_read_mostly(array->data(), array->bytes(), true, device);
    };
  } else if (p != placement::kTouchGpu) {
    c.before_iteration = [array](environment& e) { pages_to_host(e, *array); };
  }
  c.verify = [array, read, reads](environment& e) {
    return verify_checking_read(e, array->data<std::uint32_t>(),
                                array->bytes() / sizeof(std::uint32_t), kInputPattern, reads, read);
  };
  c.release = [array](environment&) { *array = managed_buffer(); };
  c.bytes_read = static_cast<double>(reads) * sizeof(T);
  // The coalesced read's traffic (device memory, once the pages are there): the model's count
  // of the bytes each iteration reads, which the migrating cases move over the link first.
  c.model = predict_traffic(coalesced_map<kCoalescedBlock, kIlp>{}, tiles * kCoalescedBlock,
                            sizeof(T), access_kind::kLoad);
  if (p != placement::kTouchGpu) {  // every page crosses the link each iteration
    c.launches_per_iteration = 1;
    c.peak_bytes_per_second = link_peak;
  }
  return c;
}

/// The first touch itself: each iteration writes a fresh allocation (made untimed), whose
/// pages the GPU's faults create as the kernel writes.
bench_case first_touch_case(std::size_t bytes) {
  const std::size_t tiles = bytes / kTileBytes;
  auto array = std::make_shared<managed_buffer>();
  bench_case c;
  c.name = bench_name("managed", "write", {{"touch", "first"}});
  c.every_flavor = false;
  c.launches_per_iteration = 1;
  c.prepare = [array, bytes](environment& e) {
    if (array->bytes() == 0) *array = managed_buffer(bytes);
    GMB_CUDA_CHECK(cudaMemsetAsync(array->data(), kPoisonByte, bytes, e.stream()));
  };
  c.before_iteration = [array, bytes](environment& e) {
    GMB_CUDA_CHECK(cudaStreamSynchronize(e.stream()));
    *array = managed_buffer();  // free first: the new one must fit beside nothing of ours
    *array = managed_buffer(bytes);
  };
  c.launch = [array, tiles](environment& e) {
    built_once::managed_write<T, kIlp>
        <<<static_cast<unsigned>(tiles), kCoalescedBlock, 0, e.stream()>>>(array->data<T>(), tiles,
                                                                           kWritePattern);
  };
  c.verify = [array](environment& e) -> std::string {
    const std::size_t vectors = array->bytes() / sizeof(uint4);
    const mismatch_report report = run_check(e.stream(), [&](mismatch_report* r) {
      detail::count_mismatches_kernel<<<detail::utility_grid(vectors), detail::kUtilityBlock, 0,
                                        e.stream()>>>(array->data<const uint4>(), vectors,
                                                      kWritePattern, r);
      GMB_CUDA_CHECK(cudaGetLastError());
    });
    if (report.count == 0) return "";
    return "managed array: word " + std::to_string(report.first) + " is wrong (" +
           std::to_string(report.count) + " of " + std::to_string(vectors * 4) + " words)";
  };
  c.release = [array](environment&) { *array = managed_buffer(); };
  c.bytes_written = static_cast<double>(bytes);
  return c;
}

}  // namespace

std::vector<bench_case> managed_cases(environment& env, sweep s) {
  const int device = env.device().ordinal;
  if (managed_support(device) != "yes") return {};  // the context says why
  const std::size_t resident = env.array_bytes();   // comparable with read/f32x4/ilp:4
  const std::size_t moving = migration_bytes(env);
  const double link_peak = host_link(device).bytes_per_second();
  std::vector<bench_case> cases;
  cases.push_back(read_case(env, placement::kTouchGpu, resident, link_peak));
  for (placement p : kMigrations) cases.push_back(read_case(env, p, moving, link_peak));
  if (s == sweep::kFull) cases.push_back(first_touch_case(moving));
  return cases;
}

std::vector<bench_case> managed_calibration_cases(environment& env) {
  // Each migration at half and twice the family's size: its fixed part and its part per byte.
  const int device = env.device().ordinal;
  if (managed_support(device) != "yes") return {};
  const double link_peak = host_link(device).bytes_per_second();
  std::vector<bench_case> cases;
  for (placement p : kMigrations) {
    for (std::size_t bytes : {migration_bytes(env) / 2, migration_bytes(env) * 2}) {
      cases.push_back(read_case(env, p, bytes, link_peak, true));
    }
  }
  return cases;
}

}  // namespace gmb
