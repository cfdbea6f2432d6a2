#pragma once
// The reduction ladder (gmb/reduce_plan.hpp): each kernel sums `count` elements of T into one
// partial sum per block, out[blockIdx.x]; the host repeats passes over the partials until one
// sum is left (the one-pass rung finishes in its last block). 256-thread blocks. Rungs 0-6
// follow Harris's kernels; the warp-synchronous steps of 4-6 add __syncwarp, which Volta and
// later need (a warp's lanes no longer run in lockstep). Bytes: read count*sizeof(T).
#include <cstddef>

#include "gmb/cache_op.cuh"
#include "gmb/reduce_plan.hpp"

namespace gmb {

template <class T>
struct vector_of;
template <>
struct vector_of<float> {
  using type = float4;
};
template <>
struct vector_of<int> {
  using type = int4;
};

/// The sum of a 16-B vector's four elements.
template <class V>
__device__ __forceinline__ auto lanes_sum(const V& x) {
  return (x.x + x.y) + (x.z + x.w);
}

/// Element i of the input, or zero past its end.
template <class T>
__device__ __forceinline__ T element_or_zero(const T* in, std::size_t i, std::size_t count) {
  return i < count ? load<cache_op::kDefault>(in + i) : T(0);
}

/// The last 64 partials of shared memory to s[0], one warp, Harris's unrolled steps: each
/// step reads, then (after every lane read) writes.
template <class T>
__device__ __forceinline__ void warp_tail(volatile T* s, unsigned tid) {
#pragma unroll
  for (unsigned k = 32; k > 0; k >>= 1) {
    const T v = s[tid] + s[tid + k];
    __syncwarp();
    s[tid] = v;
    __syncwarp();
  }
}

/// Rungs 5 and 6: 256 partials in shared memory to s[0], every step written out (the block
/// size is a constant, so no loop is left).
template <class T>
__device__ __forceinline__ void unrolled_tree(T* s, unsigned tid) {
  if (tid < 128) s[tid] += s[tid + 128];
  __syncthreads();
  if (tid < 64) s[tid] += s[tid + 64];
  __syncthreads();
  if (tid < 32) warp_tail<T>(s, tid);
}

/// Rungs 0-5's tree: the block's 256 partials in shared memory to s[0], as each rung sums them.
template <class T, reduce_rung Rung>
__device__ __forceinline__ void block_tree(T* s, unsigned tid) {
  if constexpr (Rung == reduce_rung::kInterleavedDivergent) {
    for (unsigned k = 1; k < kReduceBlock; k *= 2) {
      if (tid % (2 * k) == 0) s[tid] += s[tid + k];
      __syncthreads();
    }
  } else if constexpr (Rung == reduce_rung::kInterleavedBank) {
    for (unsigned k = 1; k < kReduceBlock; k *= 2) {
      const unsigned index = 2 * k * tid;
      if (index < kReduceBlock) s[index] += s[index + k];
      __syncthreads();
    }
  } else if constexpr (Rung == reduce_rung::kSequential || Rung == reduce_rung::kFirstAdd) {
    for (unsigned k = kReduceBlock / 2; k > 0; k >>= 1) {
      if (tid < k) s[tid] += s[tid + k];
      __syncthreads();
    }
  } else if constexpr (Rung == reduce_rung::kUnrollLastWarp) {
    for (unsigned k = kReduceBlock / 2; k > 32; k >>= 1) {
      if (tid < k) s[tid] += s[tid + k];
      __syncthreads();
    }
    if (tid < 32) warp_tail<T>(s, tid);
  } else {  // complete unroll
    unrolled_tree(s, tid);
  }
}

/// Rungs 0-5: the load, then the tree in shared memory.
template <class T, reduce_rung Rung>
__global__ void __launch_bounds__(kReduceBlock)
    reduce_tree(const T* in, T* out, std::size_t count) {
  __shared__ T s[kReduceBlock];
  const unsigned tid = threadIdx.x;
  if constexpr (Rung <= reduce_rung::kSequential) {
    s[tid] = element_or_zero(in, blockIdx.x * std::size_t(kReduceBlock) + tid, count);
  } else {  // first add during the load: two elements per thread
    const std::size_t i = blockIdx.x * std::size_t(2 * kReduceBlock) + tid;
    s[tid] = element_or_zero(in, i, count) + element_or_zero(in, i + kReduceBlock, count);
  }
  __syncthreads();
  block_tree<T, Rung>(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}

/// The model's probe of a rung's tree alone (benchmarks/reduce.cu): each thread's partial is
/// `value`, no load; the block's sum to out[blockIdx.x]. A grid of these blocks runs at the
/// rate the tree, the block's start and its store allow.
template <class T, reduce_rung Rung>
__global__ void __launch_bounds__(kReduceBlock) reduce_tree_alone(T* out, T value) {
  __shared__ T s[kReduceBlock];
  const unsigned tid = threadIdx.x;
  s[tid] = value;
  __syncthreads();
  block_tree<T, Rung>(s, tid);
  if (tid == 0) out[blockIdx.x] = s[0];
}

/// The block's sum of one value per thread, by warp shuffles (lane 0 of warp 0 holds it).
template <class T>
__device__ __forceinline__ T block_sum_shuffle(T v) {
  __shared__ T warp_sums[kReduceBlock / 32];
#pragma unroll
  for (unsigned k = 16; k > 0; k >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, k);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kReduceBlock / 32 ? warp_sums[threadIdx.x] : T(0);
#pragma unroll
    for (unsigned k = 16; k > 0; k >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, k);
  }
  return v;
}

/// Rung 6 (and the grid-stride loop of 7): each thread sums two elements per step, the grid
/// striding over the array.
template <class T>
__device__ __forceinline__ T thread_sum_strided(const T* in, std::size_t count) {
  const std::size_t grid = std::size_t(2 * kReduceBlock) * gridDim.x;
  T v = T(0);
  for (std::size_t i = blockIdx.x * std::size_t(2 * kReduceBlock) + threadIdx.x; i < count;
       i += grid) {
    v += load<cache_op::kDefault>(in + i) + element_or_zero(in, i + kReduceBlock, count);
  }
  return v;
}

/// Rung 8: 16-B loads, two in flight per thread, each block over its own contiguous share of
/// the vectors (as CUB's even share: a block streams through consecutive DRAM pages rather
/// than hopping by the grid's stride: measured on an H200, 1% faster that way, while four
/// loads in flight lost 3%), then the tail elements.
template <class T>
__device__ __forceinline__ T thread_sum_vector(const T* in, std::size_t count) {
  using V = typename vector_of<T>::type;
  constexpr std::size_t kStep = 2 * kReduceBlock;
  const V* vin = reinterpret_cast<const V*>(in);
  const std::size_t vectors = count / 4;
  const std::size_t chunk = ((vectors + gridDim.x - 1) / gridDim.x + kStep - 1) / kStep * kStep;
  const std::size_t begin = blockIdx.x * chunk;
  const std::size_t end = begin + chunk < vectors ? begin + chunk : vectors;
  T a = T(0), b = T(0);
  std::size_t i = begin + threadIdx.x;
  for (; i + kReduceBlock < end; i += kStep) {
    const V x = load<cache_op::kDefault>(vin + i);
    const V y = load<cache_op::kDefault>(vin + i + kReduceBlock);
    a += lanes_sum(x);
    b += lanes_sum(y);
  }
  if (i < end) a += lanes_sum(load<cache_op::kDefault>(vin + i));
  const std::size_t tail = vectors * 4 + blockIdx.x * std::size_t(kReduceBlock) + threadIdx.x;
  if (tail < count) a += load<cache_op::kDefault>(in + tail);
  return a + b;
}

/// Rungs 6-8: a resident grid; the block sum by shared memory (6) or shuffles (7, 8).
template <class T, reduce_rung Rung>
__global__ void __launch_bounds__(kReduceBlock)
    reduce_resident(const T* in, T* out, std::size_t count) {
  if constexpr (Rung == reduce_rung::kManyPerThread) {
    __shared__ T s[kReduceBlock];
    const unsigned tid = threadIdx.x;
    s[tid] = thread_sum_strided(in, count);
    __syncthreads();
    unrolled_tree(s, tid);
    if (tid == 0) out[blockIdx.x] = s[0];
  } else {
    const T v = block_sum_shuffle(Rung == reduce_rung::kShuffle ? thread_sum_strided(in, count)
                                                                : thread_sum_vector(in, count));
    if (threadIdx.x == 0) out[blockIdx.x] = v;
  }
}

/// Rung 9: the resident blocks stride over tiles of kOnePassVectors 16-B loads per thread,
/// all issued before the first add (as the best persistent read); block 0 also adds the
/// count % 4 elements past the last vector.
template <class T>
__device__ __forceinline__ T thread_sum_tiles(const T* in, std::size_t count) {
  using V = typename vector_of<T>::type;
  constexpr std::size_t kTileVectors = kOnePassTile / 4;
  const V* vin = reinterpret_cast<const V*>(in);
  const std::size_t vectors = count / 4;
  T v = T(0);
  for (std::size_t first = blockIdx.x * kTileVectors + threadIdx.x; first < vectors;
       first += gridDim.x * kTileVectors) {
    V x[kOnePassVectors];
#pragma unroll
    for (unsigned j = 0; j < kOnePassVectors; ++j) {
      const std::size_t i = first + std::size_t(j) * kReduceBlock;
      x[j] = i < vectors ? load<cache_op::kDefault>(vin + i) : V{};
    }
#pragma unroll
    for (unsigned j = 0; j < kOnePassVectors; ++j) v += lanes_sum(x[j]);
  }
  const std::size_t tail = vectors * 4 + threadIdx.x;
  if (blockIdx.x == 0 && tail < count) v += load<cache_op::kDefault>(in + tail);
  return v;
}

/// The last block's share of the partials (16-B aligned, just written: read through the L2)
/// in 16-B loads: at most a few per thread, as there is a partial per resident block.
template <class T>
__device__ __forceinline__ T thread_sum_partials(const T* partials, unsigned count) {
  using V = typename vector_of<T>::type;
  const V* vp = reinterpret_cast<const V*>(partials);
  T v = T(0);
#pragma unroll 8
  for (unsigned i = threadIdx.x; i < count / 4; i += kReduceBlock) v += lanes_sum(__ldcg(vp + i));
  const unsigned tail = count / 4 * 4 + threadIdx.x;
  if (tail < count) v += __ldcg(partials + tail);
  return v;
}

/// Rung 9: each block writes its partial; the last block to finish (a ticket counter;
/// the fence makes every partial visible first) sums them into out[kReduceResultWord] and
/// resets the ticket.
template <class T>
__global__ void __launch_bounds__(kReduceBlock)
    reduce_one_pass(const T* in, T* out, T* partials, unsigned* ticket, std::size_t count) {
  __shared__ bool last;
  T v = block_sum_shuffle(thread_sum_tiles(in, count));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  v = block_sum_shuffle(thread_sum_partials(partials, gridDim.x));
  if (threadIdx.x == 0) {
    out[kReduceResultWord] = v;
    *ticket = 0;
  }
}

/// Launches one pass of a rung: `in` is the input, `out` the output buffer whose words hold
/// the partials, the ticket and the result (reduce_plan.hpp).
template <class T>
void launch_reduce_pass(reduce_rung rung, const reduce_pass& p, const T* in, T* out,
                        unsigned* ticket, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(p.blocks);
  const T* src = p.from == kReduceInput ? in : out + p.from;
  T* dst = out + p.to;
  switch (rung) {
#define GMB_TREE(R)                                                          \
  case R:                                                                    \
    reduce_tree<T, R><<<grid, kReduceBlock, 0, stream>>>(src, dst, p.count); \
    break;
#define GMB_RESIDENT(R)                                                          \
  case R:                                                                        \
    reduce_resident<T, R><<<grid, kReduceBlock, 0, stream>>>(src, dst, p.count); \
    break;
    GMB_TREE(reduce_rung::kInterleavedDivergent)
    GMB_TREE(reduce_rung::kInterleavedBank)
    GMB_TREE(reduce_rung::kSequential)
    GMB_TREE(reduce_rung::kFirstAdd)
    GMB_TREE(reduce_rung::kUnrollLastWarp)
    GMB_TREE(reduce_rung::kUnrollComplete)
    GMB_RESIDENT(reduce_rung::kManyPerThread)
    GMB_RESIDENT(reduce_rung::kShuffle)
    GMB_RESIDENT(reduce_rung::kVector)
#undef GMB_TREE
#undef GMB_RESIDENT
    case reduce_rung::kOnePass:
      reduce_one_pass<T><<<grid, kReduceBlock, 0, stream>>>(
          src, out + kReduceResultWord, out + kReducePartialsWord, ticket, p.count);
      break;
  }
}

}  // namespace gmb
