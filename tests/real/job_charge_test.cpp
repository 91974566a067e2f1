// What a real job's changes are charged to (runner/site/ssh_monitor.h, JobCharge); the monitor that feeds
// it runs against the rig's real jobs (tests/rig, rig:tray_pull).
#include "runner/site/ssh_monitor.h"

#include <doctest/doctest.h>

namespace rackchaos::runner {
namespace {

TEST_CASE("job charge: the last fault while applied and until the job is back at full speed after its revert") {
  JobCharge charge;
  CHECK(charge.Cause(kNoFault) == kNoFault);
  charge.See(7, /*applied=*/true, /*full_speed=*/true);  // running fine beside an applied fault
  CHECK(charge.Cause(7) == 7);                           // a slowdown now may be the fault's
  charge.See(7, /*applied=*/false, /*full_speed=*/false);  // reverted, the job still restarting
  CHECK(charge.Cause(7) == 7);                            // its restart and redone work are the fault's
  charge.See(7, /*applied=*/false, /*full_speed=*/true);  // back at full speed after the revert
  CHECK(charge.Cause(7) == kNoFault);                     // a later slow step is not the fault's
  charge.See(7, /*applied=*/false, /*full_speed=*/false);
  CHECK(charge.Cause(7) == kNoFault);  // and stays so
  CHECK(charge.Cause(8) == 8);         // a fault that landed since is charged again
  charge.See(8, /*applied=*/true, /*full_speed=*/true);
  CHECK(charge.Cause(8) == 8);
  charge.See(kNoFault, /*applied=*/false, /*full_speed=*/true);  // nothing landed yet: nothing to clear
  CHECK(charge.Cause(8) == 8);
}

}  // namespace
}  // namespace rackchaos::runner
