// What a real job's changes are charged to (runner/site/ssh_monitor.h, JobCharge); the monitor that feeds
// it runs against the rig's real jobs (tests/rig, rig:tray_pull).
#include "runner/site/ssh_monitor.h"

#include <doctest/doctest.h>

namespace rackchaos::runner {
namespace {

Time S(int s) { return Duration::Seconds(s); }

TEST_CASE("job charge: the last fault while applied, and after its revert until a full-speed window after it") {
  JobCharge charge;
  CHECK(charge.Cause(kNoFault) == kNoFault);
  charge.See(7, /*applied=*/true, S(6), S(10));  // running fine beside an applied fault
  CHECK(charge.Cause(7) == 7);                   // a slowdown now may be the fault's
  charge.See(7, /*applied=*/false, std::nullopt, S(30));  // reverted (seen at 30 s), the job still restarting
  CHECK(charge.Cause(7) == 7);                           // its restart and redone work are the fault's
  charge.See(7, /*applied=*/false, S(27), S(31));  // full speed, but over a window from before the revert
  CHECK(charge.Cause(7) == 7);                     // a stall the fault caused may not show in it yet
  charge.See(7, /*applied=*/false, S(30), S(34));  // a full-speed window wholly after the revert
  CHECK(charge.Cause(7) == kNoFault);              // a later slow step is not the fault's
  charge.See(7, /*applied=*/false, std::nullopt, S(39));
  CHECK(charge.Cause(7) == kNoFault);  // and stays so
  CHECK(charge.Cause(8) == 8);         // a fault that landed since is charged again
  charge.See(8, /*applied=*/true, S(40), S(44));
  CHECK(charge.Cause(8) == 8);
  charge.See(8, /*applied=*/false, S(41), S(45));  // its revert seen at 45 s: the window began before
  CHECK(charge.Cause(8) == 8);
  charge.See(8, /*applied=*/false, S(46), S(50));
  CHECK(charge.Cause(8) == kNoFault);
}

TEST_CASE("job charge: nothing landed, nothing to clear") {
  JobCharge charge;
  charge.See(kNoFault, /*applied=*/false, S(1), S(5));
  CHECK(charge.Cause(kNoFault) == kNoFault);
  CHECK(charge.Cause(3) == 3);
}

}  // namespace
}  // namespace rackchaos::runner
