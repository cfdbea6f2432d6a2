// texture family (kernels/texture.cuh): a 4096-wide f32 matrix (min(array, 8 L2s), read from
// DRAM) read by rows, by columns (32x8 and 256x1 blocks), with a 5-point stencil and with a
// gather inside tiles, through plain loads, texture objects over the same linear memory and a
// CUDA array; written by rows (columns: full sweep) through plain stores and a surface. Bytes:
// read 4 per element, write 4 per element. Names: texture/read/<walk>/path:P,
// texture/write/<walk>/path:P (paths: global ldg tex1d tex2d array surface).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/families.hpp"
#include "gmb/mapped_check.cuh"
#include "gmb/naming.hpp"
#include "kernels/texture.cuh"

namespace gmb {

namespace {

using built_once::texture_read;
using built_once::texture_write;

/// The texture objects and the CUDA array of one case: made by its prepare when absent, freed by
/// its release (the harness releases a case's memory when another case starts).
struct texture_resources {
  cudaArray_t array = nullptr;
  cudaTextureObject_t texture = 0;
  cudaSurfaceObject_t surface = 0;

  texture_resources() = default;
  texture_resources(const texture_resources&) = delete;
  texture_resources& operator=(const texture_resources&) = delete;
  ~texture_resources() { reset(); }
  void reset() noexcept {
    if (surface) cudaDestroySurfaceObject(surface);
    if (texture) cudaDestroyTextureObject(texture);
    if (array) cudaFreeArray(array);
    surface = 0;
    texture = 0;
    array = nullptr;
  }
};

std::size_t row_bytes(const matrix_shape& m) {
  return std::size_t(m.width()) * sizeof(float);
}

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  GMB_CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

/// The matrix on this device: texture and surface heights and the linear texture's length
/// bound it (kernels/texture.cuh, plan_texture_matrix).
matrix_shape texture_matrix(environment& env) {
  const int device = env.device().ordinal;
  std::size_t max_rows = std::size_t(device_attribute(cudaDevAttrMaxTexture2DLinearHeight, device));
  max_rows =
      std::min<std::size_t>(max_rows, device_attribute(cudaDevAttrMaxTexture2DHeight, device));
  max_rows =
      std::min<std::size_t>(max_rows, device_attribute(cudaDevAttrMaxSurface2DHeight, device));
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  std::size_t max_elements = 0;
  GMB_CUDA_CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&max_elements, &desc, device));
  const std::size_t widest = std::min<std::size_t>(
      {std::size_t(device_attribute(cudaDevAttrMaxTexture2DLinearWidth, device)),
       std::size_t(device_attribute(cudaDevAttrMaxTexture2DWidth, device)),
       std::size_t(device_attribute(cudaDevAttrMaxSurface2DWidth, device))});
  if (widest < kTextureWidth) return {kTextureWidthLog2, 0};
  return plan_texture_matrix(env.array_bytes(), env.device().l2_bytes, max_rows, max_elements);
}

/// Point sampling at unnormalized coordinates, element type, clamped at the edges.
cudaTextureObject_t make_texture(const cudaResourceDesc& resource) {
  cudaTextureDesc desc{};
  desc.addressMode[0] = desc.addressMode[1] = cudaAddressModeClamp;
  desc.filterMode = cudaFilterModePoint;
  desc.readMode = cudaReadModeElementType;
  desc.normalizedCoords = 0;
  cudaTextureObject_t texture = 0;
  GMB_CUDA_CHECK(cudaCreateTextureObject(&texture, &resource, &desc, nullptr));
  return texture;
}

/// A CUDA array of the matrix's shape (block-linear), usable by surfaces too.
cudaArray_t make_array(const matrix_shape& m) {
  const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array = nullptr;
  GMB_CUDA_CHECK(cudaMallocArray(&array, &desc, m.width(), m.height, cudaArraySurfaceLoadStore));
  return array;
}

/// Copies the linear matrix at `from` into the array, in stream order.
void copy_to_array(cudaArray_t array, const void* from, const matrix_shape& m,
                   cudaStream_t stream) {
  GMB_CUDA_CHECK(cudaMemcpy2DToArrayAsync(array, 0, 0, from, row_bytes(m), row_bytes(m), m.height,
                                          cudaMemcpyDeviceToDevice, stream));
}

