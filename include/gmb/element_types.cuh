#pragma once
// The element types of the suite and their names in benchmark names (f32, f64, f32x2, f32x4).
#include <cuda_runtime.h>

namespace gmb {

template <class T>
struct element_traits;
template <>
struct element_traits<float> {
  static constexpr const char* kName = "f32";
};
template <>
struct element_traits<double> {
  static constexpr const char* kName = "f64";
};
template <>
struct element_traits<float2> {
  static constexpr const char* kName = "f32x2";
};
template <>
struct element_traits<float4> {
  static constexpr const char* kName = "f32x4";
};

}  // namespace gmb
