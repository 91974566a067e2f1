#include "runner/cli/blast_cmd.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "cluster/dependency.h"
#include "cluster/placement.h"
#include "core/exit_code.h"
#include "runner/cli/cli_exit.h"
#include "runner/plan/plan_loader.h"
#include "runner/site/padded_names.h"

namespace rackchaos::runner {
namespace {

using cluster::Topology;

Result<RunSpec> Load(const std::string& path) {
  auto plan = LoadPlan(path);
  if (!plan.ok()) return plan.status();
  return ValidatePlan(*plan, {});
}

std::string Header(const RunSpec& spec) {
  const Topology& t = spec.topology;
  return t.model().name + ", " + std::to_string(t.Domains()) + " NVLink domain(s)" +
         (t.DomainRacks() > 1 ? " of " + std::to_string(t.DomainRacks()) + " racks" : "") + ", " +
         std::to_string(t.gpus().size()) + " GPUs; NVLink domains in " +
         (t.model().adaptive_bandwidth ? "adaptive" : "full-bandwidth") + " mode";
}

// "r01.tray03: gpu0 gpu1" per tray, for a sorted GPU list.
void ListByTray(const Topology& t, const std::vector<ComponentId>& gpus, std::string& out) {
  std::map<ComponentId, std::string> per_tray;
  for (ComponentId g : gpus) per_tray[t.TrayOf(g)] += " gpu" + std::to_string(t.at(g).index);
  for (const auto& [tray, list] : per_tray) out += "    " + t.at(tray).name + ":" + list + "\n";
}

size_t CountIn(const std::vector<ComponentId>& sorted, const std::vector<ComponentId>& job_gpus) {
  size_t n = 0;
  for (ComponentId g : job_gpus) n += std::binary_search(sorted.begin(), sorted.end(), g);
  return n;
}

// The kinds of a job's groups whose traffic crosses the lost spine (the simulator's rule: groups that span
// leaf groups in its pod; for a super-spine, groups that span pods) and spend a share of the step on it:
// "DP", "PP", "DP and PP", or "" when the spine's loss does not slow the job.
std::string KindsSlowed(const Topology& t, const cluster::BlastRadius& b, const Placed& p,
                        const cluster::JobConfig& job) {
  const cluster::CommShares shares = cluster::SharesOf(job);
  auto crosses = [&](const cluster::SpineCrossing::Groups& g, double share) {
    if (share <= 0) return false;
    if (b.cross_pod_only) return g.spans_pods;
    return std::binary_search(g.pods.begin(), g.pods.end(), t.PodOfSpine(b.component));
  };
  const bool dp = crosses(p.spines.dp, shares.dp), pp = crosses(p.spines.pp, shares.pp);
  return dp && pp ? "DP and PP" : dp ? "DP" : pp ? "PP" : "";
}

}  // namespace

std::vector<Placed> InitialPlacement(const RunSpec& spec) {
  const auto placements = cluster::PlaceAtStart(spec.topology, spec.jobs, spec.spare_racks, spec.region_spare_racks);
  std::vector<Placed> out;
  for (size_t j = 0; j < placements.size(); ++j)
    out.push_back({placements[j].trays.ids(), cluster::CrossingOf(spec.topology, spec.jobs[j], placements[j])});
  return out;
}

namespace {

// The component (or NVLink port) `name` names in any padding, as plan targets may: "r1.tray3" and "r01.tray03"
// are r001.tray03 on a 120-rack cluster, "r001.tray03" is r01.tray03 on a 2-rack one.
Result<cluster::Target> ResolveIgnoringPadding(const Topology& t, const std::string& name) {
  auto target = t.ResolveTarget(name);
  if (target.ok()) return target;
  const size_t port = name.rfind(".nvlink");
  auto id = FindIgnoringPadding(t, name.substr(0, port));
  if (!id) return target;
  return t.ResolveTarget(t.at(*id).name + (port == std::string::npos ? "" : name.substr(port)));
}

}  // namespace

Result<std::string> RenderBlast(const RunSpec& spec, const std::string& target_name) {
  const Topology& t = spec.topology;
  auto target = ResolveIgnoringPadding(t, target_name);
  if (!target.ok())
    return Status::NotFound(target.status().message() + "; name a component such as " + t.at(t.gpus().front()).name +
                            ", " + t.at(t.trays().front()).name + ", " + t.at(t.racks().front()).name + ".switch1, " +
                            t.at(t.racks().front()).name + ".cdu, " + t.at(t.racks().front()).name +
                            ".shelf1.psu1 or a port " + t.at(t.gpus().front()).name + ".nvlink0");
  cluster::BlastRadius b = cluster::Blast(t, *target);
  std::string out = "Blast radius of " + t.TargetName(*target) + " (" +
                    (target->port >= 0 ? "nvlink_port" : cluster::KindName(t.at(target->component).kind)) + ")\n";
  out += "  cluster  " + Header(spec) + "\n";
  for (const std::string& w : b.why) out += "  why      " + w + "\n";
  auto trays_down = cluster::TraysOfGpus(t, b.gpus_down);
  out += "  out of service: " + std::to_string(b.gpus_down.size()) + " GPUs on " + std::to_string(trays_down.size()) +
         " trays" + (b.whole_domain ? " (a whole NVLink domain)" : "") + "\n";
  ListByTray(t, b.gpus_down, out);
  auto trays_slowed = cluster::TraysOfGpus(t, b.gpus_slowed);
  // None left (a pod's only spine): those GPUs keep their service, the jobs crossing it hang.
  const bool cut = !b.gpus_slowed.empty() && b.slowed_bandwidth <= 0;
  const std::string effect = cut ? "hang)" : "slow)";
  char frac[32];
  std::snprintf(frac, sizeof frac, "%.1f%%", b.slowed_bandwidth * 100);
  out += std::string(cut ? "  no " : "  reduced ") + b.slowed_link + " bandwidth: " +
         std::to_string(b.gpus_slowed.size()) + " GPUs on " + std::to_string(trays_slowed.size()) + " trays" +
         (b.gpus_slowed.empty() || cut ? "" : std::string(", at ") + frac) +
         (b.cross_leaf_only ? " for traffic between leaf groups (only jobs whose DP or PP groups span them " + effect
                            : "") +
         (b.cross_pod_only ? " for traffic between pods (only jobs whose DP or PP groups span pods " + effect : "") +
         "\n";
  if (!b.cross_leaf_only && !b.cross_pod_only) ListByTray(t, b.gpus_slowed, out);
  auto placement = InitialPlacement(spec);
  std::string jobs;
  size_t hit = 0;
  for (size_t j = 0; j < placement.size(); ++j) {
    std::vector<ComponentId> gpus;
    for (ComponentId tray : placement[j].trays)
      for (ComponentId g : t.GpusOfTray(tray))
        if (static_cast<int>(gpus.size()) < spec.jobs[j].gpus) gpus.push_back(g);
    size_t down = CountIn(b.gpus_down, gpus), slowed = CountIn(b.gpus_slowed, gpus);
    const bool spine = b.cross_leaf_only || b.cross_pod_only;
    const std::string kinds = spine ? KindsSlowed(t, b, placement[j], spec.jobs[j]) : "";
    if (spine && kinds.empty()) down = slowed = 0;
    if (!down && !slowed) continue;
    ++hit;
    jobs += "    " + spec.jobs[j].name + " (" + std::to_string(gpus.size()) + " GPUs): ";
    if (down) jobs += std::to_string(down) + " GPUs out of service - the job hangs and restarts from its checkpoint";
    else if (spine)
      jobs += "its " + kinds + " traffic crosses it, " + std::to_string(slowed) + " GPUs at " +
              (cut ? "no " : "reduced ") + b.slowed_link + " bandwidth - the job " + (cut ? "hangs" : "slows");
    else
      jobs += std::to_string(slowed) + " GPUs at reduced " + b.slowed_link + " bandwidth - the job slows";
    jobs += "\n";
  }
  out += "  jobs affected (placement at the start of a run): " + std::to_string(hit) + " of " +
         std::to_string(placement.size()) + "\n" + jobs;
  return out;
}

std::string RenderSpof(const RunSpec& spec, size_t threshold) {
  const Topology& t = spec.topology;
  auto spofs = cluster::FindSinglePointsOfFailure(t, threshold);
  const std::string limit = std::to_string(threshold);
  std::string out = "Single points of failure: components whose loss takes out a whole NVLink domain or more than " +
                    limit + " GPUs, or cuts more than " + limit + " GPUs off all of a link's bandwidth\n  cluster  " +
                    Header(spec) + "\n  ranked by GPUs out of service (they leave every job), then GPUs cut off " +
                    "(they keep their service: only jobs whose traffic crosses the part hang)\n";
  if (spofs.empty()) return out + "  none\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %5s  %-24s  %-12s  %8s  %7s  %-6s  %s\n", "rank", "component", "kind",
                "GPUs out", "cut off", "domain", "why");
  out += line;
  std::map<std::string, size_t> by_kind;
  for (size_t k = 0; k < spofs.size(); ++k) {
    const auto& s = spofs[k];
    const char* kind = cluster::KindName(t.at(s.component).kind);
    ++by_kind[kind];
    std::snprintf(line, sizeof line, "  %5zu  %-24s  %-12s  %8zu  %7zu  %-6s  %s\n", k + 1,
                  t.at(s.component).name.c_str(), kind, s.gpus_down, s.gpus_cut_off, s.whole_domain ? "whole" : "part",
                  s.why.c_str());
    out += line;
  }
  out += "  by kind:";
  for (const auto& [kind, n] : by_kind) out += " " + kind + " " + std::to_string(n);
  return out + "\n";
}

int CmdBlast(const BlastArgs& args) {
  auto spec = Load(args.plan);
  if (!spec.ok()) return Fail(spec.status().message());
  auto text = RenderBlast(*spec, args.component);
  if (!text.ok()) return Fail(text.status().message());
  std::cout << *text;
  return ToInt(ExitCode::kPass);
}

int CmdSpof(const BlastArgs& args) {
  auto spec = Load(args.plan);
  if (!spec.ok()) return Fail(spec.status().message());
  std::cout << RenderSpof(*spec, args.threshold);
  return ToInt(ExitCode::kPass);
}

}  // namespace rackchaos::runner
