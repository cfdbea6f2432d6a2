#pragma once
// Every benchmark family's cases; main registers them, the device tests run them.
#include <string>
#include <vector>

#include "benchmarks/harness/harness.cuh"

namespace gmb {

std::vector<bench_case> reference_cases(environment& env, sweep s);
std::vector<bench_case> coalesced_cases(environment& env, sweep s);
std::vector<bench_case> vector_cases(environment& env, sweep s);
std::vector<bench_case> offset_cases(environment& env, sweep s);
std::vector<bench_case> stride_cases(environment& env, sweep s);
std::vector<bench_case> aos_cases(environment& env, sweep s);
std::vector<bench_case> warp_cases(environment& env, sweep s);
std::vector<bench_case> matrix_cases(environment& env, sweep s);
std::vector<bench_case> reuse_cases(environment& env, sweep s);
std::vector<bench_case> cache_op_cases(environment& env, sweep s);
std::vector<bench_case> working_set_cases(environment& env, sweep s);
std::vector<bench_case> latency_cases(environment& env, sweep s);
// The prediction model's calibration (benchmarks/model_probes.cu), registered first, and its
// probes, each made by the family whose kernel it runs.
std::vector<bench_case> model_cases(environment& env, sweep s);
std::vector<bench_case> chase_calibration_cases(environment& env);
std::vector<bench_case> l2_partition_calibration_cases(environment& env);
std::vector<bench_case> working_set_calibration_cases(environment& env);
std::vector<bench_case> constant_calibration_cases(environment& env);
std::vector<bench_case> bulk_calibration_cases(environment& env);
std::vector<bench_case> reduce_calibration_cases(environment& env);
std::vector<bench_case> loaded_calibration_cases(environment& env);
std::vector<bench_case> stride_calibration_cases(environment& env);
std::vector<bench_case> instruction_calibration_cases(environment& env);
std::vector<bench_case> offset_calibration_cases(environment& env);
std::vector<bench_case> mix_calibration_cases(environment& env);
std::vector<bench_case> inflight_calibration_cases(environment& env);
std::vector<bench_case> matrix_calibration_cases(environment& env);
std::vector<bench_case> copy_depth_calibration_cases(environment& env);
std::vector<bench_case> transpose_calibration_cases(environment& env);
std::vector<bench_case> managed_calibration_cases(environment& env);
std::vector<bench_case> local_calibration_cases(environment& env);
std::vector<bench_case> translation_calibration_cases(environment& env);
std::vector<bench_case> inflight_cases(environment& env, sweep s);
// Bulk copies (TMA, sm_90 on): built once, like the other paths (no LDG or STG to change).
std::vector<bench_case> bulk_cases(environment& env, sweep s);
std::vector<bench_case> tlb_cases(environment& env, sweep s);
std::vector<bench_case> transpose_cases(environment& env, sweep s);
std::vector<bench_case> reduce_cases(environment& env, sweep s);
std::vector<bench_case> peer_cases(environment& env, sweep s);
std::vector<bench_case> readonly_cases(environment& env, sweep s);
// The user's own index expressions (none unless --gmb_pattern): compiled at run time.
std::vector<bench_case> pattern_cases(environment& env, sweep s);
// The other paths to memory; their kernels compile alike in every build (built once).
std::vector<bench_case> texture_cases(environment& env, sweep s);
std::vector<bench_case> constant_cases(environment& env, sweep s);
std::vector<bench_case> local_cases(environment& env, sweep s);
std::vector<bench_case> host_cases(environment& env, sweep s);
std::vector<bench_case> managed_cases(environment& env, sweep s);

/// The GPU the peer family pairs `device` with, or -1 and why there is none.
struct peer_partner {
  int device;
  std::string reason;
};
peer_partner describe_peer(int device);

/// How the peer family runs, for the process (main's --gmb_peer_partner and --gmb_peer=skip):
/// the partner (-1: (device + 1) mod count), and whether the family is skipped (then it makes
/// no case and touches no other GPU: no context there, no peer access).
struct peer_options {
  int partner = -1;
  bool skip = false;
};
void set_peer_options(const peer_options& options);

/// The user's patterns (main's --gmb_pattern=EXPR and --gmb_pattern_*): benchmarks/pattern.cu
/// checks the values, compiles each expression and stops at the first bad one.
struct pattern_options {
  std::vector<std::string> expressions;
  std::string op = "read";   // read write copy gather scatter
  std::string word = "f32";  // f32 f64 f32x2 f32x4 sN
  unsigned k = 1;            // elements per thread
  unsigned block = 256;
  std::size_t n = 0;        // elements; 0: from bytes, else the environment's array
  std::size_t bytes = 0;    // the array in bytes (a whole number of words)
  std::size_t threads = 0;  // 0: n / k
  std::string dlcm;         // the build's -Xptxas -dlcm value ("": nvcc's default loads)
};
void set_pattern_options(const pattern_options& options);

/// All families, in the order they are registered.
inline std::vector<bench_case> all_cases(environment& env, sweep s = sweep::kQuick) {
  std::vector<bench_case> cases;
  for (auto family :
       {reference_cases, model_cases,       coalesced_cases, vector_cases,    offset_cases,
        stride_cases,    aos_cases,         warp_cases,      matrix_cases,    reuse_cases,
        cache_op_cases,  working_set_cases, latency_cases,   tlb_cases,       inflight_cases,
        bulk_cases,      transpose_cases,   reduce_cases,    peer_cases,      readonly_cases,
        texture_cases,   constant_cases,    local_cases,     host_cases,      managed_cases,
        pattern_cases}) {
    for (auto& c : family(env, s)) cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace gmb
