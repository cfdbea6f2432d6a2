// Peer family (the coalesced kernels of kernels/coalesced.cuh over NVLink or PCIe): a kernel on
// this GPU reads, writes or copies the memory of its partner, GPU (device + 1) mod count or
// --gmb_peer_partner, through peer access (cudaDeviceEnablePeerAccess). Names:
// peer/read/f32x4/ilp:4, peer/write/f32x4/ilp:4, peer/copy/f32x4/ilp:4/dir:pull (partner ->
// here), dir:push (here -> partner) and dir:both (each GPU pushing its array into the other's
// at once);
// f32, f64 and f32x4 words (4, 8 and 16 B per lane); f32x4 copies with ilp:8 too (the link's
// latency is several times HBM's: more bytes in flight);
// dir:from_all and dir:to_all (tile t of the array pulled from or pushed to the (t mod n)-th of
// the n GPUs with peer access, all in one launch: with two GPUs the traffic of pull and push);
// the link's experiments (peer_link.cu: offsets, strides and runs on the partner's side, the
// blocks that drive the link, both ways by pulls or by one GPU); the link's latency: peer/chase/ws:N/lanes:1, the
// latency family's chase through a chain in the partner's memory (quick: 16 KiB, 1 MiB and 256
// MiB, the last beyond any L2; full: every 4th power of two from 4 KiB to 1 GiB, one and 32
// lanes); the copy engine in the same run: ref/memcpy_peer/dir:pull|push|both
// (cudaMemcpyPeerAsync; both: one copy on each GPU's stream at once).
//
// Bytes as everywhere: read + written. pct_peak is of the link (peer_link.hpp: the NVLinks that
// reach the peer, else PCIe): the bytes that cross the link one way / time / the link's rate
// one way, so a correct measurement never exceeds 100. A case's peak_bytes_per_second is
// therefore the rate x (bytes read + written) / (bytes crossing one way): a read or write of
// the partner's array 1 (all of it crosses); a one-way copy 2 (the read there or the write
// there crosses); dir:both 4 (a quarter crosses each way, each way at the link's rate); and
// dir:from_all|to_all 2 with the rate of this GPU's links to all those peers.
// The partner's buffer is one array, made on first use and kept for the process. With one GPU,
// without peer access, or with --gmb_peer=skip, the family is empty (skip: and no GPU but this
// one is touched); describe_peer says why. Never NVLink multicast.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/builders/chase_chain.cuh"
#include "benchmarks/families.hpp"
#include "benchmarks/builders/mapped_case.cuh"
#include "benchmarks/builders/peer_state.cuh"
#include "gmb/element_types.cuh"
#include "gmb/host_device.hpp"
#include "gmb/naming.hpp"
#include "gmb/peer_link.hpp"
#include "gmb/scoped_device.hpp"
#include "gmb/sizing.hpp"
#include "kernels/coalesced.cuh"
#include "kernels/mapped.cuh"

