// The include/gmb building blocks on a real device: buffers, flush, timer, device facts.
#include <gtest/gtest.h>

#include "gmb/device_buffer.cuh"
#include "gmb/device_info.hpp"
#include "gmb/event_timer.cuh"
#include "gmb/l2_flush.cuh"
#include "gmb/sizing.hpp"
#include "tests/device/gpu.hpp"

namespace gmb {
namespace {

TEST(DeviceInfoOnGpu, FactsComeFromTheDevice) {
  GMB_REQUIRE_GPU();
  const device_info d = query_device(0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sms, 0);
  EXPECT_GT(d.l2_bytes, 0u);
  EXPECT_GT(d.mem_clock_khz, 0);
  EXPECT_GT(d.bus_bits, 0);
  EXPECT_GT(d.peak_bytes_per_second(), 0.0);
  EXPECT_GE(d.driver_version, d.runtime_version);
}

TEST(DeviceBuffer, FillThenCheckAndPoison) {
  GMB_REQUIRE_GPU();
  device_buffer buf(kMiB);
  const word_pattern gen{0x00C0FFEEu};
  buf.fill(gen, nullptr);
  EXPECT_EQ(buf.check(gen, nullptr).count, 0u);
  const auto host = buf.copy_words_to_host(1000, 4, nullptr);
  for (std::size_t i = 0; i < host.size(); ++i) EXPECT_EQ(host[i], gen(1000 + i));

  buf.write_word(77, 0u, nullptr);
  const mismatch_report one = buf.check(gen, nullptr);
  EXPECT_EQ(one.count, 1u);
  EXPECT_EQ(one.first, 77u);

  buf.poison(nullptr);
  EXPECT_EQ(buf.check(gen, nullptr).count, buf.words());
  EXPECT_EQ(buf.check(word_constant{kPoisonWord}, nullptr).count, 0u);
}

TEST(DeviceBuffer, RejectsSizesThatAreNotWholeVectors) {
  GMB_REQUIRE_GPU();
  EXPECT_THROW(device_buffer(1000 + 4), std::invalid_argument);
}

TEST(L2Flush, IsAtLeastTwiceTheL2AndRuns) {
  GMB_REQUIRE_GPU();
  const device_info d = query_device(0);
  l2_flush flush(d.l2_bytes);
  EXPECT_GE(flush.bytes(), 2 * d.l2_bytes);
  event_timer timer;
  timer.start(nullptr);
  flush.flush(nullptr);
  timer.stop(nullptr);
  // Reading 2x L2 takes real time, far from zero and far below a second.
  EXPECT_GT(timer.seconds(), 1e-6);
  EXPECT_LT(timer.seconds(), 1.0);
}

}  // namespace
}  // namespace gmb
