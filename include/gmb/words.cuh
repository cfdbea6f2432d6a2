#pragma once
// Buffer contents as 32-bit words. Every element type is a bag of words, so one generator can
// fill inputs, describe expected outputs and check them, on the device and on the host.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gmb/host_device.hpp"

namespace gmb {

/// Every byte 0xFF: a float/double NaN that no generator below produces for the first 8 GiB.
inline constexpr unsigned char kPoisonByte = 0xFF;
inline constexpr std::uint32_t kPoisonWord = 0xFFFFFFFFu;

/// Word w holds (w mod 2^32) xor seed. Seeds stay below 2^31, so for buffers under 8 GiB no
/// word equals the poison and every misplaced word shows.
struct word_pattern {
  std::uint32_t seed;
  GMB_HD std::uint32_t operator()(std::size_t w) const {
    return static_cast<std::uint32_t>(w) ^ seed;
  }
};

/// Every word the same value (what a memset leaves).
struct word_constant {
  std::uint32_t value;
  GMB_HD std::uint32_t operator()(std::size_t) const { return value; }
};

template <class T>
inline constexpr int kWordsPer = static_cast<int>(sizeof(T) / sizeof(std::uint32_t));

/// Element e of an array of T made from a generator: its words are words e*W ... e*W+W-1.
template <class T, class Gen>
GMB_HD T make_element(const Gen& gen, std::size_t e) {
  static_assert(sizeof(T) % sizeof(std::uint32_t) == 0, "element types are whole words");
  std::uint32_t words[kWordsPer<T>];
#pragma unroll
  for (int i = 0; i < kWordsPer<T>; ++i) words[i] = gen(e * kWordsPer<T> + i);
  T value;
  memcpy(&value, words, sizeof(T));
  return value;
}

/// Bits of element e that differ from what the generator says it holds (0 when correct).
template <class T, class Gen>
GMB_HD std::uint32_t element_mismatch(const T& value, const Gen& gen, std::size_t e) {
  std::uint32_t words[kWordsPer<T>];
  memcpy(words, &value, sizeof(T));
  std::uint32_t diff = 0;
#pragma unroll
  for (int i = 0; i < kWordsPer<T>; ++i) diff |= words[i] ^ gen(e * kWordsPer<T> + i);
  return diff;
}

#ifdef __CUDACC__
/// Adds a thread's count of wrong elements to `*counter`, one atomic per warp where the
/// architecture reduces across lanes (sm_80 on): a check's launch on data it must find all
/// wrong (verify_checking_read) would otherwise queue one atomic per thread on one address,
/// about a quarter of a second for 2^28 threads. Only threads with `bad != 0` call it.
__device__ __forceinline__ void add_bad(unsigned long long* counter, std::uint32_t bad) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned lanes = __activemask();
  const std::uint32_t total = __reduce_add_sync(lanes, bad);
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));  // blocks of any shape
  if (lane == static_cast<unsigned>(__ffs(lanes) - 1)) {
    atomicAdd(counter, static_cast<unsigned long long>(total));
  }
#else
  atomicAdd(counter, static_cast<unsigned long long>(bad));
#endif
}
#endif

}  // namespace gmb
