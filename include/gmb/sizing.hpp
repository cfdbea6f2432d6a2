#pragma once
// Working-set sizes: DRAM benchmarks use arrays of at least 8x the L2 (so the L2 holds under an
// eighth of what a kernel touches), by default 32x (so each launch's fixed start-up and drain
// cost stays small: up to +2.9% bandwidth from 8x to 32x, measured on an H200), in whole MiB
// so every kernel's tiles divide them evenly.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gmb {

inline constexpr std::size_t kMiB = std::size_t(1) << 20;
inline constexpr std::size_t kArrayGranule = kMiB;
inline constexpr std::size_t kL2Multiple = 8;          // the least a DRAM benchmark uses
inline constexpr std::size_t kDefaultL2Multiple = 32;
/// Word patterns (words.cuh) are unique below 2^31 words: larger arrays could hide errors.
inline constexpr std::size_t kMaxArrayBytes = std::size_t(8) << 30;
/// Back-to-back launches timed per iteration cover at least this many L2s of data.
inline constexpr std::size_t kL2sPerIteration = 128;

inline std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

/// How many of `tiles` fall to slice k when tile t goes to slice t % slices
/// (kernels/coalesced.cuh, sliced_copy).
inline std::size_t tiles_of_slice(std::size_t tiles, unsigned slices, unsigned k) {
  return tiles > k ? (tiles - k + slices - 1) / slices : 0;
}

/// Bytes per array for DRAM benchmarks on a device with this L2 (at most kMaxArrayBytes).
inline std::size_t default_array_bytes(std::size_t l2_bytes) {
  const std::size_t bytes = round_up(kDefaultL2Multiple * l2_bytes, kArrayGranule);
  return bytes < kMaxArrayBytes ? bytes : kMaxArrayBytes;
}

/// Parses "400M", "1G", "64MiB", "8388608": K/M/G/T (also KiB..., powers of 1024), case-free.
/// Throws std::invalid_argument with a message a user can act on.
inline std::size_t parse_bytes(const std::string& text) {
  std::size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0) throw std::invalid_argument("'" + text + "' is not a size (e.g. 400M, 1G)");
  std::string unit;
  for (std::size_t i = pos; i < text.size(); ++i) {
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  int shift = 0;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gib") shift = 30;
  else if (unit == "t" || unit == "tib") shift = 40;
  else throw std::invalid_argument("'" + text + "': unknown unit '" + unit + "' (use K, M, G)");
  const std::string digits = text.substr(0, pos);
  if (digits.size() > 15) throw std::invalid_argument("'" + text + "' is too large");
  const std::uint64_t value = std::stoull(digits);
  if (value == 0) throw std::invalid_argument("'" + text + "' is zero bytes");
  if (value > (std::uint64_t(1) << (50 - shift))) {  // 1 PiB: no GPU has that much
    throw std::invalid_argument("'" + text + "' is too large");
  }
  return static_cast<std::size_t>(value << shift);
}

/// A user's array size, rounded up to the granule every kernel needs.
inline std::size_t array_bytes_from_flag(const std::string& text) {
  const std::size_t bytes = round_up(parse_bytes(text), kArrayGranule);
  if (bytes > kMaxArrayBytes) {
    throw std::invalid_argument("'" + text + "' is more than the 8G per array that verification " +
                                "can check word by word");
  }
  return bytes;
}

/// Timed launches per iteration. On arrays of at least 8x the L2 a launch streams from DRAM
/// even right after the previous one, and the dirty lines that one launch leaves in the L2 are
/// written back inside the next, so launches back to back after one flush charge writes in
/// full but for at most one L2: with k launches of at least 128 L2s together, <= 1/128 of the
/// bytes (k = 16 at 8x, 4 at the default 32x). Smaller arrays would be L2-hot after the first
/// launch: there every launch gets its own flush.
inline int launches_per_iteration(std::size_t array_bytes, std::size_t l2_bytes) {
  if (array_bytes < kL2Multiple * l2_bytes) return 1;
  const std::size_t needed = kL2sPerIteration * l2_bytes;
  return static_cast<int>((needed + array_bytes - 1) / array_bytes);
}

}  // namespace gmb
