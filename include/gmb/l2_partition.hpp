#pragma once
// What the L2 partition probe's walks say (benchmarks/l2_partition.cu): each SM's time per
// step on its first walk over lines the home SM loaded and on its second walk over the same
// lines, split into the SMs that see the lines as near as the home SM does and those that see
// them farther (the other partition's half), and the counters the probe reports.
// Host only: the host tests check the split.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gmb {

/// One SM's walks, per step: the first over lines the home SM loaded, the second over the
/// same lines again (where its first walk left them).
struct partition_walk {
  double first_ns;
  double again_ns;
  double again_cycles;
};

/// The value that splits `values` into a low and a high group with the least variance within
/// them (Otsu's split of sorted values); nullopt with fewer than two values, or where the
/// high group's mean is below `min_ratio` times the low group's (one group).
inline std::optional<double> two_group_threshold(std::vector<double> values, double min_ratio) {
  const std::size_t n = values.size();
  if (n < 2) return std::nullopt;
  std::sort(values.begin(), values.end());
  double total = 0;
  for (double v : values) total += v;
  double low_sum = 0, best = -1, low_mean = 0, high_mean = 0;
  std::size_t split = 0;
  for (std::size_t k = 1; k < n; ++k) {
    low_sum += values[k - 1];
    const double m0 = low_sum / double(k), m1 = (total - low_sum) / double(n - k);
    const double between = double(k) * double(n - k) * (m1 - m0) * (m1 - m0);
    if (between > best) best = between, split = k, low_mean = m0, high_mean = m1;
  }
  if (high_mean < min_ratio * low_mean) return std::nullopt;
  return (values[split - 1] + values[split]) / 2;
}

inline double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// The far group, the SMs above the split of the ratios first walk / second walk into two
/// groups (two_group_threshold), counts only where its mean ratio is at least 10 % above the
/// other group's (one L2's SMs differ by a few % from one another), it holds at least an eighth
/// of the SMs (one slow SM is noise, not a partition) and the home SM, the first (which read
/// the lines), is not in it; else no SM is far.
inline constexpr double kFarGroupRatio = 1.1;
inline constexpr std::size_t kFarGroupShare = 8;

/// Which SMs are far by that rule (`ratio`: first walk / second walk, the home SM's first).
inline std::vector<bool> far_group(const std::vector<double>& ratio) {
  std::vector<bool> far(ratio.size(), false);
  const std::optional<double> threshold = two_group_threshold(ratio, kFarGroupRatio);
  if (!threshold || ratio[0] > *threshold) return far;
  std::size_t count = 0;
  for (std::size_t i = 0; i < ratio.size(); ++i) {
    far[i] = ratio[i] > *threshold;
    count += far[i] ? 1 : 0;
  }
  if (count * kFarGroupShare < ratio.size()) far.assign(ratio.size(), false);
  return far;
}

/// The probe's counters, ns per step: the second walks' median (latency_ns, latency_cycles:
/// the near L2), their least and most over the SMs; the first walks' median over the SMs that
/// are not far (far_group) and over the far ones, the far ones' least and most, and how many
/// (0 where every SM sees the lines alike: no far counters). `sms` in rank order, the home
/// SM's first.
inline std::vector<std::pair<std::string, double>> partition_counters(
    const std::vector<partition_walk>& sms) {
  std::vector<double> again, cycles, ratio;
  for (const partition_walk& w : sms) {
    again.push_back(w.again_ns);
    cycles.push_back(w.again_cycles);
    ratio.push_back(w.again_ns > 0 ? w.first_ns / w.again_ns : 0);
  }
  std::vector<std::pair<std::string, double>> out{
      {"latency_ns", median_of(again)},
      {"latency_cycles", median_of(cycles)},
      {"l2_near_ns_min", again.empty() ? 0 : *std::min_element(again.begin(), again.end())},
      {"l2_near_ns_max", again.empty() ? 0 : *std::max_element(again.begin(), again.end())}};
  const std::vector<bool> far = far_group(ratio);
  std::vector<double> home_side, far_side;
  for (std::size_t i = 0; i < sms.size(); ++i) {
    (far[i] ? far_side : home_side).push_back(sms[i].first_ns);
  }
  out.push_back({"l2_first_ns", median_of(home_side)});
  out.push_back({"l2_far_side_sms", double(far_side.size())});
  if (!far_side.empty()) {
    out.push_back({"l2_first_far_side_ns", median_of(far_side)});
    const auto [least, most] = std::minmax_element(far_side.begin(), far_side.end());
    out.push_back({"l2_first_far_side_ns_min", *least});
    out.push_back({"l2_first_far_side_ns_max", *most});
  }
  return out;
}

}  // namespace gmb
