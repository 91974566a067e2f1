// The clock check's verdict and wording (the probe itself runs in real_tests against the lab).
#include "runner/site/clock_check.h"

#include <doctest/doctest.h>

namespace rackchaos::runner {
namespace {

HostClock At(int64_t offset_us, int64_t uncertainty_us) { return {"h07", Status::Ok(), offset_us, uncertainty_us}; }

TEST_CASE("clock: a host is off only when it is surely more than 10 ms off") {
  CHECK(ClockOff(At(15000, 2000)));
  CHECK(ClockOff(At(-30000, 1000)));
  CHECK_FALSE(ClockOff(At(11000, 2000)));  // could be 9 ms
  CHECK_FALSE(ClockOff(At(-9000, 0)));
  CHECK_FALSE(ClockOff({"h07", Status::NotSupported("no bash 5"), 50000, 0}));  // failed probes say so themselves
}

TEST_CASE("clock: the offset is described with its sign and uncertainty") {
  CHECK(DescribeOffset(At(1204000, 2100)) == "h07: clock 1204.0 ms ahead of the runner's (±2.1 ms)");
  CHECK(DescribeOffset(At(-340, 120)) == "h07: clock 0.3 ms behind the runner's (±0.1 ms)");
}

}  // namespace
}  // namespace rackchaos::runner
