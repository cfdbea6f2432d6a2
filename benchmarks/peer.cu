// Peer family (the coalesced kernels of kernels/coalesced.cuh over NVLink or PCIe): a kernel on
// this GPU reads, writes or copies the memory of its partner, GPU (device + 1) mod count, through
// peer access (cudaDeviceEnablePeerAccess). Names: peer/read/f32x4/ilp:4,
// peer/write/f32x4/ilp:4, peer/copy/f32x4/ilp:4/dir:pull (partner -> here), dir:push
// (here -> partner) and dir:both (each GPU pulling the other's array at once); dir:from_all and
// dir:to_all (tile t of the array pulled from or pushed to the (t mod n)-th of the n GPUs with
// peer access, all in one launch: with two GPUs the traffic of pull and push); the patterns over
// the link: peer/copy/f32/off:1/dir:pull, peer/copy/f32/s:8/dir:push (the offset or stride on
// the partner's side); the copy engine in the same run: ref/memcpy_peer/dir:pull|push
// (cudaMemcpyPeerAsync). Bytes as everywhere: read +
// written; pct_peak is of the link (query_peer_link: NVLinks x their speed, else PCIe), counting
// the bytes that cross it one way. The partner's buffer is one array, made on first use and kept
// for the process. With one GPU, or without peer access, the family is empty and describe_peer says
// why. Never NVLink multicast.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/families.hpp"
#include "benchmarks/mapped_case.cuh"
#include "gmb/element_types.cuh"
#include "gmb/host_device.hpp"
#include "gmb/host_link.hpp"
#include "gmb/naming.hpp"
#include "gmb/sizing.hpp"
#include "kernels/coalesced.cuh"
#include "kernels/mapped.cuh"

namespace gmb {

namespace {

/// Makes `device` current for a scope (peer buffers are made and freed on their own GPU).
class scoped_device {
 public:
  explicit scoped_device(int device) {
    GMB_CUDA_CHECK(cudaGetDevice(&saved_));
    GMB_CUDA_CHECK(cudaSetDevice(device));
  }
  ~scoped_device() { cudaSetDevice(saved_); }
  scoped_device(const scoped_device&) = delete;
  scoped_device& operator=(const scoped_device&) = delete;

