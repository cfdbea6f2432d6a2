#pragma once
// Per-instruction cache operators as template parameters, so one binary can compare them.
// kDefault is a plain C++ load/store: the only one that the -dlcm=ca/cg builds change
// (docs/design.md lists the SASS each one becomes on sm_90).
#include <cuda_runtime.h>

namespace gmb {

enum class cache_op { kDefault, kLdg, kCa, kCg, kCs, kLu, kCv };
enum class store_op { kDefault, kCg, kCs, kWt };

constexpr const char* name(cache_op op) {
  switch (op) {
    case cache_op::kDefault: return "default";
    case cache_op::kLdg: return "ldg";
    case cache_op::kCa: return "ca";
    case cache_op::kCg: return "cg";
    case cache_op::kCs: return "cs";
    case cache_op::kLu: return "lu";
    case cache_op::kCv: return "cv";
  }
  return "?";
}

constexpr const char* name(store_op op) {
  switch (op) {
    case store_op::kDefault: return "default";
    case store_op::kCg: return "cg";
    case store_op::kCs: return "cs";
    case store_op::kWt: return "wt";
  }
  return "?";
}

#if defined(__CUDACC__)
template <cache_op Op, class T>
__device__ __forceinline__ T load(const T* p) {
  if constexpr (Op == cache_op::kDefault) {
    return *p;
  } else if constexpr (Op == cache_op::kLdg) {
    return __ldg(p);
  } else if constexpr (Op == cache_op::kCa) {
    return __ldca(p);
  } else if constexpr (Op == cache_op::kCg) {
    return __ldcg(p);
  } else if constexpr (Op == cache_op::kCs) {
    return __ldcs(p);
  } else if constexpr (Op == cache_op::kLu) {
    return __ldlu(p);
  } else {
    return __ldcv(p);
  }
}

template <store_op Op, class T>
__device__ __forceinline__ void store(T* p, const T& v) {
  if constexpr (Op == store_op::kDefault) {
    *p = v;
  } else if constexpr (Op == store_op::kCg) {
    __stcg(p, v);
  } else if constexpr (Op == store_op::kCs) {
    __stcs(p, v);
  } else {
    __stwt(p, v);
  }
}
#endif

}  // namespace gmb
