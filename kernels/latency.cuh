#pragma once
// Latency: dependent loads (a pointer chase). The working set is 2^bits lines of kChaseLineBytes;
// the chain visits them in the order of a hash permutation (line perm(k) holds the address of
// line perm(k+1): a step is one load, no arithmetic between loads),
// one cycle through every line, so each load's address comes from the previous load and no
// coalescing, prefetch or nearby line helps. Each lane of the launching warp chases its own
// place on the cycle; a launch continues where the previous one stopped, so a timed window
// touches lines no earlier window touched until the whole cycle has been walked.
// Bytes: 8 per load (the address word), lanes * steps per launch; the result is the time per step.
#include <cstddef>
#include <cstdint>

#include "gmb/cache_op.cuh"
#include "gmb/chase.hpp"
#include "gmb/loaded_roles.hpp"
#include "gmb/sm_id.cuh"
#include "gmb/words.cuh"

namespace gmb {

/// In-kernel time of every timed launch since it was zeroed: SM cycles (clock64), nanoseconds
/// (%globaltimer) and launches. Summed, not the last launch's: under load one launch's latency
/// is one sample of a state that changes from launch to launch.
struct chase_record {
  unsigned long long cycles;
  unsigned long long ns;
  unsigned long long launches;
};

/// The address of line `line` of the chain at `lines`.
__device__ __forceinline__ std::uint64_t chase_address(const std::uint64_t* lines,
                                                       std::uint32_t line) {
  return reinterpret_cast<std::uint64_t>(lines) + std::uint64_t(line) * kChaseLineBytes;
}

/// Writes the chain: the line visited k-th holds the address of the line visited next, so a
/// step is one load whose value is the next load's address (no arithmetic between them).
// static: a kernel defined in a header that several files include.
static __global__ void build_chase(std::uint64_t* lines, hash_permutation perm, std::size_t n,
                                   std::uint32_t spacing) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n;
       k += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t line = chase_line(perm, n, k, spacing);
    lines[std::size_t(line) * (kChaseLineBytes / sizeof(std::uint64_t))] =
        chase_address(lines, chase_line(perm, n, k + 1, spacing));
  }
}

