// A plan's `chaos:` section against its failure catalogue (validate.cpp calls these): the catalogue by name
// or by path (relative to the plan), the plan's rate overrides (`chaos.rates`), and the random faults
// drawn from it over the chaos window. Errors name file:line:column and what would be valid.
#pragma once

#include <string>

#include "cluster/failure_catalogue.h"
#include "runner/plan/plan.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

// `chaos.catalogue` as a file name to load: a shipped name as it is, a path relative to the plan's folder
// (`plan_path`'s parent) made absolute from there.
std::string CataloguePath(const ChaosSpec& chaos, const std::string& plan_path);

// The plan's catalogue with chaos.rates applied: a cause's override sets its rate per component-hour; a
// class's override then scales the class's causes so that their sum is the given rate (their proportions
// kept). A name that is neither a class nor one of the catalogue's causes fails at its position, and so
// does a class override of a class without causes.
Result<cluster::FailureCatalogue> PlanCatalogue(const ChaosSpec& chaos, const std::string& plan_path);

// Draws the chaos faults (each component of a class a renewal process at its class's rate times scale and
// the class's percentage) until `until` and appends them to spec.faults, in time order after the plan's.
Status ExpandChaos(const ChaosSpec& chaos, const std::string& plan_path, Time until, RunSpec& spec);

}  // namespace rackchaos::runner
