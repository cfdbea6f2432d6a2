// Probe for issue 11 (not part of the suite): (A) block shape at equal warps and bytes per SM,
// striped vs warp-contiguous loads; (B) one-block-per-tile: block lifetime vs warp lifetime.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

template <int ILP, bool Striped>
__global__ void __launch_bounds__(1024, 1) pread(const float* in, size_t tiles, float* sink) {
  extern __shared__ char unused[];
  float acc = 0;
  const unsigned tid = threadIdx.x, bd = blockDim.x, warp = tid / 32, lane = tid % 32;
#pragma unroll 1
  for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const size_t base = t * bd * ILP;
    float v[ILP];
#pragma unroll
    for (int j = 0; j < ILP; ++j)
      v[j] = in[Striped ? base + j * bd + tid : base + warp * 32 * ILP + j * 32 + lane];
#pragma unroll
    for (int j = 0; j < ILP; ++j) acc += v[j];
  }
  if (acc == -1.0f) sink[0] = acc;
}

// One block per tile; lane 0 of each warp stores its clock64 start and end (plain stores).
template <int ILP, bool Timed>
__global__ void __launch_bounds__(1024, 1) fread(const float* in, float* sink, long long* life) {
  extern __shared__ char unused[];
  const long long c0 = clock64();
  const size_t base = size_t(blockIdx.x) * blockDim.x * ILP + threadIdx.x;
  float v[ILP];
#pragma unroll
  for (int j = 0; j < ILP; ++j) v[j] = in[base + j * blockDim.x];
  float acc = 0;
#pragma unroll
  for (int j = 0; j < ILP; ++j) acc += v[j];
  if (acc == -1.0f) sink[0] = acc;
  if (Timed) {
    __syncwarp();
    const long long c1 = clock64();
    if (threadIdx.x % 32 == 0) {
      const size_t w = size_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
      life[2 * w] = c0;
      life[2 * w + 1] = c1;
    }
  }
}

static int sms, smem_sm, smem_block;
template <class K> size_t smem_for(K k, int block, int bpsm) {
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_block));
  for (int s = 0; s <= smem_block; s += 256) {
    int got = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, k, block, s));
    if (got <= bpsm) return got == bpsm ? s : size_t(-1);
  }
  return size_t(-1);
}

template <class F> float time_ms(F f, int reps = 5) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  f(); CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) { CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[reps / 2];
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  sms = p.multiProcessorCount; smem_sm = p.sharedMemPerMultiprocessor; smem_block = p.sharedMemPerBlockOptin;
  printf("device %s sms %d\n", p.name, sms);
  const size_t bytes = size_t(2) << 30, n = bytes / 4;
  float *in, *sink; CK(cudaMalloc(&in, bytes)); CK(cudaMalloc(&sink, 4)); CK(cudaMemset(in, 0, bytes));
  printf("A: persistent read f32 ilp:8, GB/s\nblock bpsm warps striped contiguous\n");
  const int shapes[][2] = {{32, 8}, {64, 4}, {128, 2}, {256, 1}, {512, 1}, {1024, 1}, {32, 16}, {256, 2}};
  for (auto& sh : shapes) {
    const int block = sh[0], bpsm = sh[1];
    const size_t tiles = n / (size_t(block) * 8);
    float gbs[2];
    for (int c = 0; c < 2; ++c) {
      auto k = c == 0 ? pread<8, true> : pread<8, false>;
      const size_t s = smem_for(k, block, bpsm);
      if (s == size_t(-1)) { gbs[c] = -1; continue; }
      const float ms = time_ms([&] { k<<<sms * bpsm, block, s>>>(in, tiles, sink); });
      gbs[c] = tiles * block * 8 * 4.0 / ms / 1e6;
    }
    printf("%5d %4d %5d %8.1f %8.1f\n", block, bpsm, block * bpsm / 32, gbs[0], gbs[1]);
  }
  CK(cudaGetLastError());
  printf("B: one block per tile, read f32; SM cycles, means over blocks\n");
  printf("ilp block bpsm GBs_plain GBs_timed warp_life block_life block/warp start_lag end_lag\n");
  long long* life; CK(cudaMalloc(&life, n / 32 * 16));
  std::vector<long long> h(n / 32 * 2);
  for (int ilp : {1, 4}) for (int block : {64, 128, 256, 512, 1024}) for (int bpsm : {1, 2, 4}) {
    if (block * bpsm > 2048) continue;
    auto kp = ilp == 1 ? fread<1, false> : fread<4, false>;
    auto kt = ilp == 1 ? fread<1, true> : fread<4, true>;
    const size_t s = smem_for(kp, block, bpsm), st = smem_for(kt, block, bpsm);
    if (s == size_t(-1) || st == size_t(-1)) { printf("%d %d %d residency not reachable\n", ilp, block, bpsm); continue; }
    const size_t blocks = n / (size_t(block) * ilp), wpb = block / 32, warps = blocks * wpb;
    const float ms = time_ms([&] { kp<<<blocks, block, s>>>(in, sink, life); });
    const float mst = time_ms([&] { kt<<<blocks, block, st>>>(in, sink, life); }, 3);
    CK(cudaMemcpy(h.data(), life, warps * 16, cudaMemcpyDeviceToHost));
    double wl = 0, bl = 0, lag0 = 0, lag1 = 0;
    for (size_t b = 0; b < blocks; ++b) {
      long long lo = h[2 * b * wpb], hi = h[2 * b * wpb + 1];
      for (size_t w = 0; w < wpb; ++w) { lo = std::min(lo, h[2 * (b * wpb + w)]); hi = std::max(hi, h[2 * (b * wpb + w) + 1]); }
      bl += double(hi - lo);
      for (size_t w = 0; w < wpb; ++w) {
        const long long c0 = h[2 * (b * wpb + w)], c1 = h[2 * (b * wpb + w) + 1];
        wl += double(c1 - c0) / wpb; lag0 += double(c0 - lo) / wpb; lag1 += double(hi - c1) / wpb;
      }
    }
    printf("%3d %5d %4d %9.1f %9.1f %9.1f %10.1f %10.3f %9.1f %9.1f\n", ilp, block, bpsm, bytes / ms / 1e6,
           bytes / mst / 1e6, wl / blocks, bl / blocks, bl / wl, lag0 / blocks, lag1 / blocks);
  }
  CK(cudaGetLastError());
  return 0;
}
