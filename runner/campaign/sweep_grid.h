// The parameters a sweep grid may vary (`--grid key=v1,v2`): one table of keys, each applied to the plan
// before validation (chaos.scale, spares, checkpoint.interval) or to the loaded healer policy after it
// (healer.*). `healer=a,b` picks the policy itself.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "healer/policy.h"
#include "runner/plan/plan.h"

namespace rackchaos::runner {

struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

// "healer, chaos.scale, spares, ...": every key, for messages and --help.
std::string GridKeyList();

// Parses "key=v1,v2"; every value is checked against the key's type (kInvalidArgument naming the keys
// or the bad value).
Result<GridAxis> ParseGridAxis(const std::string& text);

// Sets a plan-level key in `plan` (kInvalidArgument when the plan lacks what the key needs, e.g.
// chaos.scale without chaos:); other keys leave it alone. `value` was checked by ParseGridAxis.
Status ApplyGridToPlan(Plan& plan, const std::string& key, const std::string& value);
// Sets a healer.* threshold in `policy`; other keys leave it alone.
void ApplyGridToPolicy(healer::Policy& policy, const std::string& key, const std::string& value);

}  // namespace rackchaos::runner
