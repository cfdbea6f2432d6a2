#pragma once
// The PTX of bulk copies (TMA, Hopper and newer), one copy for every kernel that uses them
// (kernels/bulk.cuh: 1-D copies; kernels/transpose_tma.cuh: 2-D tiles through tensor maps):
// mbarriers that count a copy's bytes as transactions, the copies both ways, their groups and
// the proxy fence. Defined for sm_90 and newer only: callers guard their bodies the same way.
#include <cuda.h>

#include <cstdint>

namespace gmb::built_once {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

namespace bulk_ptx {

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void barrier_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count)
               : "memory");
}

/// Makes the initialized barriers visible to the async proxy (the copy unit).
__device__ __forceinline__ void barrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// Arrives on `bar` (its one expected arrival) and adds `bytes` to the transaction count the
/// phase waits for.
__device__ __forceinline__ void arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   shared_address(bar)),
               "r"(bytes)
               : "memory");
}

/// Waits until the phase of `bar` with parity `parity` has completed.
__device__ __forceinline__ void wait_parity(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n"
      "  .reg .pred done;\n"
      "  wait:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "  @!done bra wait;\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}

/// global -> shared, `bytes` (a multiple of 16), completed on `bar` as transaction bytes.
__device__ __forceinline__ void copy_to_shared(void* dst, const void* src, unsigned bytes,
                                               std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(shared_address(dst)),
      "l"(src), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}

/// shared -> global, `bytes` (a multiple of 16), in the thread's current bulk group.
__device__ __forceinline__ void copy_to_global(void* dst, const void* src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),
               "r"(shared_address(src)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// Waits until at most N of the thread's bulk groups are still reading their shared source.
template <int N>
__device__ __forceinline__ void wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/// Waits until every bulk group of the thread has completed (its writes done).
__device__ __forceinline__ void wait_all_groups() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

/// Orders this thread's generic-proxy writes to shared memory before later async-proxy reads.
__device__ __forceinline__ void fence_shared_for_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// global -> shared: the box of `map` at (x, y) (x the innermost coordinate), completed on
/// `bar` as transaction bytes (the whole box, edges outside the tensor included, filled).
__device__ __forceinline__ void copy_tile_to_shared(void* dst, const CUtensorMap* map, int x,
                                                    int y, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(shared_address(bar))
      : "memory");
}

/// shared -> global: `src` into the box of `map` at (x, y), in the thread's current bulk group
/// (elements outside the tensor are not written).
__device__ __forceinline__ void copy_tile_to_global(const CUtensorMap* map, int x, int y,
                                                    const void* src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::
                   "l"(reinterpret_cast<std::uint64_t>(map)),
               "r"(x), "r"(y), "r"(shared_address(src))
               : "memory");
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace bulk_ptx

#endif  // __CUDA_ARCH__ >= 900

}  // namespace gmb::built_once
