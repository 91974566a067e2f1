#include "runner/cli/dry_run.h"

#include <cstdio>
#include <iostream>
#include <sstream>

#include "core/exit_code.h"
#include "reports/escape.h"
#include "runner/cli/cli_exit.h"
#include "runner/plan/plan_loader.h"
#include "runner/cli/real_run.h"
#include "runner/spec/safety.h"

namespace rackchaos::runner {
namespace {

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string Step(const cluster::Topology& topo, const TimelineStep& s) {
  const ResolvedFault& f = *s.fault;
  std::ostringstream line;
  line << "  " << Pad(FormatDuration(s.at), 10) << (s.inject ? "inject " : "revert ") << Pad("#" + std::to_string(f.id), 6)
       << Pad(std::string(f.injector->name()), 14) << Pad(topo.TargetName(f.target), 26);
  if (s.inject) {
    line << "serves " << s.gpus << " GPU(s)";
    if (f.duration) line << ", for " << FormatDuration(*f.duration);
  }
  line << "  [active " << s.active_faults << ", GPUs impaired " << s.gpus_impaired << "]";
  if (s.inject && f.selector != topo.TargetName(f.target)) line << "  (" << f.selector << ")";
  return line.str();
}

}  // namespace

std::string RenderDryRun(const Plan& plan, const RunSpec& spec) {
  const cluster::Topology& topo = spec.topology;
  std::ostringstream out;
  out << "Dry run of " << plan.path << " (seed " << spec.seed << "): nothing is touched, no report is written\n"
      << "  cluster " << topo.model().name << " x" << topo.racks().size() << " (" << topo.gpus().size()
      << " GPUs), healer policy " << spec.policy.name << ", horizon " << FormatDuration(spec.horizon) << "\n";
  for (const auto& j : spec.jobs) out << "  job " << j.name << ": " << j.gpus << " GPUs\n";
  std::vector<TimelineStep> timeline = BuildTimeline(spec);
  out << "\nTimeline (" << spec.faults.size() << " fault(s))\n";
  for (const TimelineStep& s : timeline) out << Step(topo, s) << "\n";
  out << "  " << Pad(FormatDuration(spec.horizon), 10) << "end    faults still applied are reverted\n";
  WorstCase w = FindWorstCase(timeline);
  out << "\nWorst case at once: " << w.faults << " fault(s) at " << FormatDuration(w.faults_at) << ", " << w.gpus
      << " GPU(s) impaired at " << FormatDuration(w.gpus_at) << "\n";
  if (plan.safety.max_faults_at_once && w.faults > *plan.safety.max_faults_at_once)
    out << "  safety.max_faults_at_once " << *plan.safety.max_faults_at_once
        << ": faults past it are skipped at run time\n";
  return out.str();
}

int CmdDryRun(const std::string& path, const ValidateOptions& options, const std::string& inventory) {
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "rackchaos: %s\n", s.message().c_str());
    return ToInt(ExitCode::kBadInput);
  };
  auto plan = LoadPlan(path);
  if (!plan.ok()) return fail(plan.status());
  UseInventory(*plan, inventory);
  auto spec = ValidatePlan(*plan, options);
  if (!spec.ok()) return fail(spec.status());
  PrintWarnings(spec->warnings);
  std::cout << reports::TerminalLines(RenderDryRun(*plan, *spec));  // names from the plan: no control characters
  if (!plan->cluster.inventory.empty()) {  // real plans: every fault must map onto the site's hosts
    auto real = ValidateRealPlan(*plan, *spec);
    if (!real.ok()) return fail(real.status());
    PrintWarnings(real->warnings);
    std::cout << "Site inventory " << real->inventory.path << ": " << real->hosts.size() << " host(s) would be used\n";
  }
  return ToInt(ExitCode::kPass);
}

}  // namespace rackchaos::runner
