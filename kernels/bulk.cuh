#pragma once
// Bulk copies (TMA, cp.async.bulk; Hopper and newer): global memory moved into and out of
// shared memory by the SM's copy unit, one thread starting each copy, no registers holding the
// bytes. The array is cut into chunks of `chunk_bytes` (a multiple of 16, 16-B aligned); block
// b of a grid of G handles chunks b, b + G, b + 2G, ... through a pipeline of `stages` shared
// buffers, so at most `stages` copies of one block are in flight (bytes in flight per SM:
// chunk_bytes x stages x blocks per SM). Thread 0 of a block issues every copy; the block's
// threads use the data (check it, or write the pattern into a buffer).
// - bulk_read: global -> shared, each copy completed on its stage's mbarrier
//   (cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes, mbarrier.try_wait.parity);
//   the block's warps (one or more) check every word against the input pattern and count the
//   wrong ones, then thread 0 refills the stage. On an H100 one warp checking is what holds a
//   block below a plain read: the copies overlap (docs/bulk.md), one warp's shared-memory loads
//   do not keep up with them.
// - bulk_write and bulk_copy: blocks of one warp.
// - bulk_write: the warp writes the output pattern of the chunk into a stage's buffer, lane 0
//   sends it shared -> global (cp.async.bulk.global.shared::cta.bulk_group, commit_group) and
//   waits for a buffer's reads (wait_group.read) before it is written again.
// - bulk_copy: global -> shared -> global through the same stages, no thread touching the data.
// - bulk_latency: one warp, one copy at a time: lane 0 counts the SM cycles from the copy's
//   start to its mbarrier's completion; the warp checks the words between copies (untimed).
// Dynamic shared memory: bulk_smem_bytes (gmb/bulk.hpp), the buffers, then the barriers.
// Bytes: read chunks x chunk_bytes; write the same; copy twice that.
// Every kernel compiles for every architecture: below sm_90 the bodies trap (the host never
// launches them there: gpu_feature::kBulkCopy, gmb/arch_facts.hpp). No global load or store of
// these kernels is an LDG/STG, so -dlcm cannot change them: built once (gmb::built_once).
#include <cstddef>
#include <cstdint>

#include "gmb/bulk.hpp"
#include "gmb/bulk_ptx.cuh"
#include "gmb/words.cuh"