/// The texture object a read path fetches through; the input must already hold the matrix.
void make_read_texture(texture_path path, environment& e, const matrix_shape& m,
                       texture_resources& res) {
  cudaResourceDesc resource{};
  const std::size_t alignment =
      std::size_t(device_attribute(cudaDevAttrTextureAlignment, e.device().ordinal));
  if (path != texture_path::kArray &&
      reinterpret_cast<std::uintptr_t>(e.in().data()) % alignment != 0) {
    throw std::runtime_error("texture: the input array is not aligned to the " +
                             std::to_string(alignment) + " B a texture over it needs");
  }
  if (path == texture_path::kTex1d) {
    resource.resType = cudaResourceTypeLinear;
    resource.res.linear.devPtr = e.in().data();
    resource.res.linear.desc = cudaCreateChannelDesc<float>();
    resource.res.linear.sizeInBytes = m.elements() * sizeof(float);
  } else if (path == texture_path::kTex2d) {
    resource.resType = cudaResourceTypePitch2D;
    resource.res.pitch2D.devPtr = e.in().data();
    resource.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    resource.res.pitch2D.width = m.width();
    resource.res.pitch2D.height = m.height;
    resource.res.pitch2D.pitchInBytes = row_bytes(m);
  } else {  // kArray: the input's words, block-linear (inputs are never written: copied once)
    res.array = make_array(m);
    copy_to_array(res.array, e.in().data(), m, e.stream());
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = res.array;
  }
  res.texture = make_texture(resource);
}

/// The model's window: 32 blocks, so that the blocks sharing a column walk's sectors (8 of
/// them for 256x1 blocks) are in it together, as they are in the L2.
constexpr std::size_t kModelWarps = 256;

constexpr bool is_texture(texture_path p) {
  return p == texture_path::kTex1d || p == texture_path::kTex2d || p == texture_path::kArray;
}

/// Cold like the DRAM families: flushed before each iteration, launches back to back covering
/// 128 L2s (one per iteration on a matrix below 8 L2s, the device tests').
int launches_for(const environment& env, const matrix_shape& m) {
  return launches_per_iteration(m.elements() * sizeof(float), env.device().l2_bytes);
}

template <texture_path Path, class Walk>
bench_case read_case(environment& env, const std::string& walk_name, const Walk& walk) {
  const matrix_shape m = walk.m;
  const std::size_t n = m.elements();
  const unsigned grid = static_cast<unsigned>(n / kTextureBlock);
  auto res = std::make_shared<texture_resources>();
  bench_case c;
  // walk_name holds parameters of its own (cols/block:32x8): the family and op come first.
  c.name = bench_name("texture", "read") + "/" + walk_name + "/path:" + name(Path);
  c.prepare = [=](environment& e) {
    fill_input_poison_output(e);
    if (is_texture(Path) && res->texture == 0) make_read_texture(Path, e, m, *res);
  };
  c.launch = [=](environment& e) {
    texture_read<Walk, Path><<<grid, kTextureBlock, 0, e.stream()>>>(
        e.in().data<const float>(), res->texture, e.out().data<std::uint32_t>(), n, walk);
  };
  c.verify = [=](environment& e) {
    return verify_words(e, e.out(), mapped_xor_words<Walk>{kInputPattern, walk, n}, "out");
  };
  if (is_texture(Path)) c.release = [res](environment&) { res->reset(); };
  c.bytes_read = c.bytes_written = 4.0 * n;
  c.kernel = kernel_id(texture_read<Walk, Path>);
  // Plain and __ldg loads follow the walk's index map; texture fetches go through the texture
  // pipeline (and a CUDA array is block-linear): no traffic model for them (the prediction
  // model counts the array's layout itself, scripts/gmbtools/analysis/model_texture.py).
  if (!is_texture(Path)) {
    c.model = predict_traffic(walk, n, 4, access_kind::kLoad, kModelWarps) +
              predict_traffic(offset_map{0}, n, 4, access_kind::kStore);
  }
  c.launches_per_iteration = launches_for(env, m);
  c.every_flavor = false;
  return c;
}

