// The pattern family's kernels, compiled at run time by NVRTC (include/gmb/rtc.hpp) with the
// user's index expression: self-contained (NVRTC sees no other file of this repository). The
// program that benchmarks/pattern.cu builds is: the GMB_PATTERN_* macros, this file, then the
// expression as the body of gmb_pattern_index (pattern_program in benchmarks/pattern.cu).
//   GMB_PATTERN_OP      0 read (checks what it reads), 1 write, 2 copy (both sides the pattern),
//                       3 gather (reads the pattern, writes coalesced), 4 scatter (the reverse)
//   GMB_PATTERN_K       elements per thread (slots k = 0..K-1), all loads before the first store
//   GMB_PATTERN_BLOCK   threads per block (a multiple of 32)
//   GMB_PATTERN_WORD    bytes per element, a multiple of 4; GMB_PATTERN_ALIGN its alignment
//   GMB_PATTERN_WHOLE_TILES  1 when the threads fill whole blocks (the read needs no bound check)
// Bytes per launch: threads * K * WORD read and/or written (the logical bytes; the traffic
// model says what the hardware moves). Words hold word_pattern of gmb/words.cuh: word w of a
// buffer is (w mod 2^32) xor seed.

typedef long long gmb_i64;
typedef unsigned long long gmb_u64;
typedef unsigned int gmb_u32;

/// The expression's integers: 64-bit signed, the same operations for the timed kernel
/// (Checked false: plain arithmetic, nothing added) and for the index table (Checked true: a
/// division or remainder by zero, or a shift by a negative count or 64 or more, marks the
/// value bad instead of being undefined). One type for both, so both compute the same index.
template <bool Checked>
struct gmb_int;

template <>
struct gmb_int<false> {
  gmb_i64 v;
  __device__ __forceinline__ gmb_int(gmb_i64 x = 0) : v(x) {}
  __device__ __forceinline__ explicit operator bool() const { return v != 0; }
  __device__ __forceinline__ static gmb_int make(gmb_i64 x, bool, bool) { return gmb_int(x); }
  __device__ __forceinline__ bool bad() const { return false; }
};

template <>
struct gmb_int<true> {
  gmb_i64 v;
  bool is_bad;
  __device__ __forceinline__ gmb_int(gmb_i64 x = 0) : v(x), is_bad(false) {}
  __device__ __forceinline__ explicit operator bool() const { return v != 0; }
  __device__ __forceinline__ static gmb_int make(gmb_i64 x, bool a, bool b) {
    gmb_int r(x);
    r.is_bad = a || b;
    return r;
  }
  __device__ __forceinline__ bool bad() const { return is_bad; }
};

/// Binary operators, also with a literal on either side. `invalid`: the operands for which the
/// operation is undefined (division and remainder by zero, shifts out of range), which the
/// checked type marks bad instead of computing.
#define GMB_BINARY(op, invalid)                                                   \
  template <bool C>                                                               \
  __device__ __forceinline__ gmb_int<C> operator op(gmb_int<C> a, gmb_int<C> b) { \
    const bool wrong = C && (invalid);                                            \
    return gmb_int<C>::make(wrong ? 0 : a.v op b.v, a.bad() || wrong, b.bad());   \
  }                                                                               \
  template <bool C>                                                               \
  __device__ __forceinline__ gmb_int<C> operator op(gmb_int<C> a, gmb_i64 b) {    \
    return a op gmb_int<C>(b);                                                    \
  }                                                                               \
  template <bool C>                                                               \
  __device__ __forceinline__ gmb_int<C> operator op(gmb_i64 a, gmb_int<C> b) {    \
    return gmb_int<C>(a) op b;                                                    \
  }
