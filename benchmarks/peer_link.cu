// The peer link's experiments (docs/peer.md, the link's model), each a copy between this GPU and
// its partner, checked where it landed:
// - patterns on the partner's side, the local side coalesced (f32, mapped_copy):
//   peer/copy/f32/off:K/dir:D (offset_map), peer/copy/f32/s:K/dir:D (strided_map: the stride
//   sweep over the link, beside the local stride family) and peer/copy/f32/run:B/dir:D
//   (run_map: B = 32, 64 or 128 bytes of each 128-B line per request, every byte used: what the
//   link costs per line a request touches). Quick: off:1 and s:2..32 pulled, the runs both
//   ways; full: offsets 1..32 and the strides both ways too.
// - peer/copy/f32x4/ilp:4/dir:pull/blocks:N: the coalesced copy on N blocks (a sixteenth of
//   the SMs up to eight per SM, each block looping over the tiles): how many SMs fill the link.
// - both directions at once, other than dir:both (each GPU pushing):
//   peer/copy/f32x4/ilp:4/dir:both_pull (each GPU pulls the other's array) and
//   dir:split (this GPU alone, even tiles pulled and odd tiles pushed, in one launch);
// - bulk (TMA) copies over the link (benchmarks/bulk.cu's bulk_link_cases, sm_90 on):
//   peer/bulk/read/bytes:16384/stages:4/bpsm:1/warps:4, peer/bulk/copy/.../dir:pull|push: do
//   they send the copy engine's payloads?
// Bytes: read + written, as everywhere; pct_peak of the link as in peer.cu.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/builders/mapped_case.cuh"
#include "benchmarks/builders/peer_state.cuh"
#include "gmb/naming.hpp"
#include "gmb/sizing.hpp"
#include "kernels/coalesced.cuh"
#include "kernels/mapped.cuh"

