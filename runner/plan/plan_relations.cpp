// Relations between plan values that are each in range (runner/plan/plan_reader.h, CheckRelations).
//
// Each check here is a plan that loads and runs but cannot mean what it says: a fault whose time is past
// the plan's end is never injected, one that lasts past the end is cut short without a word, a chaos
// window that ends before it starts draws nothing. Refusing them at load time keeps the report honest:
// a run that "passed" without its faults has shown nothing.
#include <string>

#include "runner/plan/plan_reader.h"

namespace rackchaos::runner::plan_yaml {
namespace {

std::string Fd(Duration d) { return FormatDuration(d); }

Status CheckFault(const Plan& plan, const FaultSpec& f, size_t i) {
  if (!plan.duration) return Status::Ok();  // the horizon follows the faults
  const Duration end = *plan.duration;
  const std::string where = Indexed("faults", i);
  if (f.at >= end) {
    return At(f.at_pos, where + ".at: " + Fd(f.at) + " is not before the plan's duration " + Fd(end) + " (" +
                            plan.duration_pos.ToString() + "): the fault would never be injected; valid: 0s to " +
                            Fd(end - Duration::Micros(1)));
  }
  if (f.duration && *f.duration > end - f.at) {
    return At(f.for_pos, where + ".for: " + Fd(*f.duration) + " from " + Fd(f.at) + " runs past the plan's duration " +
                             Fd(end) + ": valid: 1ms to " + Fd(end - f.at) +
                             ", or leave `for` out to keep the fault until the end");
  }
  return Status::Ok();
}

Status CheckChaos(const Plan& plan) {
  const ChaosSpec& c = plan.chaos;
  if (c.catalogue.empty()) return Status::Ok();
  if (c.until && *c.until <= c.from) {
    return At(c.until_pos, "chaos.until: " + Fd(*c.until) + " is not after chaos.from " + Fd(c.from) +
                               ": the window would draw no fault; valid: after " + Fd(c.from));
  }
  if (!plan.duration) return Status::Ok();
  const Duration end = *plan.duration;
  if (c.until && *c.until > end) {
    return At(c.until_pos, "chaos.until: " + Fd(*c.until) + " is after the plan's duration " + Fd(end) +
                               ": draws past the end would never be injected; valid: up to " + Fd(end));
  }
  if (c.from >= end) {
    return At(c.from_pos, "chaos.from: " + Fd(c.from) + " is not before the plan's duration " + Fd(end) +
                              ": chaos would draw no fault; valid: 0s to " + Fd(end - Duration::Micros(1)));
  }
  return Status::Ok();
}

}  // namespace

Status CheckRelations(const Plan& plan) {
  for (size_t i = 0; i < plan.faults.size(); ++i) RC_RETURN_IF_ERROR(CheckFault(plan, plan.faults[i], i));
  return CheckChaos(plan);
}

}  // namespace rackchaos::runner::plan_yaml