GMB_BINARY(+, false)
GMB_BINARY(-, false)
GMB_BINARY(*, false)
GMB_BINARY(&, false)
GMB_BINARY(|, false)
GMB_BINARY(^, false)
GMB_BINARY(<, false)
GMB_BINARY(>, false)
GMB_BINARY(<=, false)
GMB_BINARY(>=, false)
GMB_BINARY(==, false)
GMB_BINARY(!=, false)
GMB_BINARY(/, b.v == 0)
GMB_BINARY(%, b.v == 0)
GMB_BINARY(<<, (b.v < 0 || b.v > 63))
GMB_BINARY(>>, (b.v < 0 || b.v > 63))
#undef GMB_BINARY

template <bool C>
__device__ __forceinline__ gmb_int<C> operator-(gmb_int<C> a) {
  return gmb_int<C>::make(-a.v, a.bad(), false);
}
template <bool C>
__device__ __forceinline__ gmb_int<C> operator+(gmb_int<C> a) {
  return a;
}
template <bool C>
__device__ __forceinline__ gmb_int<C> operator~(gmb_int<C> a) {
  return gmb_int<C>::make(~a.v, a.bad(), false);
}
template <bool C>
__device__ __forceinline__ gmb_int<C> operator!(gmb_int<C> a) {
  return gmb_int<C>::make(!a.v, a.bad(), false);
}
/// min and max, of two values or of a value and a literal.
#define GMB_PICK(name, cmp)                                                \
  template <bool C>                                                        \
  __device__ __forceinline__ gmb_int<C> name(gmb_int<C> a, gmb_int<C> b) { \
    return gmb_int<C>::make(a.v cmp b.v ? a.v : b.v, a.bad(), b.bad());    \
  }                                                                        \
  template <bool C>                                                        \
  __device__ __forceinline__ gmb_int<C> name(gmb_int<C> a, gmb_i64 b) {    \
    return name(a, gmb_int<C>(b));                                         \
  }                                                                        \
  template <bool C>                                                        \
  __device__ __forceinline__ gmb_int<C> name(gmb_i64 a, gmb_int<C> b) {    \
    return name(gmb_int<C>(a), b);                                         \
  }
GMB_PICK(min, <)
GMB_PICK(max, >)
#undef GMB_PICK

/// The user's expression (defined after this file): the element that thread i touches in slot
/// k; lane, warp (i / 32), tid (threadIdx.x), block (blockIdx.x), n (elements in the array).
template <bool C>
__device__ __forceinline__ gmb_int<C> gmb_pattern_index(gmb_int<C> i, gmb_int<C> lane,
                                                        gmb_int<C> warp, gmb_int<C> tid,
                                                        gmb_int<C> block, gmb_int<C> k,
                                                        gmb_int<C> n);

template <bool C>
__device__ __forceinline__ gmb_int<C> gmb_index_of(gmb_i64 t, gmb_i64 k, gmb_i64 n) {
  return gmb_pattern_index<C>(gmb_int<C>(t), gmb_int<C>(threadIdx.x % 32), gmb_int<C>(t / 32),
                              gmb_int<C>(threadIdx.x), gmb_int<C>(blockIdx.x), gmb_int<C>(k),
                              gmb_int<C>(n));
}

constexpr gmb_u32 kWords = GMB_PATTERN_WORD / 4;
struct __align__(GMB_PATTERN_ALIGN) gmb_word {
  gmb_u32 w[kWords];
};

/// Thread t's slot k on the coalesced side of a gather or scatter: slot by slot, a block's
/// threads take consecutive elements (gmb::coalesced_map).
__device__ __forceinline__ gmb_i64 gmb_coalesced(gmb_i64 t, gmb_i64 k) {
  return t / GMB_PATTERN_BLOCK * (gmb_i64(GMB_PATTERN_BLOCK) * GMB_PATTERN_K) +
         k * GMB_PATTERN_BLOCK + t % GMB_PATTERN_BLOCK;
}