namespace gmb {

namespace {

/// An f32 copy between here and the partner whose partner side is shifted (offset_map),
/// spread (strided_map) or cut into runs (run_map): what the coalescing rules cost over the
/// link. The local side is coalesced.
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

/// Offsets (f32 elements, up to 128 B), strides and runs on the partner's side.
void add_patterns(environment& env, const std::shared_ptr<peer_state>& state, sweep s,
                  std::vector<bench_case>& cases) {
  const std::size_t n = env.array_bytes() / sizeof(float);
  const bool full = s == sweep::kFull;
  const std::vector<std::size_t> offsets =
      full ? std::vector<std::size_t>{1, 2, 4, 8, 16, 31, 32} : std::vector<std::size_t>{1};
  const std::size_t shifted_threads = (n - kMaxOffset) / kMappedBlock * kMappedBlock;
  const std::size_t run_threads = n / 1024 * 1024;  // whole groups of 32 segments
  for (const bool pull : {true, false}) {
    const auto dir = name_param("dir", pull ? "pull" : "push");
    if (full || pull) {  // the quick sweep pulls its offsets and strides
      for (const std::size_t off : offsets) {
        cases.push_back(patterned_case(
            state,
            bench_name("peer", "copy/f32", {name_param("off", static_cast<long long>(off)), dir}),
            shifted_threads, offset_map{off}, pull));
      }
      for (const std::size_t st : {2, 4, 8, 16, 32}) {
        cases.push_back(patterned_case(
            state,
            bench_name("peer", "copy/f32", {name_param("s", static_cast<long long>(st)), dir}),
            n / st, strided_map{st}, pull));
      }
    }
    for (const unsigned run_bytes : {32u, 64u, 128u}) {
      cases.push_back(patterned_case(
          state, bench_name("peer", "copy/f32", {name_param("run", run_bytes), dir}),
          run_threads, run_map{run_bytes / unsigned(sizeof(float))}, pull));
    }
  }
}

using link_word = float4;
constexpr unsigned kLinkIlp = 4;
constexpr std::size_t kLinkTile = std::size_t(kCoalescedBlock) * kLinkIlp;

/// The f32x4 ilp:4 copy's grid, bytes and traffic (coalesced on both sides).
struct link_copy {
  std::size_t tiles;
  double bytes;
  traffic_prediction model;
  explicit link_copy(const environment& env)
      : tiles(env.array_bytes() / sizeof(link_word) / kLinkTile),
        bytes(static_cast<double>(tiles * kLinkTile * sizeof(link_word))) {
    const coalesced_map<kCoalescedBlock, kLinkIlp> map;
    const std::size_t threads = tiles * kCoalescedBlock;
    model = predict_traffic(map, threads, sizeof(link_word), access_kind::kLoad) +
            predict_traffic(map, threads, sizeof(link_word), access_kind::kStore);
  }
};

/// peer/copy/f32x4/ilp:4/dir:pull/blocks:N: the pull on N blocks only, each looping over the
/// tiles (N from a sixteenth of the SMs to eight blocks per SM).
void add_block_sweep(environment& env, const std::shared_ptr<peer_state>& state,
                     std::vector<bench_case>& cases) {
  const link_copy copy(env);
  const auto sms = static_cast<unsigned>(env.device().sms);
  // a sixteenth of the SMs to eight blocks per SM: one block keeps 16 KiB in flight, so a few
  // dozen fill a link whose round trip is about a microsecond
  for (const unsigned sixteenths : {1u, 2u, 4u, 8u, 16u, 128u}) {
    const unsigned blocks = std::max(1u, sms * sixteenths / 16);
    bench_case c;
    c.name = bench_name("peer", "copy/f32x4",
                        {name_param("ilp", kLinkIlp), name_param("dir", "pull"),
                         name_param("blocks", blocks)});
    c.prepare = [state](environment& e) { prepare_one_way(e, *state, true); };
    c.launch = [state, blocks, tiles = copy.tiles](environment& e) {
      coalesced_copy<link_word, kLinkIlp, cache_op::kDefault, store_op::kDefault>
          <<<blocks, kCoalescedBlock, 0, e.stream()>>>(state->remote.data<const link_word>(),
                                                       e.out().data<link_word>(), tiles);
    };
    c.verify = [state](environment& e) { return verify_one_way(e, *state, true); };
    c.bytes_read = c.bytes_written = copy.bytes;
    c.model = copy.model;
    c.peak_bytes_per_second = 2 * state->link_rate;  // half of the bytes cross the link
    cases.push_back(std::move(c));
  }
}

/// dir:both_pull: each GPU pulls the other's array at once: each direction carries one pull's
/// data and the other pull's read requests (dir:both pushes).
bench_case both_pull_case(environment& env, const std::shared_ptr<peer_state>& state) {
  const link_copy copy(env);
  bench_case c = both_ways_copy<link_word, kLinkIlp>(
      bench_name("peer", "copy/f32x4", {name_param("ilp", kLinkIlp), name_param("dir", "both_pull")}),
      state, copy.tiles, both_ways{false});
  c.bytes_read = c.bytes_written = 2 * copy.bytes;
  c.model = copy.model + copy.model;
  c.peak_bytes_per_second = 4 * state->link_rate;  // a quarter crosses each way
  return c;
}

/// dir:split: this GPU alone moves data both ways in one launch: tile t is pulled (the
/// partner's remote -> our out) for even t and pushed (our in -> the partner's remote_out) for
/// odd t, so its SMs split between the directions.
bench_case split_case(environment& env, const std::shared_ptr<peer_state>& state) {
  const link_copy copy(env);
  auto table = std::make_shared<slice_table<link_word>>();
  bench_case c;
  c.name = bench_name("peer", "copy/f32x4",
                      {name_param("ilp", kLinkIlp), name_param("dir", "split")});
  c.prepare = [state, table](environment& e) {
    state->make_both();
    table->from[0] = state->remote.data<const link_word>();
    table->to[0] = e.out().data<link_word>();
    table->from[1] = e.in().data<const link_word>();
    table->to[1] = state->remote_out.data<link_word>();
    state->remote.fill(kInputPattern, e.stream());
    e.in().fill(kInputPattern, e.stream());
    e.out().poison(e.stream());
    state->remote_out.poison(e.stream());
  };
  c.launch = [table, tiles = copy.tiles](environment& e) {
    sliced_copy<link_word, kLinkIlp, cache_op::kDefault, store_op::kDefault>
        <<<static_cast<unsigned>(tiles), kCoalescedBlock, 0, e.stream()>>>(*table, 2, tiles);
  };
  c.verify = [state, tiles = copy.tiles](environment& e) {
    for (unsigned k = 0; k < 2; ++k) {
      const every_nth_tile half{kLinkTile, k, 2};
      const std::string error =
          verify_mapped<link_word>(e, k == 0 ? e.out() : state->remote_out,
                                   tiles_of_slice(tiles, 2, k) * kLinkTile, half, half);
      if (!error.empty()) return (k == 0 ? "out, pulled tiles: " : "partner's out, pushed tiles: ") + error;
    }
    return std::string();
  };
  c.bytes_read = c.bytes_written = copy.bytes;
  c.model = copy.model;
  c.peak_bytes_per_second = 4 * state->link_rate;  // half of the bytes cross, half each way
  return c;
}

}  // namespace

void add_link_cases(environment& env, const std::shared_ptr<peer_state>& state, sweep s,
                    std::vector<bench_case>& cases) {
  add_patterns(env, state, s, cases);
  add_block_sweep(env, state, cases);
  cases.push_back(both_pull_case(env, state));
  cases.push_back(split_case(env, state));
  for (auto& c : bulk_link_cases(env, state)) cases.push_back(std::move(c));
}

}  // namespace gmb