 private:
  int saved_ = 0;
};

/// The partner GPU, the array on it, and for both directions at once a second array there,
/// the partner's stream, and the events that tie it to ours. An event is recorded on a stream
/// of its own device: `go` (recorded on our stream) lives on this GPU, `done` (recorded on the
/// partner's stream) on the partner.
struct peer_state {
  int self = -1;
  int peer = -1;
  std::size_t bytes = 0;
  device_buffer remote;
  device_buffer remote_out;           // dir:both: what the partner's own kernel writes
  std::vector<int> all;               // every GPU with peer access both ways, the partner first
  std::vector<device_buffer> others;  // an array on each of all[1..], made on first use
  double link_rate = 0;  // the link's theoretical rate one way (host_link.hpp), 0: unknown
  cudaStream_t stream = nullptr;
  cudaEvent_t go = nullptr, done = nullptr;
  device_buffer& buffer() {
    if (remote.bytes() == 0) {
      const scoped_device on_peer(peer);
      remote = device_buffer(bytes);
    }
    return remote;
  }
  /// The array on all[k] (the partner's own for k = 0).
  device_buffer& array_on(std::size_t k) {
    if (k == 0) return buffer();
    if (others.size() < all.size()) others.resize(all.size());
    if (others[k].bytes() == 0) {
      const scoped_device on(all[k]);
      others[k] = device_buffer(bytes);
    }
    return others[k];
  }
  /// The second array, the partner's stream and the events that tie it to ours.
  void make_both() {
    if (remote_out.bytes() != 0) return;
    buffer();
    {
      const scoped_device on_self(self);
      GMB_CUDA_CHECK(cudaEventCreateWithFlags(&go, cudaEventDisableTiming));
    }
    const scoped_device on_peer(peer);
    GMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    GMB_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    remote_out = device_buffer(bytes);  // last: made means every part above was made
  }
  // No throwing here: this may run at exit, after the CUDA runtime has gone (cudaFree then
  // fails quietly, as device_buffer's own destructor lets it).
  ~peer_state() {
    int saved = 0;
    if (remote.bytes() == 0 || cudaGetDevice(&saved) != cudaSuccess) return;
    for (std::size_t k = 1; k < others.size(); ++k) {
      cudaSetDevice(all[k]);
      others[k] = device_buffer();
    }
    cudaSetDevice(peer);
    remote = device_buffer();
    remote_out = device_buffer();
    if (stream) cudaStreamDestroy(stream);
    if (done) cudaEventDestroy(done);
    cudaSetDevice(self);
    if (go) cudaEventDestroy(go);
    cudaSetDevice(saved);
  }
};

/// Lets `from` map `to`'s memory (already enabled counts as done).
void enable_peer_access(int from, int to) {
  const scoped_device on(from);
  const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // clear it
    return;
  }
  GMB_CUDA_CHECK(err);
}

/// A one-way copy's setup and check, kernel or copy engine: pull fills the partner's array
/// and checks ours (out), push the other way round.
void prepare_one_way(environment& e, peer_state& state, bool pull) {
  (pull ? state.buffer() : e.in()).fill(kInputPattern, e.stream());
  (pull ? e.out() : state.buffer()).poison(e.stream());
}
std::string verify_one_way(environment& e, peer_state& state, bool pull) {
  return pull ? verify_words(e, e.out(), kInputPattern, "out")
              : verify_words(e, state.buffer(), kInputPattern, "partner's array");
}

template <class T, unsigned Ilp>
void add_kernels(environment& env, const std::shared_ptr<peer_state>& state,
                 std::vector<bench_case>& cases) {
  constexpr std::size_t kTile = std::size_t(kCoalescedBlock) * Ilp;
  const std::size_t n = env.array_bytes() / sizeof(T);
  const std::size_t tiles = n / kTile;
  const auto grid = static_cast<unsigned>(tiles);
  const double bytes = static_cast<double>(tiles * kTile * sizeof(T));
  const coalesced_map<kCoalescedBlock, Ilp> map;
  const auto load_model =
      predict_traffic(map, tiles * kCoalescedBlock, sizeof(T), access_kind::kLoad);
  const auto store_model =
      predict_traffic(map, tiles * kCoalescedBlock, sizeof(T), access_kind::kStore);
  const char* type = element_traits<T>::kName;
  const auto ilp = name_param("ilp", Ilp);

  bench_case read;
  read.name = bench_name("peer", std::string("read/") + type, {ilp});
  read.prepare = [state](environment& e) {
    state->buffer().fill(kInputPattern, e.stream());
    e.reset_counter();
  };
  const checking_read_launch launch = [state, grid, tiles](environment& e, word_pattern expected) {
    coalesced_read<T, Ilp, cache_op::kDefault><<<grid, kCoalescedBlock, 0, e.stream()>>>(
        state->remote.data<const T>(), tiles, expected, e.counter());
  };
  read.launch = [launch](environment& e) { launch(e, kInputPattern); };
  read.verify = [state, launch, n = tiles * kTile](environment& e) {
    return verify_checking_read(e, state->buffer(), kInputPattern, n, launch);
  };
  read.bytes_read = bytes;
  read.model = load_model;
  read.peak_bytes_per_second = state->link_rate;  // what crosses the link: all of it
  cases.push_back(std::move(read));

  bench_case write;
  write.name = bench_name("peer", std::string("write/") + type, {ilp});
  write.prepare = [state](environment& e) { state->buffer().poison(e.stream()); };
  write.launch = [state, grid, tiles](environment& e) {
    coalesced_write<T, Ilp, store_op::kDefault>
        <<<grid, kCoalescedBlock, 0, e.stream()>>>(state->remote.data<T>(), tiles, kWritePattern);
  };
  write.verify = [state](environment& e) {
    return verify_words(e, state->buffer(), kWritePattern, "partner's array");
  };
  write.bytes_written = bytes;
  write.model = store_model;
  write.peak_bytes_per_second = state->link_rate;
  cases.push_back(std::move(write));

  for (const bool pull : {true, false}) {
    bench_case copy;
    copy.name = bench_name("peer", std::string("copy/") + type,
                           {ilp, name_param("dir", pull ? "pull" : "push")});
    copy.prepare = [state, pull](environment& e) { prepare_one_way(e, *state, pull); };
    copy.launch = [state, grid, tiles, pull](environment& e) {
      const T* from = pull ? state->remote.data<const T>() : e.in().data<const T>();
      T* to = pull ? e.out().data<T>() : state->remote.data<T>();
      coalesced_copy<T, Ilp, cache_op::kDefault, store_op::kDefault>
          <<<grid, kCoalescedBlock, 0, e.stream()>>>(from, to, tiles);
    };
    copy.verify = [state, pull](environment& e) { return verify_one_way(e, *state, pull); };
    copy.bytes_read = copy.bytes_written = bytes;
    copy.model = load_model + store_model;
    copy.peak_bytes_per_second = 2 * state->link_rate;  // half of the bytes cross the link
    cases.push_back(std::move(copy));
  }

  // Both directions at once: each GPU pulls the other's array (ours: remote -> out; the
  // partner's: our in -> its remote_out), started together and timed until both are done.
  bench_case both;
  both.name = bench_name("peer", std::string("copy/") + type, {ilp, name_param("dir", "both")});
  both.prepare = [state](environment& e) {
    state->make_both();
    state->remote.fill(kInputPattern, e.stream());
    e.in().fill(kInputPattern, e.stream());
    e.out().poison(e.stream());
    state->remote_out.poison(e.stream());
  };
  both.launch = [state, grid, tiles](environment& e) {
    using kernel_t = void (*)(const T*, T*, std::size_t);
    const kernel_t kernel = coalesced_copy<T, Ilp, cache_op::kDefault, store_op::kDefault>;
    GMB_CUDA_CHECK(cudaEventRecord(state->go, e.stream()));
    {
      const scoped_device on_peer(state->peer);
      GMB_CUDA_CHECK(cudaStreamWaitEvent(state->stream, state->go, 0));
      kernel<<<grid, kCoalescedBlock, 0, state->stream>>>(e.in().data<const T>(),
                                                          state->remote_out.data<T>(), tiles);
      GMB_CUDA_CHECK(cudaGetLastError());
      GMB_CUDA_CHECK(cudaEventRecord(state->done, state->stream));
    }
    kernel<<<grid, kCoalescedBlock, 0, e.stream()>>>(state->remote.data<const T>(),
                                                     e.out().data<T>(), tiles);
    GMB_CUDA_CHECK(cudaStreamWaitEvent(e.stream(), state->done, 0));
  };
  both.verify = [state](environment& e) {
    std::string error = verify_words(e, e.out(), kInputPattern, "out");
    if (error.empty()) error = verify_words(e, state->remote_out, kInputPattern, "partner's out");
    return error;
  };
  both.bytes_read = both.bytes_written = 2 * bytes;
  both.peak_bytes_per_second = 4 * state->link_rate;  // a quarter crosses each way
  both.model = load_model + store_model + load_model + store_model;
  cases.push_back(std::move(both));
}

/// Element e of the tiles k, k + every, k + 2 every, ... (`tile` elements each), in order:
/// slice k of sliced_copy.
struct every_nth_tile {
  std::size_t tile, first, every;
  GMB_HD unsigned slots() const { return 1; }
  GMB_HD std::size_t operator()(std::size_t e, unsigned) const {
    return (first + e / tile * every) * tile + e % tile;
  }
};

/// What GPU all[k]'s array holds for dir:from_all: a pattern of its own, so a slice read from
/// the wrong GPU is found.
word_pattern source_pattern(unsigned k) {
  return word_pattern{kInputPattern.seed ^ (0x9E3779B9u * (k + 1))};
}

/// This GPU copies slice k of the array (tiles k, k + n, k + 2n, ... of n GPUs in state.all)
/// to (to_all) or from (from_all) GPU all[k], every slice at once in one launch: each link
/// carries array / n. Checked slice by slice where it landed.
template <class T, unsigned Ilp>
bench_case all_case(environment& env, const std::shared_ptr<peer_state>& state, bool to_all) {
  constexpr std::size_t kTile = std::size_t(kCoalescedBlock) * Ilp;
  const std::size_t tiles = env.array_bytes() / sizeof(T) / kTile;
  const auto slices = static_cast<unsigned>(state->all.size());
  const double bytes = static_cast<double>(tiles * kTile * sizeof(T));
  const coalesced_map<kCoalescedBlock, Ilp> map;
  const std::size_t threads = tiles * kCoalescedBlock;

  bench_case c;
  c.name = bench_name("peer", std::string("copy/") + element_traits<T>::kName,
                      {name_param("ilp", Ilp), name_param("dir", to_all ? "to_all" : "from_all")});
  // The arrays and the table of pointers are made in prepare, outside the timed launches.
  auto table = std::make_shared<slice_table<T>>();
  c.prepare = [state, to_all, slices, table](environment& e) {
    for (unsigned k = 0; k < slices; ++k) {
      T* there = state->array_on(k).data<T>();
      table->from[k] = to_all ? e.in().data<const T>() : there;
      table->to[k] = to_all ? there : e.out().data<T>();
      to_all ? state->array_on(k).poison(e.stream())
             : state->array_on(k).fill(source_pattern(k), e.stream());
    }
    to_all ? e.in().fill(kInputPattern, e.stream()) : e.out().poison(e.stream());
  };
  c.launch = [slices, tiles, table](environment& e) {
    sliced_copy<T, Ilp, cache_op::kDefault, store_op::kDefault>
        <<<static_cast<unsigned>(tiles), kCoalescedBlock, 0, e.stream()>>>(*table, slices, tiles);
  };
  c.verify = [state, to_all, slices, tiles](environment& e) {
    for (unsigned k = 0; k < slices; ++k) {
      const every_nth_tile slice{kTile, k, slices};
      const std::string error = verify_mapped<T>(e, to_all ? state->array_on(k) : e.out(),
                                                 tiles_of_slice(tiles, slices, k) * kTile, slice,
                                                 slice, to_all ? kInputPattern : source_pattern(k));
      if (!error.empty()) {
        return (to_all ? "GPU " + std::to_string(state->all[k]) + "'s array: "
                       : "out, slice of GPU " + std::to_string(state->all[k]) + ": ") +
               error;
      }
    }
    return std::string();
  };
  c.bytes_read = c.bytes_written = bytes;
  c.model = predict_traffic(map, threads, sizeof(T), access_kind::kLoad) +
            predict_traffic(map, threads, sizeof(T), access_kind::kStore);
  c.peak_bytes_per_second = 2 * state->link_rate;  // half of the bytes cross this GPU's links
  return c;
}

/// An f32 copy between here and the partner whose partner side is shifted (offset_map) or
/// spread (strided_map): what the coalescing rules cost over the link. The local side is
/// coalesced.
template <class Map>
bench_case patterned_case(const std::shared_ptr<peer_state>& state, std::string name,
                          std::size_t threads, const Map& there, bool pull) {
  const offset_map here{0};
  bench_case c;
  c.name = std::move(name);
  c.prepare = [state, pull](environment& e) { prepare_one_way(e, *state, pull); };
  const unsigned grid = mapped_grid(threads, 1);
  c.launch = [state, pull, threads, there, here, grid](environment& e) {
    if (pull) {
      mapped_copy<float, Map, offset_map, cache_op::kDefault>
          <<<grid, kMappedBlock, 0, e.stream()>>>(state->remote.data<const float>(),
                                                  e.out().data<float>(), threads, there, here);
    } else {
      mapped_copy<float, offset_map, Map, cache_op::kDefault>
          <<<grid, kMappedBlock, 0, e.stream()>>>(
              e.in().data<const float>(), state->remote.data<float>(), threads, here, there);
    }
  };
  c.verify = [state, pull, threads, there, here](environment& e) {
    return pull ? verify_mapped<float>(e, e.out(), threads, there, here)
                : verify_mapped<float>(e, state->buffer(), threads, here, there);
  };
  c.bytes_read = c.bytes_written = static_cast<double>(threads) * sizeof(float);
  c.model = pull ? predict_traffic(there, threads, sizeof(float), access_kind::kLoad) +
                       predict_traffic(here, threads, sizeof(float), access_kind::kStore)
                 : predict_traffic(here, threads, sizeof(float), access_kind::kLoad) +
                       predict_traffic(there, threads, sizeof(float), access_kind::kStore);
  c.peak_bytes_per_second = 2 * state->link_rate;  // half of the (useful) bytes cross the link
  return c;
}

/// Offsets (f32 elements, up to 128 B) and strides on the partner's side, both directions.
void add_patterns(environment& env, const std::shared_ptr<peer_state>& state, sweep s,
                  std::vector<bench_case>& cases) {
  const std::size_t n = env.array_bytes() / sizeof(float);
  const bool full = s == sweep::kFull;
  const std::vector<std::size_t> offsets =
      full ? std::vector<std::size_t>{1, 2, 4, 8, 16, 31, 32} : std::vector<std::size_t>{1};
  const std::vector<std::size_t> strides =
      full ? std::vector<std::size_t>{2, 4, 8, 16, 32} : std::vector<std::size_t>{8};
  const std::size_t shifted_threads = (n - kMaxOffset) / kMappedBlock * kMappedBlock;
  for (const bool pull : {true, false}) {
    if (!full && !pull) break;  // the quick sweep pulls
    const auto dir = name_param("dir", pull ? "pull" : "push");
    for (const std::size_t off : offsets) {
      cases.push_back(patterned_case(
          state,
          bench_name("peer", "copy/f32", {name_param("off", static_cast<long long>(off)), dir}),
          shifted_threads, offset_map{off}, pull));
    }
    for (const std::size_t st : strides) {
      cases.push_back(patterned_case(
          state, bench_name("peer", "copy/f32", {name_param("s", static_cast<long long>(st)), dir}),
          n / st, strided_map{st}, pull));
    }
  }
}

void add_memcpy(environment& env, const std::shared_ptr<peer_state>& state,
                std::vector<bench_case>& cases) {
  const int self = env.device().ordinal;
  for (const bool pull : {true, false}) {
    bench_case c;
    c.name = bench_name("ref", "memcpy_peer", {name_param("dir", pull ? "pull" : "push")});
    c.prepare = [state, pull](environment& e) { prepare_one_way(e, *state, pull); };
    c.launch = [state, pull, self](environment& e) {
      const int peer = state->peer;
      if (pull) {
        GMB_CUDA_CHECK(cudaMemcpyPeerAsync(e.out().data(), self, state->remote.data(), peer,
                                           e.array_bytes(), e.stream()));
      } else {
        GMB_CUDA_CHECK(cudaMemcpyPeerAsync(state->remote.data(), peer, e.in().data(), self,
                                           e.array_bytes(), e.stream()));
      }
    };
    c.verify = [state, pull](environment& e) { return verify_one_way(e, *state, pull); };
    c.bytes_read = c.bytes_written = static_cast<double>(env.array_bytes());
    c.peak_bytes_per_second = 2 * state->link_rate;  // half of the bytes cross the link
    cases.push_back(std::move(c));
  }
}

}  // namespace