/// The index table: table[t * K + k] = the expression for thread t's slot k, computed by the
/// launch's own blocks (so lane, tid and block are the timed kernel's). A bad slot (out of
/// [0, n), an undefined operation, or an element an earlier slot of the thread touched: the
/// compiler would load it once while the bytes count it twice) records its thread in fault[0]
/// (the smallest such thread).
extern "C" __global__ void __launch_bounds__(GMB_PATTERN_BLOCK)
    gmb_pattern_table(gmb_u32* table, gmb_i64 threads, gmb_i64 n, gmb_u64* fault) {
  const gmb_i64 t = blockIdx.x * gmb_i64(GMB_PATTERN_BLOCK) + threadIdx.x;
  if (t >= threads) return;
  gmb_i64 e[GMB_PATTERN_K];
  bool bad = false;
  for (gmb_i64 k = 0; k < GMB_PATTERN_K; ++k) {
    const gmb_int<true> v = gmb_index_of<true>(t, k, n);
    e[k] = v.v;
    bad = bad || v.bad() || v.v < 0 || v.v >= n;
    for (gmb_i64 j = 0; j < k; ++j) bad = bad || e[j] == e[k];
    if (!bad) table[gmb_u64(t) * GMB_PATTERN_K + k] = gmb_u32(v.v);
  }
  if (bad) atomicMin(fault, gmb_u64(t));
}

/// Thread t's K values and whether each is defined (for the message about a bad thread).
extern "C" __global__ void gmb_pattern_probe(gmb_i64 t, gmb_i64 n, gmb_i64* value, int* undefined) {
  // Runs as thread t would: same lane, tid and block.
  if (blockIdx.x != t / GMB_PATTERN_BLOCK || threadIdx.x != t % GMB_PATTERN_BLOCK) return;
  for (gmb_i64 k = 0; k < GMB_PATTERN_K; ++k) {
    const gmb_int<true> e = gmb_index_of<true>(t, k, n);
    value[k] = e.v;
    undefined[k] = e.bad();
  }
}

__device__ __forceinline__ gmb_word gmb_make_word(gmb_i64 e, gmb_u32 seed) {
  gmb_word x;
#pragma unroll
  for (gmb_u32 j = 0; j < kWords; ++j) x.w[j] = gmb_u32(gmb_u64(e) * kWords + j) ^ seed;
  return x;
}

/// One thread's work in the timed kernel: its K indices, then the operation. Returns the
/// elements it read that held a wrong word (read only).
__device__ __forceinline__ gmb_u32 gmb_pattern_thread(const gmb_word* in, gmb_word* out, gmb_i64 t,
                                                      gmb_i64 n, gmb_u32 in_seed,
                                                      gmb_u32 out_seed) {
  gmb_i64 e[GMB_PATTERN_K];
#pragma unroll
  for (int k = 0; k < GMB_PATTERN_K; ++k) e[k] = gmb_index_of<false>(t, k, n).v;
#if GMB_PATTERN_OP == 1
#pragma unroll
  for (int k = 0; k < GMB_PATTERN_K; ++k) out[e[k]] = gmb_make_word(e[k], out_seed);
  return 0;
#else
  gmb_word v[GMB_PATTERN_K];
#pragma unroll
  for (int k = 0; k < GMB_PATTERN_K; ++k) {
    v[k] = in[GMB_PATTERN_OP == 4 ? gmb_coalesced(t, k) : e[k]];
  }
#if GMB_PATTERN_OP == 0
  // Compare with what the element holds: keeps the loads and checks them.
  gmb_u32 bad = 0;
#pragma unroll
  for (int k = 0; k < GMB_PATTERN_K; ++k) {
    gmb_u32 diff = 0;
#pragma unroll
    for (gmb_u32 j = 0; j < kWords; ++j) {
      diff |= v[k].w[j] ^ (gmb_u32(gmb_u64(e[k]) * kWords + j) ^ in_seed);
    }
    bad += diff != 0;
  }
  return bad;
#else
#pragma unroll
  for (int k = 0; k < GMB_PATTERN_K; ++k) {
    out[GMB_PATTERN_OP == 3 ? gmb_coalesced(t, k) : e[k]] = v[k];
  }
  return 0;
#endif
#endif
}

