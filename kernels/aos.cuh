#pragma once
// Array of structures vs structure of arrays: n structures of F float fields, read one field
// or all of them; each thread writes one word (the field, or the xor of all its fields' bits),
// coalesced. Bytes: read n*4 (one field) or n*F*4 (all fields), write n*4.
// aos_staged: the fix taught when the layout cannot change ("corner turning"): a block loads
// its structures as consecutive words (coalesced) into shared memory, then each thread takes
// its own structure from there.
#include <cstddef>
#include <cstdint>

#include "gmb/cache_op.cuh"

namespace gmb {

inline constexpr unsigned kAosBlock = 256;

struct __align__(8) s8 {
  float f[2];
};
struct p12 {
  float f[3];
};  // packed: 4-B aligned, so three 4-B loads
struct __align__(16) a12 {
  float f[3];
};  // padded to 16 B: one 16-B load
struct __align__(16) s16 {
  float f[4];
};
struct __align__(16) s32 {
  float f[8];
};
struct __align__(16) s64 {
  float f[16];
};

template <class S>
inline constexpr unsigned kFields = sizeof(S::f) / sizeof(float);
template <class S>
inline constexpr unsigned kWordsPerStruct = sizeof(S) / sizeof(float);

template <class S, cache_op Load>
__global__ void __launch_bounds__(kAosBlock)
    aos_one_field(const S* in, std::uint32_t* out, std::size_t n) {
  const std::size_t t = blockIdx.x * std::size_t(kAosBlock) + threadIdx.x;
  if (t < n) out[t] = __float_as_uint(load<Load>(&in[t].f[0]));
}

template <class S>
__global__ void __launch_bounds__(kAosBlock)
    aos_all_fields(const S* in, std::uint32_t* out, std::size_t n) {
  const std::size_t t = blockIdx.x * std::size_t(kAosBlock) + threadIdx.x;
  if (t >= n) return;
  const S v = in[t];  // the whole structure: the compiler picks the load widths
  std::uint32_t x = 0;
#pragma unroll
  for (unsigned f = 0; f < kFields<S>; ++f) x ^= __float_as_uint(v.f[f]);
  out[t] = x;
}

/// Fields field arrays of n floats, one after another; reads the first `Fields` of them and
/// writes `Outputs` arrays of n words: output o holds the xor of its share of the fields
/// (Fields / Outputs of them, in order), so the write share is Outputs / (Fields + Outputs).
template <unsigned Fields, cache_op Load, unsigned Outputs = 1>
__global__ void __launch_bounds__(kAosBlock)
    soa_fields(const float* in, std::uint32_t* out, std::size_t n) {
  static_assert(Fields % Outputs == 0, "each output xors as many fields");
  constexpr unsigned kPerOutput = Fields / Outputs;
  const std::size_t t = blockIdx.x * std::size_t(kAosBlock) + threadIdx.x;
  if (t >= n) return;
#pragma unroll
  for (unsigned o = 0; o < Outputs; ++o) {
    std::uint32_t x = 0;
#pragma unroll
    for (unsigned f = o * kPerOutput; f < (o + 1) * kPerOutput; ++f)
      x ^= __float_as_uint(load<Load>(in + f * n + t));
    out[o * n + t] = x;
  }
}

/// n must be a whole number of blocks. Shared memory is padded by one word every 32 so that
/// threads reading structures 4, 8 or 16 words apart hit distinct banks.
template <class S>
__global__ void __launch_bounds__(kAosBlock)
    aos_staged(const S* in, std::uint32_t* out, std::size_t n) {
  constexpr unsigned kWords = kAosBlock * kWordsPerStruct<S>;
  __shared__ std::uint32_t tile[kWords + kWords / 32];
  const std::uint32_t* words =
      reinterpret_cast<const std::uint32_t*>(in) + std::size_t(blockIdx.x) * kWords;
#pragma unroll
  for (unsigned i = threadIdx.x; i < kWords; i += kAosBlock) tile[i + i / 32] = words[i];
  __syncthreads();
  std::uint32_t x = 0;
#pragma unroll
  for (unsigned f = 0; f < kFields<S>; ++f) {
    const unsigned i = threadIdx.x * kWordsPerStruct<S> + f;
    x ^= tile[i + i / 32];
  }
  out[blockIdx.x * std::size_t(kAosBlock) + threadIdx.x] = x;
}

}  // namespace gmb
