#pragma once
// The naming contract of docs/design.md: family/variant/key:value/... (scripts split on it).
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

namespace gmb {

struct name_param {
  std::string key;
  std::string value;
  name_param(std::string k, std::string v) : key(std::move(k)), value(std::move(v)) {}
  name_param(std::string k, long long v) : key(std::move(k)), value(std::to_string(v)) {}
};

inline void check_name_part(const std::string& part, const char* what) {
  if (part.empty() || part.find_first_of("/: ") != std::string::npos) {
    throw std::invalid_argument(std::string("benchmark name: bad ") + what + " '" + part + "'");
  }
}

/// `variant` may have several '/'-separated parts ("f32/read"): parts without ':' before the
/// key:value parameters, as in stride/f32/read/s:8. `params`: a braced list, or a vector of
/// them built at run time.
template <class Params = std::initializer_list<name_param>>
std::string bench_name(const std::string& family, const std::string& variant,
                       const Params& params = {}) {
  check_name_part(family, "family");
  for (std::size_t from = 0;;) {
    const std::size_t slash = variant.find('/', from);
    check_name_part(variant.substr(from, slash - from), "variant");
    if (slash == std::string::npos) break;
    from = slash + 1;
  }
  std::string name = family + "/" + variant;
  for (const name_param& p : params) {
    check_name_part(p.key, "key");
    check_name_part(p.value, "value");
    name += "/" + p.key + ":" + p.value;
  }
  return name;
}

}  // namespace gmb