/// The timed kernel, shaped as the built-in kernel of the same operation: a read as
/// checking_read (kernels/coalesced.cuh: a loop over `tiles` tiles of BLOCK threads, once on
/// the full grid it is launched with, wrong reads added once; no bound check when the threads
/// fill whole tiles, GMB_PATTERN_WHOLE_TILES), the others as mapped_copy (kernels/mapped.cuh:
/// one thread, one bound check).
extern "C" __global__ void __launch_bounds__(GMB_PATTERN_BLOCK)
    gmb_pattern_run(const gmb_word* in, gmb_word* out, gmb_i64 threads, gmb_i64 n, gmb_i64 tiles,
                    gmb_u32 in_seed, gmb_u32 out_seed, gmb_u64* bad_elements) {
#if GMB_PATTERN_OP == 0
  gmb_u32 bad = 0;
  for (gmb_i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const gmb_i64 t = tile * GMB_PATTERN_BLOCK + threadIdx.x;
#if !GMB_PATTERN_WHOLE_TILES
    if (t >= threads) break;  // the last tile's tail: no later tile of this block either
#endif
    bad += gmb_pattern_thread(in, out, t, n, in_seed, out_seed);
  }
  if (bad != 0) atomicAdd(bad_elements, gmb_u64(bad));
#else
  const gmb_i64 t = blockIdx.x * gmb_i64(GMB_PATTERN_BLOCK) + threadIdx.x;
  if (t < threads) gmb_pattern_thread(in, out, t, n, in_seed, out_seed);
#endif
}

/// Checks every slot's destination after a run, from the table: write, copy and gather must
/// find the words of the element they wrote or copied; a scatter's destination must hold some
/// source element whose slot maps to it (threads that share a destination race; one wins).
/// Counts wrong slots in bad[0] and keeps the smallest in bad[1].
extern "C" __global__ void gmb_pattern_check(const gmb_u32* table, const gmb_word* out,
                                             gmb_i64 threads, gmb_u32 in_seed, gmb_u32 out_seed,
                                             gmb_u64* bad) {
  const gmb_i64 t = blockIdx.x * gmb_i64(blockDim.x) + threadIdx.x;
  if (t >= threads) return;
  for (gmb_i64 k = 0; k < GMB_PATTERN_K; ++k) {
    const gmb_u64 slot = gmb_u64(t) * GMB_PATTERN_K + k;
    const gmb_i64 e = table[slot];
    const gmb_i64 dst = GMB_PATTERN_OP == 3 ? gmb_coalesced(t, k) : e;
    const gmb_word got = out[dst];
    gmb_i64 src = GMB_PATTERN_OP == 4 ? gmb_i64((got.w[0] ^ in_seed) / kWords) : e;
    bool ok = true;
    if (GMB_PATTERN_OP == 4) {  // the source element's slot (coalesced side) must map to dst
      const gmb_i64 per_block = gmb_i64(GMB_PATTERN_BLOCK) * GMB_PATTERN_K;
      const gmb_i64 st = src / per_block * GMB_PATTERN_BLOCK + src % GMB_PATTERN_BLOCK;
      const gmb_i64 sk = src % per_block / GMB_PATTERN_BLOCK;
      ok = st < threads && table[gmb_u64(st) * GMB_PATTERN_K + sk] == gmb_u32(e);
    }
    const gmb_word want = gmb_make_word(src, GMB_PATTERN_OP == 1 ? out_seed : in_seed);
#pragma unroll
    for (gmb_u32 j = 0; j < kWords; ++j) ok = ok && got.w[j] == want.w[j];
    if (!ok) {
      atomicAdd(&bad[0], 1ull);
      atomicMin(&bad[1], slot);
    }
  }
}