namespace gmb::built_once {

/// In-kernel time of every bulk_latency launch since it was zeroed: SM cycles from each copy's
/// start to its completion (summed), the copies, and the whole loop's cycles and %globaltimer
/// ns (the clock the run had: cycles per ns).
struct bulk_latency_record {
  unsigned long long copy_cycles;
  unsigned long long copies;
  unsigned long long loop_cycles;
  unsigned long long loop_ns;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

/// The stage buffers and their barriers in dynamic shared memory (bulk_smem_bytes).
struct bulk_stages {
  unsigned char* buffers;
  std::uint64_t* bars;
  std::size_t chunk_bytes;
  __device__ unsigned char* buffer(unsigned s) const { return buffers + s * chunk_bytes; }
};

__device__ __forceinline__ bulk_stages bulk_stages_of(unsigned char* smem, std::size_t chunk_bytes,
                                                      unsigned stages, bool with_barriers) {
  bulk_stages st{smem, reinterpret_cast<std::uint64_t*>(smem + chunk_bytes * stages),
                 chunk_bytes};
  if (with_barriers && threadIdx.x == 0) {
    for (unsigned s = 0; s < stages; ++s) bulk_ptx::barrier_init(st.bars + s, 1);
    bulk_ptx::barrier_init_fence();
  }
  __syncwarp();
  return st;
}

/// Counts the words of `chunk` (word `first` of the array onward, a multiple of 4) that differ
/// from `expected`, the block's threads sharing them: each thread reads 16 B at a time, four
/// vectors in flight, and ORs the differences of all four (the words are counted one by one
/// only where one differs). On an H100 this check let one warp per SM read 2403 GB/s with 4
/// stages of 32 KiB, against 2196 with one vector at a time and every word counted (the same
/// run); more warps per block are what brings it to a plain read (docs/bulk.md).
__device__ __forceinline__ unsigned check_chunk(const unsigned char* chunk, unsigned chunk_bytes,
                                                std::size_t first, word_pattern expected) {
  constexpr unsigned kInFlight = 4;
  const uint4* v = reinterpret_cast<const uint4*>(chunk);
  const unsigned vectors = chunk_bytes / 16;
  const unsigned threads = blockDim.x;
  // Word first + 4i + j holds (first + 4i) ^ j ^ seed: first + 4i has its low two bits clear.
  const auto base = static_cast<std::uint32_t>(first);
  auto pattern = [&](unsigned i) { return (base + 4 * i) ^ expected.seed; };
  unsigned bad = 0;
  for (unsigned i = threadIdx.x; i < vectors; i += threads * kInFlight) {
    uint4 q[kInFlight];
    unsigned at[kInFlight];
#pragma unroll
    for (unsigned u = 0; u < kInFlight; ++u) {
      at[u] = min(i + threads * u, vectors - 1);  // past the end: the last vector again
      q[u] = v[at[u]];
    }
    std::uint32_t diff = 0;
#pragma unroll
    for (unsigned u = 0; u < kInFlight; ++u) {
      const std::uint32_t e = pattern(at[u]);
      diff |= (q[u].x ^ e) | (q[u].y ^ e ^ 1u) | (q[u].z ^ e ^ 2u) | (q[u].w ^ e ^ 3u);
    }
    if (diff == 0) continue;
#pragma unroll
    for (unsigned u = 0; u < kInFlight; ++u) {
      if (i + threads * u >= vectors) continue;
      const std::uint32_t e = pattern(at[u]);
      bad += (q[u].x != e) + (q[u].y != (e ^ 1u)) + (q[u].z != (e ^ 2u)) + (q[u].w != (e ^ 3u));
    }
  }
  return bad;
}

#endif  // __CUDA_ARCH__ >= 900

/// Reads `chunks` chunks of `in` into shared memory by bulk copies, `stages` in flight per
/// block; counts the words that differ from `expected` in `bad_words`. Thread 0 issues every
/// copy; the block's warps (blockDim.x / 32, up to kBulkMostWarps) check each chunk together
/// and meet at a barrier before its stage is filled again.
static __global__ void __launch_bounds__(32 * kBulkMostWarps)
    bulk_read(const std::uint32_t* in, std::size_t chunks, unsigned chunk_bytes, unsigned stages,
              word_pattern expected, unsigned long long* bad_words) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char bulk_smem[];
  const bulk_stages st = bulk_stages_of(bulk_smem, chunk_bytes, stages, true);
  __syncthreads();  // every warp sees the initialized barriers
  const std::size_t mine = chunks > blockIdx.x ? (chunks - blockIdx.x - 1) / gridDim.x + 1 : 0;
  const std::size_t words_per_chunk = chunk_bytes / 4;
  auto chunk_of = [&](std::size_t k) { return blockIdx.x + k * gridDim.x; };
  auto issue = [&](std::size_t k, unsigned s) {  // thread 0: the k-th chunk into stage s
    bulk_ptx::arrive_expect_tx(st.bars + s, chunk_bytes);
    bulk_ptx::copy_to_shared(st.buffer(s), in + chunk_of(k) * words_per_chunk, chunk_bytes,
                             st.bars + s);
  };
  if (threadIdx.x == 0) {
    for (unsigned k = 0; k < stages && k < mine; ++k) issue(k, k);
  }
  unsigned bad = 0;
  unsigned s = 0, parity = 0;  // the stage of chunk k and its barrier's phase parity
#pragma unroll 1
  for (std::size_t k = 0; k < mine; ++k) {
    bulk_ptx::wait_parity(st.bars + s, parity);
    bad += check_chunk(st.buffer(s), chunk_bytes, chunk_of(k) * words_per_chunk, expected);
    __syncthreads();  // every thread is done with the buffer before it is filled again
    if (threadIdx.x == 0 && k + stages < mine) issue(k + stages, s);
    if (++s == stages) {
      s = 0;
      parity ^= 1;
    }
  }
  if (bad != 0) add_bad(bad_words, bad);
#else
  __trap();
#endif
}

/// Writes `chunks` chunks of `out`: the warp fills a stage's buffer with the chunk's words of
/// `value`, lane 0 sends it by a bulk copy; at most `stages` copies in flight per block.
static __global__ void __launch_bounds__(32)
    bulk_write(std::uint32_t* out, std::size_t chunks, unsigned chunk_bytes, unsigned stages,
               word_pattern value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char bulk_smem[];
  const bulk_stages st = bulk_stages_of(bulk_smem, chunk_bytes, stages, false);
  const std::size_t mine = chunks > blockIdx.x ? (chunks - blockIdx.x - 1) / gridDim.x + 1 : 0;
  const std::size_t words_per_chunk = chunk_bytes / 4;
#pragma unroll 1
  for (std::size_t k = 0; k < mine; ++k) {
    const unsigned s = static_cast<unsigned>(k % stages);
    // Stage s was last sent `stages` copies ago: lane 0 waits until at most stages - 1 groups
    // are still reading their buffers (the oldest, this one, is done), then the warp refills.
    if (k >= stages && threadIdx.x == 0) {
      switch (stages) {  // wait_group.read takes an immediate
        case 1: bulk_ptx::wait_group_read<0>(); break;
        case 2: bulk_ptx::wait_group_read<1>(); break;
        case 3: bulk_ptx::wait_group_read<2>(); break;
        case 4: bulk_ptx::wait_group_read<3>(); break;
        case 5: bulk_ptx::wait_group_read<4>(); break;
        case 6: bulk_ptx::wait_group_read<5>(); break;
        case 7: bulk_ptx::wait_group_read<6>(); break;
        default: bulk_ptx::wait_group_read<7>(); break;
      }
    }
    __syncwarp();
    const std::size_t chunk = blockIdx.x + k * gridDim.x;
    const std::size_t first = chunk * words_per_chunk;
    uint4* v = reinterpret_cast<uint4*>(st.buffer(s));
    for (std::size_t i = threadIdx.x; i < chunk_bytes / 16; i += 32) {
      const std::size_t w = first + 4 * i;
      v[i] = make_uint4(value(w), value(w + 1), value(w + 2), value(w + 3));
    }
    bulk_ptx::fence_shared_for_async();  // each lane's writes, before the copy reads them
    __syncwarp();
    if (threadIdx.x == 0) {
      bulk_ptx::copy_to_global(out + first, st.buffer(s), chunk_bytes);
      bulk_ptx::commit_group();
    }
  }
  if (threadIdx.x == 0) bulk_ptx::wait_all_groups();  // the buffers live until the copies end
#else
  __trap();
#endif
}

/// out = in for `chunks` chunks: each goes global -> shared -> global by bulk copies through
/// `stages` buffers per block; no thread touches the data.
static __global__ void __launch_bounds__(32)
    bulk_copy(const std::uint32_t* in, std::uint32_t* out, std::size_t chunks, unsigned chunk_bytes,
              unsigned stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char bulk_smem[];
  const bulk_stages st = bulk_stages_of(bulk_smem, chunk_bytes, stages, true);
  if (threadIdx.x != 0) return;
  const std::size_t mine = chunks > blockIdx.x ? (chunks - blockIdx.x - 1) / gridDim.x + 1 : 0;
  const std::size_t words_per_chunk = chunk_bytes / 4;
  auto first_word = [&](std::size_t k) { return (blockIdx.x + k * gridDim.x) * words_per_chunk; };
  auto load = [&](std::size_t k) {
    const unsigned s = static_cast<unsigned>(k % stages);
    bulk_ptx::arrive_expect_tx(st.bars + s, chunk_bytes);
    bulk_ptx::copy_to_shared(st.buffer(s), in + first_word(k), chunk_bytes, st.bars + s);
  };
  for (std::size_t k = 0; k < stages && k < mine; ++k) load(k);
#pragma unroll 1
  for (std::size_t k = 0; k < mine; ++k) {
    const unsigned s = static_cast<unsigned>(k % stages);
    bulk_ptx::wait_parity(st.bars + s, static_cast<unsigned>((k / stages) & 1));
    bulk_ptx::copy_to_global(out + first_word(k), st.buffer(s), chunk_bytes);
    bulk_ptx::commit_group();
    // Refill the stage of the previous chunk once its store has read it (one store may still
    // be reading: this one). With one stage, this chunk's own store must be done first.
    if (stages == 1) {
      bulk_ptx::wait_group_read<0>();
      if (k + 1 < mine) load(k + 1);
    } else if (k >= 1) {
      bulk_ptx::wait_group_read<1>();
      if (k - 1 + stages < mine) load(k - 1 + stages);
    }
  }
  bulk_ptx::wait_all_groups();
#else
  __trap();
#endif
}

/// One warp, one copy of `chunk_bytes` at a time, `copies` consecutive chunks of `in` from
/// chunk `first_chunk` on: lane 0 records the cycles from each copy's start to the completion
/// of its mbarrier; then (untimed) the warp checks the chunk and counts wrong words. The times
/// are added to `record` (null: not recorded).
static __global__ void __launch_bounds__(32)
    bulk_latency(const std::uint32_t* in, std::size_t first_chunk, unsigned copies,
                 unsigned chunk_bytes, word_pattern expected, unsigned long long* bad_words,
                 bulk_latency_record* record) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char bulk_smem[];
  const bulk_stages st = bulk_stages_of(bulk_smem, chunk_bytes, 1, true);
  const std::size_t words_per_chunk = chunk_bytes / 4;
  unsigned long long copy_cycles = 0;
  unsigned bad = 0;
  const long long loop_c0 = clock64();
  const unsigned long long loop_t0 = bulk_ptx::global_ns();
#pragma unroll 1
  for (unsigned k = 0; k < copies; ++k) {
    const std::size_t first = (first_chunk + k) * words_per_chunk;
    if (threadIdx.x == 0) {
      const long long c0 = clock64();
      bulk_ptx::arrive_expect_tx(st.bars, chunk_bytes);
      bulk_ptx::copy_to_shared(st.buffer(0), in + first, chunk_bytes, st.bars);
      bulk_ptx::wait_parity(st.bars, k & 1);
      copy_cycles += static_cast<unsigned long long>(clock64() - c0);
    }
    __syncwarp();
    bulk_ptx::wait_parity(st.bars, k & 1);  // the other lanes see the completed phase too
    bad += check_chunk(st.buffer(0), chunk_bytes, first, expected);
    __syncwarp();
  }
  const long long loop_c1 = clock64();
  const unsigned long long loop_t1 = bulk_ptx::global_ns();
  if (bad != 0) add_bad(bad_words, bad);
  if (threadIdx.x == 0 && record != nullptr) {
    atomicAdd(&record->copy_cycles, copy_cycles);
    atomicAdd(&record->copies, static_cast<unsigned long long>(copies));
    atomicAdd(&record->loop_cycles, static_cast<unsigned long long>(loop_c1 - loop_c0));
    atomicAdd(&record->loop_ns, loop_t1 - loop_t0);
  }
#else
  __trap();
#endif
}

}  // namespace gmb::built_once