namespace gmb {

namespace {

/// Which cases add_kernels makes: all five, or the three copies.
enum class kernel_set { kAll, kCopies };

template <class T, unsigned Ilp>
void add_kernels(environment& env, const std::shared_ptr<peer_state>& state,
                 std::vector<bench_case>& cases, kernel_set set = kernel_set::kAll) {
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

  if (set == kernel_set::kAll) {
    bench_case read;
    read.name = bench_name("peer", std::string("read/") + type, {ilp});
    read.prepare = [state](environment& e) {
      state->buffer().fill(kInputPattern, e.stream());
      e.reset_counter();
    };
    const checking_read_launch launch = [state, grid, tiles](environment& e,
                                                             word_pattern expected) {
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
  }

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

  // Both directions at once, each GPU pushing its array into the other's: the SMs' best way
  // (pulls both ways put the read requests on the data's wires: peer_link.cu's dir:both_pull).
  bench_case both = both_ways_copy<T, Ilp>(
      bench_name("peer", std::string("copy/") + type, {ilp, name_param("dir", "both")}), state,
      tiles, both_ways{true});
  both.bytes_read = both.bytes_written = 2 * bytes;
  both.peak_bytes_per_second = 4 * state->link_rate;  // a quarter crosses each way
  both.model = load_model + store_model + load_model + store_model;
  cases.push_back(std::move(both));
}


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
  c.peak_bytes_per_second = 2 * state->all_rate;  // half of the bytes cross this GPU's links
  return c;
}


void add_memcpy(environment& env, const std::shared_ptr<peer_state>& state,
                std::vector<bench_case>& cases) {
  const int self = env.device().ordinal;
  const double bytes = static_cast<double>(env.array_bytes());
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
    c.bytes_read = c.bytes_written = bytes;
    c.peak_bytes_per_second = 2 * state->link_rate;  // half of the bytes cross the link
    cases.push_back(std::move(c));
  }
  // Both directions at once: each GPU's copy engine pulls the other's array on that GPU's
  // stream (for the copy engine, which GPU drives a copy does not change what crosses).
  bench_case both;
  both.name = bench_name("ref", "memcpy_peer", {name_param("dir", "both")});
  both.prepare = [state](environment& e) { both_ways{false}.prepare(e, *state); };
  both.launch = [state, self](environment& e) {
    const int peer = state->peer;
    const std::size_t n = e.array_bytes();
    launch_both(
        e, *state,
        [&](cudaStream_t ours) {
          GMB_CUDA_CHECK(
              cudaMemcpyPeerAsync(e.out().data(), self, state->remote.data(), peer, n, ours));
        },
        [&](cudaStream_t theirs) {
          GMB_CUDA_CHECK(
              cudaMemcpyPeerAsync(state->remote_out.data(), peer, e.in().data(), self, n, theirs));
        });
  };
  both.verify = [state](environment& e) { return both_ways{false}.verify(e, *state); };
  both.bytes_read = both.bytes_written = 2 * bytes;
  both.peak_bytes_per_second = 4 * state->link_rate;  // a quarter crosses each way
  cases.push_back(std::move(both));
}

/// peer/chase/ws:N/lanes:L: the latency family's pointer chase (chase_chain.cuh) walked from
/// this GPU through a chain of N bytes in the partner's memory: each step one round trip over
/// the link. Sets larger than this GPU's L2 are flushed from it before every timed iteration,
/// as latency/chase's are (the partner's own L2 holds what the build left of smaller sets).
bench_case chase_case(environment& env, const std::shared_ptr<peer_state>& state,
                      std::size_t set_bytes, unsigned lanes) {
  auto s = std::make_shared<chase_chain>(set_bytes / kChaseLineBytes, 1, lanes);
  s->home = state->peer;
  bench_case c;
  c.name =
      bench_name("peer", "chase", {{"ws", static_cast<long long>(set_bytes)}, {"lanes", lanes}});
  chase_chain::describe(s, c);
  // Sets up to one launch's steps could sit in the L1: walked whole before the clock starts.
  const unsigned warm_steps = s->n <= kStepsPerLaunch ? static_cast<unsigned>(s->n) : 0;
  c.launch = [s, warm_steps](environment& e) { s->launch<cache_op::kDefault>(e, warm_steps); };
  c.cold_l2 = set_bytes > env.device().l2_bytes;
  c.peak_bytes_per_second = state->link_rate;  // every address read crosses the link
  return c;
}

void add_chases(environment& env, const std::shared_ptr<peer_state>& state, sweep s,
                std::vector<bench_case>& cases) {
  if (s == sweep::kQuick) {
    for (const std::size_t kib : {16, 1024, 256 * 1024}) {
      cases.push_back(chase_case(env, state, kib * 1024, 1));
    }
    return;
  }
  for (std::size_t bytes = 4096; bytes <= (std::size_t(1) << 30); bytes *= 4) {
    for (const unsigned lanes : {1u, 32u}) cases.push_back(chase_case(env, state, bytes, lanes));
  }
}

}  // namespace

namespace {
peer_options& configured() {
  static peer_options options;
  return options;
}
}  // namespace

void set_peer_options(const peer_options& options) {
  configured() = options;
}

peer_partner describe_peer(int device) {
  int count = 0;
  GMB_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) return {-1, "one GPU visible"};
  const int asked = configured().partner;
  if (asked == device) {
    return {-1, "GPU " + std::to_string(asked) + " is the GPU under test (--device=" +
                    std::to_string(device) + "): its partner must be another GPU"};
  }
  if (asked >= count) {
    return {-1, "this machine has " + std::to_string(count) + " CUDA devices, numbered from 0"};
  }
  const int peer = asked >= 0 ? asked : (device + 1) % count;
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
  if (configured().skip) return {};  // no context on, nor link to, another GPU
  const int self = env.device().ordinal;
  const peer_partner partner = describe_peer(self);
  if (partner.device < 0) return {};
  auto state = std::make_shared<peer_state>();
  state->self = self;
  state->peer = partner.device;
  state->all = peers_of(self, partner.device);
  for (const int other : state->all) {
    enable_peer_access(self, other);
    enable_peer_access(other, self);
  }
  state->bytes = env.array_bytes();
  state->link_rate = query_peer_link(self, {partner.device}).bytes_per_second;
  state->all_rate = query_peer_link(self, state->all).bytes_per_second;
  std::vector<bench_case> cases;
  add_kernels<float, 1>(env, state, cases);
  add_kernels<float, 4>(env, state, cases);
  add_kernels<double, 1>(env, state, cases);  // the widths: 4, 8 and 16 B per lane
  add_kernels<float4, 1>(env, state, cases);
  add_kernels<float4, 4>(env, state, cases);
  add_kernels<float4, 8>(env, state, cases, kernel_set::kCopies);
  for (const bool to_all : {false, true}) cases.push_back(all_case<float4, 4>(env, state, to_all));
  add_link_cases(env, state, s, cases);
  add_chases(env, state, s, cases);
  add_memcpy(env, state, cases);
  return cases;
}

}  // namespace gmb