peer_partner describe_peer(int device) {
  int count = 0;
  GMB_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) return {-1, "one GPU visible"};
  const int peer = (device + 1) % count;
  int there = 0, back = 0;
  GMB_CUDA_CHECK(cudaDeviceCanAccessPeer(&there, device, peer));
  GMB_CUDA_CHECK(cudaDeviceCanAccessPeer(&back, peer, device));
  if (!there || !back) {
    return {-1, "GPU " + std::to_string(device) + " and GPU " + std::to_string(peer) +
                    " have no peer access"};
  }
  return {peer, ""};
}

/// Every other GPU that this one and that one can both map, the partner first.
std::vector<int> peers_of(int device, int partner) {
  int count = 0;
  GMB_CUDA_CHECK(cudaGetDeviceCount(&count));
  std::vector<int> all{partner};
  for (int other = 0; other < count && all.size() < kMaxSlices; ++other) {
    if (other == device || other == partner) continue;
    int there = 0, back = 0;
    GMB_CUDA_CHECK(cudaDeviceCanAccessPeer(&there, device, other));
    GMB_CUDA_CHECK(cudaDeviceCanAccessPeer(&back, other, device));
    if (there && back) all.push_back(other);
  }
  return all;
}

std::vector<bench_case> peer_cases(environment& env, sweep s) {
  const peer_partner partner = describe_peer(env.device().ordinal);
  if (partner.device < 0) return {};
  auto state = std::make_shared<peer_state>();
  state->self = env.device().ordinal;
  state->peer = partner.device;
  state->all = peers_of(env.device().ordinal, partner.device);
  for (const int other : state->all) {
    enable_peer_access(env.device().ordinal, other);
    enable_peer_access(other, env.device().ordinal);
  }
  state->bytes = env.array_bytes();
  state->link_rate = query_peer_link(env.device().ordinal).bytes_per_second();
  std::vector<bench_case> cases;
  add_kernels<float, 1>(env, state, cases);
  add_kernels<float, 4>(env, state, cases);
  add_kernels<float4, 1>(env, state, cases);
  add_kernels<float4, 4>(env, state, cases);
  for (const bool to_all : {false, true}) cases.push_back(all_case<float4, 4>(env, state, to_all));
  add_patterns(env, state, s, cases);
  add_memcpy(env, state, cases);
  return cases;
}

}  // namespace gmb
