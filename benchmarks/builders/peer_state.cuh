#pragma once
// What the peer family's cases share (benchmarks/peer.cu, benchmarks/peer_link.cu): the partner
// GPU and its arrays, the setup and checks of one-way and both-way copies, and the launch of a
// kernel on each GPU at once.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/harness/harness.cuh"
#include "gmb/cuda_check.hpp"
#include "gmb/device_buffer.cuh"
#include "gmb/host_device.hpp"
#include "gmb/scoped_device.hpp"
#include "kernels/coalesced.cuh"

namespace gmb {

/// The partner GPU, the array on it, and for both directions at once a second array there,
/// the partner's stream, and the events that tie it to ours. An event is recorded on a stream
/// of its own device: `go` (recorded on our stream) lives on this GPU, `done` (recorded on the
/// partner's stream) on the partner.
struct peer_state {
  int self = -1;
  int peer = -1;
  std::size_t bytes = 0;
  device_buffer remote;
  device_buffer remote_out;           // both ways: the partner's own copy's array
  std::vector<int> all;               // every GPU with peer access both ways, the partner first
  std::vector<device_buffer> others;  // an array on each of all[1..], made on first use
  double link_rate = 0;  // the link's theoretical rate one way (peer_link.hpp), 0: unknown
  double all_rate = 0;   // the same of this GPU's links to every GPU of `all`
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
inline void enable_peer_access(int from, int to) {
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
inline void prepare_one_way(environment& e, peer_state& state, bool pull) {
  (pull ? state.buffer() : e.in()).fill(kInputPattern, e.stream());
  (pull ? e.out() : state.buffer()).poison(e.stream());
}
inline std::string verify_one_way(environment& e, peer_state& state, bool pull) {
  return pull ? verify_words(e, e.out(), kInputPattern, "out")
              : verify_words(e, state.buffer(), kInputPattern, "partner's array");
}

/// Both directions at once, one array each way. Pushes (dir:both): each GPU copies its own
/// array into the other's (ours: in -> the partner's remote; the partner's: its remote_out ->
/// our out). Pulls (dir:both_pull, the copy engine's dir:both): each copies the other's array
/// into its own (ours: remote -> out; the partner's: our in -> its remote_out).
struct both_ways {
  bool push;
  device_buffer& ours_from(environment& e, peer_state& s) const { return push ? e.in() : s.remote; }
  device_buffer& ours_to(environment& e, peer_state& s) const { return push ? s.remote : e.out(); }
  device_buffer& theirs_from(environment& e, peer_state& s) const {
    return push ? s.remote_out : e.in();
  }
  device_buffer& theirs_to(environment& e, peer_state& s) const {
    return push ? e.out() : s.remote_out;
  }
  void prepare(environment& e, peer_state& s) const {
    s.make_both();
    ours_from(e, s).fill(kInputPattern, e.stream());
    theirs_from(e, s).fill(kInputPattern, e.stream());
    ours_to(e, s).poison(e.stream());
    theirs_to(e, s).poison(e.stream());
  }
  std::string verify(environment& e, peer_state& s) const {
    std::string error = verify_words(e, e.out(), kInputPattern, "out");
    if (error.empty())
      error = verify_words(e, push ? s.remote : s.remote_out, kInputPattern,
                           push ? "partner's array" : "partner's out");
    return error;
  }
};

/// Starts `theirs` on the partner's stream (the partner current) and `ours` on this GPU's
/// together, and makes our stream wait for both: the timer on our stream times the pair.
template <class Ours, class Theirs>
inline void launch_both(environment& e, peer_state& state, const Ours& ours, const Theirs& theirs) {
  GMB_CUDA_CHECK(cudaEventRecord(state.go, e.stream()));
  {
    const scoped_device on_peer(state.peer);
    GMB_CUDA_CHECK(cudaStreamWaitEvent(state.stream, state.go, 0));
    theirs(state.stream);
    GMB_CUDA_CHECK(cudaGetLastError());
    GMB_CUDA_CHECK(cudaEventRecord(state.done, state.stream));
  }
  ours(e.stream());
  GMB_CUDA_CHECK(cudaStreamWaitEvent(e.stream(), state.done, 0));
}

/// A coalesced copy of `tiles` tiles both ways at once (`ways`), one launch on each GPU
/// started together and timed until both end; the caller sets the bytes, model and peak.
template <class T, unsigned Ilp>
bench_case both_ways_copy(std::string name, const std::shared_ptr<peer_state>& state,
                          std::size_t tiles, both_ways ways) {
  bench_case c;
  c.name = std::move(name);
  c.prepare = [state, ways](environment& e) { ways.prepare(e, *state); };
  c.launch = [state, tiles, ways](environment& e) {
    const auto kernel = coalesced_copy<T, Ilp, cache_op::kDefault, store_op::kDefault>;
    const auto grid = static_cast<unsigned>(tiles);
    launch_both(
        e, *state,
        [&](cudaStream_t ours) {
          kernel<<<grid, kCoalescedBlock, 0, ours>>>(
              ways.ours_from(e, *state).template data<const T>(),
              ways.ours_to(e, *state).template data<T>(), tiles);
        },
        [&](cudaStream_t theirs) {
          kernel<<<grid, kCoalescedBlock, 0, theirs>>>(
              ways.theirs_from(e, *state).template data<const T>(),
              ways.theirs_to(e, *state).template data<T>(), tiles);
        });
  };
  c.verify = [state, ways](environment& e) { return ways.verify(e, *state); };
  return c;
}

/// Element e of the tiles k, k + every, k + 2 every, ... (`tile` elements each), in order:
/// slice k of sliced_copy.
struct every_nth_tile {
  std::size_t tile, first, every;
  GMB_HD std::size_t operator()(std::size_t e, unsigned) const {
    return (first + e / tile * every) * tile + e % tile;
  }
};

/// The link's experiments (benchmarks/peer_link.cu): patterns on the partner's side (offsets,
/// strides, runs per line), the number of blocks that drive the link, and both directions
/// driven by pushes or by one GPU's SMs split between the two.
void add_link_cases(environment& env, const std::shared_ptr<peer_state>& state, sweep s,
                    std::vector<bench_case>& cases);

/// Bulk (TMA) copies over the link (benchmarks/bulk.cu, built once, sm_90 on): a read of the
/// partner's array into shared memory, and copies pulling from it or pushing into it.
std::vector<bench_case> bulk_link_cases(environment& env, const std::shared_ptr<peer_state>& state);

}  // namespace gmb
