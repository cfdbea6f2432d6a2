#pragma once
// --gmb_peer=all|skip|only: which benchmarks run, by whether they touch another GPU. A node run
// runs the local families of every GPU at once (skip), then the peer cases one pair at a time
// (only), so no two processes share a link and no process opens a context on another's GPU.
#include <optional>
#include <string>

namespace gmb {

enum class peer_scope { kAll, kSkip, kOnly };

/// The flag's value, or nothing for a word it does not know.
inline std::optional<peer_scope> parse_peer_scope(const std::string& text) {
  if (text == "all") return peer_scope::kAll;
  if (text == "skip") return peer_scope::kSkip;
  if (text == "only") return peer_scope::kOnly;
  return std::nullopt;
}

inline const char* describe(peer_scope s) {
  return s == peer_scope::kAll ? "all" : s == peer_scope::kSkip ? "skip" : "only";
}

/// Whether a benchmark moves data between this GPU and another: the peer family
/// (peer/...) and the copy engine's reference (ref/memcpy_peer/...).
inline bool touches_another_gpu(const std::string& name) {
  return name.rfind("peer/", 0) == 0 || name.rfind("ref/memcpy_peer/", 0) == 0;
}

/// Whether `scope` keeps the benchmark `name`. (No peer case needs a local reference for its
/// ratios: a kernel copy is compared with ref/memcpy_peer, itself a peer case.)
inline bool in_peer_scope(peer_scope scope, const std::string& name) {
  switch (scope) {
    case peer_scope::kSkip:
      return !touches_another_gpu(name);
    case peer_scope::kOnly:
      return touches_another_gpu(name);
    default:
      return true;
  }
}

}  // namespace gmb
