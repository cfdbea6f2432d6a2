#pragma once
// --benchmark_filter as gmembench applies it: to the names the suite gives its benchmarks,
// before Google Benchmark appends "/manual_time". A regex selects a benchmark when it finds a
// match in the name with or without that suffix, so '^copy/f32x4/ilp:1/grid:full$' and filters
// written for the suffixed names both work. As in Google Benchmark: POSIX extended syntax,
// a leading '-' negates, "" and "all" select everything.
#include <regex>
#include <stdexcept>
#include <string>

namespace gmb {

inline constexpr const char* kTimeSuffix = "/manual_time";

class name_filter {
 public:
  explicit name_filter(std::string spec = "") {
    if (!spec.empty() && spec[0] == '-') {
      negated_ = true;
      spec.erase(0, 1);
    }
    if (spec.empty() || spec == "all") spec = ".";
    try {
      regex_ = std::regex(spec, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("'" + spec + "' is not a regular expression (" + e.what() +
                                  ")");
    }
  }

  bool selects(const std::string& name) const {
    const bool found =
        std::regex_search(name, regex_) || std::regex_search(name + kTimeSuffix, regex_);
    return found != negated_;
  }

 private:
  std::regex regex_;
  bool negated_ = false;
};

}  // namespace gmb