template <texture_path Path, class Walk>
bench_case write_case(environment& env, const std::string& walk_name, const Walk& walk) {
  const matrix_shape m = walk.m;
  const std::size_t n = m.elements();
  const unsigned grid = static_cast<unsigned>(n / kTextureBlock);
  auto res = std::make_shared<texture_resources>();
  bench_case c;
  c.name = bench_name("texture", "write") + "/" + walk_name + "/path:" + name(Path);
  c.prepare = [=](environment& e) {
    e.out().poison(e.stream());
    if constexpr (Path == texture_path::kSurface) {
      if (res->surface == 0) {
        res->array = make_array(m);
        cudaResourceDesc resource{};
        resource.resType = cudaResourceTypeArray;
        resource.res.array.array = res->array;
        GMB_CUDA_CHECK(cudaCreateSurfaceObject(&res->surface, &resource));
      }
      copy_to_array(res->array, e.out().data(), m, e.stream());  // the array poisoned too
    }
  };
  c.launch = [=](environment& e) {
    texture_write<Walk, Path><<<grid, kTextureBlock, 0, e.stream()>>>(
        e.out().data<float>(), res->surface, n, walk, kWritePattern);
  };
  c.verify = [=](environment& e) {
    if constexpr (Path == texture_path::kSurface) {  // the array's rows into the output
      GMB_CUDA_CHECK(cudaMemcpy2DFromArrayAsync(e.out().data(), row_bytes(m), res->array, 0, 0,
                                                row_bytes(m), m.height, cudaMemcpyDeviceToDevice,
                                                e.stream()));
    }
    // Word w of the matrix holds the pattern's word w; nothing past it is written.
    const mapped_xor_words<offset_map> expected{kWritePattern, offset_map{0}, n};
    return verify_words(e, e.out(), expected, Path == texture_path::kSurface ? "array" : "out");
  };
  if (Path == texture_path::kSurface) {
    c.release = [res](environment&) { res->reset(); };
  } else {
    c.model = predict_traffic(walk, n, 4, access_kind::kStore, kModelWarps);
  }
  c.bytes_written = 4.0 * n;
  c.launches_per_iteration = launches_for(env, m);
  c.every_flavor = false;
  return c;
}

/// One read walk through every path of the sweep.
template <class Walk>
void add_reads(environment& env, sweep s, const std::string& walk_name, const Walk& walk,
               std::vector<bench_case>& cases) {
  cases.push_back(read_case<texture_path::kGlobal>(env, walk_name, walk));
  if (s == sweep::kFull) cases.push_back(read_case<texture_path::kLdg>(env, walk_name, walk));
  if (s == sweep::kFull) cases.push_back(read_case<texture_path::kTex1d>(env, walk_name, walk));
  if (s == sweep::kFull) cases.push_back(read_case<texture_path::kTex2d>(env, walk_name, walk));
  cases.push_back(read_case<texture_path::kArray>(env, walk_name, walk));
}

template <class Walk>
void add_writes(environment& env, const std::string& walk_name, const Walk& walk,
                std::vector<bench_case>& cases) {
  cases.push_back(write_case<texture_path::kGlobal>(env, walk_name, walk));
  cases.push_back(write_case<texture_path::kSurface>(env, walk_name, walk));
}

std::string block_name(const column_walk& walk) {
  return "cols/block:" + std::to_string(walk.block_rows()) + "x" +
         std::to_string(walk.block_cols());
}

/// The in-tile permutation's seed (any fixed value: the same order in every run).
constexpr std::uint32_t kTileSeed = 0x5EEDu;

tile_gather_walk gather_walk(const matrix_shape& m, std::uint32_t tile_log2) {
  return {m, tile_log2, hash_permutation{2 * tile_log2, kTileSeed}};
}

}  // namespace

std::vector<bench_case> texture_cases(environment& env, sweep s) {
  std::vector<bench_case> cases;
  const matrix_shape m = texture_matrix(env);
  if (m.height == 0) return cases;  // an array below 16 KiB x 256 rows: no matrix fits
  // Quick: the walks where the paths part most (rows and gathers read alike through each).
  if (s == sweep::kFull) add_reads(env, s, "rows", row_walk{m}, cases);
  for (std::uint32_t cols_log2 : {3u, 0u}) {  // blocks of 32 x 8 and 256 x 1 cells
    const column_walk walk{m, cols_log2};
    add_reads(env, s, block_name(walk), walk, cases);
  }
  add_reads(env, s, "stencil", stencil_walk{m}, cases);
  for (std::uint32_t tile_log2 : {5u, 4u}) {  // tiles of 32 x 32, 16 x 16
    if (s != sweep::kFull) continue;
    const tile_gather_walk walk = gather_walk(m, tile_log2);
    add_reads(env, s, "gather/tile:" + std::to_string(walk.tile()), walk, cases);
  }
  add_writes(env, "rows", row_walk{m}, cases);
  if (s == sweep::kFull) {
    for (std::uint32_t cols_log2 : {3u, 0u}) {
      const column_walk walk{m, cols_log2};
      add_writes(env, block_name(walk), walk, cases);
    }
  }
  return cases;
}

}  // namespace gmb
