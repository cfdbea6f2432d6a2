#pragma once
// Lets the index maps and word generators compile both in nvcc (kernels) and in the plain C++
// host tests and traffic model, so the same code drives all three.
#if defined(__CUDACC__)
#define GMB_HD __host__ __device__ __forceinline__
#else
#define GMB_HD inline
#endif