/// Puts every lane at its start: the address of line perm(chase_start(lane)).
static __global__ void reset_chase(const std::uint64_t* lines, std::uint64_t* position,
                                   hash_permutation perm, std::size_t n, std::uint32_t spacing) {
  position[threadIdx.x] =
      chase_address(lines, chase_line(perm, n, chase_start(threadIdx.x, blockDim.x, n), spacing));
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// The sum of a value over the full warp: one REDUX on sm_80 and newer, shuffles before.
__device__ __forceinline__ unsigned warp_sum(unsigned v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xFFFFFFFFu, v);
#else
  for (unsigned offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
#endif
}

/// `warm_steps` untimed, then `steps` timed dependent loads from the lane's position (an
/// address in the chain), which it leaves where the walk ended; `record` (one lane adds to it)
/// gains the timed steps' clocks. `lanes`: the lanes walking together (they wait for each other
/// around the timed steps).
template <cache_op Load>
__device__ __forceinline__ void walk(std::uint64_t* position, unsigned warm_steps, unsigned steps,
                                     chase_record* record, unsigned lanes) {
  auto p = reinterpret_cast<const std::uint64_t*>(*position);
  for (unsigned i = 0; i < warm_steps; ++i)
    p = reinterpret_cast<const std::uint64_t*>(load<Load>(p));
  __syncwarp(lanes);
  const long long c0 = clock64();
  const unsigned long long t0 = global_ns();
  for (unsigned i = 0; i < steps; ++i) p = reinterpret_cast<const std::uint64_t*>(load<Load>(p));
  __syncwarp(lanes);
  const long long c1 = clock64();
  const unsigned long long t1 = global_ns();
  *position = reinterpret_cast<std::uint64_t>(p);
  if (threadIdx.x == 0) {
    record->cycles += static_cast<unsigned long long>(c1 - c0);
    record->ns += t1 - t0;
    ++record->launches;
  }
}

/// One warp (or one thread): every lane walks from its own position. The L1 keeps no global
/// data from one launch to the next, so a set that fits it is walked once untimed (otherwise
/// the first pass, from the L2, is in the time). Plain loads (Load = kDefault) are what the
/// ca/cg builds change: there the L1 hit must vanish.
template <cache_op Load>
__global__ void chase(std::uint64_t* position, unsigned warm_steps, unsigned steps,
                      chase_record* record) {
  walk<Load>(position + threadIdx.x, warm_steps, steps, record, 0xFFFFFFFFu);
}

/// How long the loaded chase's blocks wait for the others at most.
inline constexpr unsigned long long kWaitLimitNs = 10000000ull;  // 10 ms

/// Marks present[%smid]: launched with one block per SM, it finds the ids the GPU's SMs have.
/// Each block stays until all have arrived (`arrived` counts them; at most 10 ms, so a GPU
/// shared with others cannot hang it): no SM takes a second block while another has none.
static __global__ void __launch_bounds__(1024, 1) mark_sm(unsigned* present, unsigned* arrived) {
  if (threadIdx.x != 0) return;
  const unsigned id = sm_id();
  if (id < kSmIdSlots) present[id] = 1u;
  atomicAdd(arrived, 1u);
  // Read atomically: no plain or volatile load, nothing the ca/cg builds would change.
  for (const unsigned long long t0 = global_ns();
       atomicAdd(arrived, 0u) < gridDim.x && global_ns() - t0 < kWaitLimitNs;) {
  }
}

/// What the loaded chase's blocks share. This launch's (zeroed before each): the streaming
/// blocks that started and stopped, the first start and the last stop (%globaltimer ns). Every
/// launch's since the case was prepared: the bytes streamed and the time spent streaming.
struct load_record {
  unsigned started;
  unsigned finished;
  unsigned long long first_ns_inverted;  // ~(first start): zero-initialized, kept by atomicMax
  unsigned long long last_ns;
  unsigned long long streamed_bytes;  // from here on: every launch's
  unsigned long long streamed_ns;
  unsigned long long launches;  // whose streaming time was added: every stream finished
};

/// Each streaming block's stop flag lies on a 128-B line of its own, so the flags' reads
/// spread over the L2 instead of queuing at one slice.
inline constexpr unsigned kStopFlagStride = 32;

/// What the loaded chase's streams do with what they read: nothing, write a share of it
/// (kMix), or all of it (kCopy).
enum class stream_load { kRead, kMix, kCopy };

/// Loaded latency: thread 0 of the block on the chase's SM chases while the blocks on the K
/// streaming SMs (`roles`, indexed by %smid: gmb/loaded_roles.hpp) stream coalesced reads of
/// `stream` (`Load`: kCopy writes what they read to `copy_to`, at the same place; kMix writes
/// the first of its Ilp words every second round: with Ilp = 2, one byte written per four read,
/// a fifth of the DRAM traffic) (tiles of
/// blockDim.x * Ilp elements of T, stream i taking every K-th tile from tile i, round and round)
/// until the chase is done. Launched with one block per SM (dynamic shared memory sees to it), so
/// the chase has its SM to itself and the load grows by one SM's stream per stream. The chase
/// starts once every stream has (or after 10 ms). A stream stops only when the chase tells it
/// to: with a time limit checked in the loop (every 1024th round) the streams moved up to 7%
/// less (results/nvidia-h200/20261123-220700-loaded-stream-limit-ab), so a chase whose SM
/// never gets a block (a GPU shared with other work) leaves the streams running. A stream
/// reads its stop flag beside its data, not before it: one round costs one memory latency.
/// Streamed elements are checked against `expected`; wrong ones are counted in `bad_elements`.
template <class T, unsigned Ilp, stream_load Load>
__global__ void __launch_bounds__(1024, 1)
    loaded_chase(std::uint64_t* position, unsigned warm_steps, unsigned steps, chase_record* record,
                 const T* stream, T* copy_to, std::size_t tiles, unsigned load_blocks,
                 word_pattern expected, unsigned long long* bad_elements, load_record* load,
                 unsigned* stop_flags, const unsigned* roles) {
  const unsigned id = sm_id();
  const unsigned role = id < kSmIdSlots ? roles[id] : kIdleRole;
  if (role == kChaseRole) {
    if (threadIdx.x != 0) return;
    const volatile unsigned* started = &load->started;
    for (const unsigned long long t0 = global_ns();
         *started < load_blocks && global_ns() - t0 < kWaitLimitNs;) {
    }
    walk<cache_op::kDefault>(position, warm_steps, steps, record, 1u);
    for (unsigned b = 1; b <= load_blocks; ++b) {
      atomicExch(stop_flags + std::size_t(b) * kStopFlagStride, 1u);
    }
    return;
  }
  if (role < kFirstStreamRole) return;
  const unsigned index = role - kFirstStreamRole;  // this stream's: 0 ... load_blocks - 1
  if (threadIdx.x == 0) {
    atomicMax(&load->first_ns_inverted, ~global_ns());
    __threadfence();
    atomicAdd(&load->started, 1u);
  }
  const volatile unsigned* stop = stop_flags + std::size_t(index + 1) * kStopFlagStride;
  unsigned long long rounds = 0;
  unsigned bad = 0;
  // Arrays of fewer tiles than streams (the device tests' small ones) wrap at once.
  const std::size_t step = load_blocks % tiles;
  for (std::size_t tile = index % tiles;;) {
    const std::size_t first = tile * blockDim.x * Ilp + threadIdx.x;
    T v[Ilp];
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) v[j] = stream[first + j * blockDim.x];
    const unsigned stopping = *stop;
    if constexpr (Load == stream_load::kCopy) {
#pragma unroll
      for (unsigned j = 0; j < Ilp; ++j) copy_to[first + j * blockDim.x] = v[j];
    } else if constexpr (Load == stream_load::kMix) {
      if (rounds % 2 == 0) copy_to[first] = v[0];
    }
#pragma unroll
    for (unsigned j = 0; j < Ilp; ++j) {
      bad += element_mismatch(v[j], expected, first + j * blockDim.x) != 0;
    }
    ++rounds;
    if (stopping != 0) break;
    tile += step;
    if (tile >= tiles) tile -= tiles;
  }
  // Per warp, one atomic: each lane's bytes stay far below 2^32 (rounds of a few ms).
  const unsigned long long written = Load == stream_load::kCopy  ? rounds * Ilp
                                     : Load == stream_load::kMix ? (rounds + 1) / 2
                                                                 : 0;
  const unsigned warp_bytes = warp_sum(unsigned((rounds * Ilp + written) * sizeof(T)));
  if (threadIdx.x % 32 == 0) atomicAdd(&load->streamed_bytes, (unsigned long long)warp_bytes);
  if (bad != 0) add_bad(bad_elements, bad);
  __syncthreads();  // the block's last round is done
  if (threadIdx.x != 0) return;
  atomicMax(&load->last_ns, global_ns());
  __threadfence();
  // The last streaming block to stop adds this launch's streaming time to the total.
  if (atomicAdd(&load->finished, 1u) == load_blocks - 1) {
    __threadfence();
    const unsigned long long last = atomicAdd(&load->last_ns, 0ull);
    const unsigned long long first = ~atomicAdd(&load->first_ns_inverted, 0ull);
    if (last > first) load->streamed_ns += last - first;
    ++load->launches;
  }
}

}  // namespace gmb
