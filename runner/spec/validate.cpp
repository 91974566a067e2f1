#include "runner/spec/validate.h"

#include <filesystem>

#include <algorithm>
#include <map>

#include "core/rng.h"
#include "runner/spec/safety.h"
#include "runner/plan/selector.h"
#include "runner/spec/validate_chaos.h"
#include "runner/spec/validate_regions.h"

namespace rackchaos::runner {
namespace {

// Every name a selector may match: components, plus NVLink ports of GPUs when the selector asks for ports.
std::vector<cluster::Target> Match(const Selector& sel, const cluster::Topology& topo) {
  std::vector<cluster::Target> out;
  for (const cluster::Component& c : topo.components()) {
    if (sel.is_attribute()) {
      if (sel.attribute_key() == "kind" && sel.attribute_value() == cluster::KindName(c.kind)) out.push_back({c.id, -1});
      continue;
    }
    if (!sel.Matches(c.name)) continue;
    if (!sel.port_pattern()) {
      out.push_back({c.id, -1});
      continue;
    }
    if (c.kind != cluster::Kind::kGpu) continue;
    for (int p = 0; p < topo.model().nvlink_links_per_gpu; ++p)
      if (sel.MatchesPort(p)) out.push_back({c.id, p});
  }
  return out;
}

std::vector<cluster::Target> MatchIgnoringPadding(const std::string& text, const cluster::Topology& topo) {
  auto sel = ParseSelectorIgnoringPadding(text);
  if (!sel.ok()) return {};
  std::vector<cluster::Target> out;
  for (const cluster::Component& c : topo.components()) {
    if (!sel->Matches(UnpaddedName(c.name))) continue;
    if (!sel->port_pattern()) {
      out.push_back({c.id, -1});
      continue;
    }
    if (c.kind != cluster::Kind::kGpu) continue;
    for (int p = 0; p < topo.model().nvlink_links_per_gpu; ++p)
      if (sel->MatchesPort(p)) out.push_back({c.id, p});
  }
  return out;
}

Result<std::vector<cluster::Target>> Resolve(const FaultSpec& f, const injectors::Injector& inj,
                                             const cluster::Topology& topo, Rng& rng) {
  auto sel = ParseSelector(f.target.text);
  if (!sel.ok()) return At(f.target.pos, sel.status().message());
  if (sel->is_attribute() && sel->attribute_key() != "kind" && sel->attribute_key() != "region")
    return At(f.target.pos, "attribute selector '" + sel->attribute_key() +
                                "=' is not supported; use kind=<kind>, region=<name> or a name pattern");
  std::vector<cluster::Target> matches;
  if (sel->is_attribute() && sel->attribute_key() == "region") {
    RC_ASSIGN_OR_RETURN(matches, MatchRegion(*sel, f, inj, topo));  // validate_regions.cpp
  } else {
    matches = Match(*sel, topo);
    // Written for another padding ("r01" on a cluster of r001..r120): match by number (selector.h).
    if (matches.empty() && !sel->is_attribute()) matches = MatchIgnoringPadding(f.target.text, topo);
  }
  if (matches.empty()) {
    std::vector<std::string> names;
    for (const cluster::Component& c : topo.components()) names.push_back(c.name);
    std::string wanted = f.target.text;
    if (sel->port_pattern()) {
      bool gpu_matched = false;
      for (const cluster::Component& c : topo.components())
        gpu_matched = gpu_matched || (c.kind == cluster::Kind::kGpu && sel->Matches(c.name));
      if (gpu_matched)
        return At(f.target.pos, "target '" + f.target.text + "': a " + topo.model().name + " GPU has NVLink ports nvlink0-nvlink" +
                                    std::to_string(topo.model().nvlink_links_per_gpu - 1));
    }
    if (sel->port_pattern()) {  // suggest among GPUs, then put the port back
      size_t dot = wanted.rfind('.');
      std::string port = wanted.substr(dot);
      wanted = wanted.substr(0, dot);
      auto near = NearestNames(wanted, names, 3);
      std::string list;
      for (const auto& n : near) list += (list.empty() ? "" : ", ") + n + port;
      return At(f.target.pos, "target '" + f.target.text + "' matches nothing in " + topo.model().name +
                                  " x" + std::to_string(topo.racks().size()) + "; nearest: " + list);
    }
    std::string list;
    for (const auto& n : NearestNames(wanted, names, 3)) list += (list.empty() ? "" : ", ") + n;
    return At(f.target.pos, "target '" + f.target.text + "' matches no component; nearest: " + list);
  }
  auto pick = ParsePick(f.pick);
  if (!pick.ok()) return At(f.pick_pos, pick.status().message());
  auto chosen = ApplyPick(*pick, matches.size(), rng);
  if (!chosen.ok()) return At(f.pick_pos, chosen.status().message());
  std::vector<cluster::Target> out;
  for (size_t i : *chosen) out.push_back(matches[i]);
  return out;
}

// The simulator's checks of a job's groups and collective shares, placed at the keys that set them.
Status CheckJobShape(const JobSpec& spec, const cluster::JobConfig& c, const cluster::RackModel& model) {
  if (spec.ep_pct >= 0 && (!c.grouped || c.ep <= 1))
    return At(spec.collectives_pos, "collectives.ep is the MoE all-to-all of expert groups: it needs parallelism "
                                    "with ep > 1 (e.g. parallelism: {tp: 4, ep: 2})");
  if (spec.pp_pct >= 0 && (!c.grouped || c.pp <= 1))
    return At(spec.collectives_pos, "collectives.pp is the sends between pipeline stages: it needs parallelism "
                                    "with pp > 1 (e.g. parallelism: {tp: 4, pp: 2})");
  const cluster::CommShares sh = cluster::SharesOf(c);
  if (c.nvlink_share + c.scaleout_share >= 1 || sh.compute() <= 0)
    return At(spec.collectives_pos, "collectives add up to 100% or more of a step; keep their sum below 100");
  if (c.input_gbytes_per_s > 0 && !(model.cache_gbytes_per_s_per_gpu > 0))
    return At(spec.input_pos, "input_mb_per_s needs the storage path's read rates, and model " + model.name +
                                  " has no storage section; add one to the model or leave input_mb_per_s out");
  Status s = cluster::CheckGroups(c, model);
  return s.ok() ? s : At(spec.parallelism_pos, s.message());
}

// The checkpoint timings (cluster::CheckCheckpoint), at the key at fault: the interval, else the write that
// is too long for it, else the checkpoint map (defaults only); blocking at its own key.
Status CheckCheckpointTimes(const JobSpec& spec, const cluster::JobConfig& c) {
  std::string key;
  Status s = cluster::CheckCheckpoint(c, key);
  if (s.ok()) return s;
  const SourcePos& at = key == "blocking"                     ? spec.checkpoint_blocking_pos
                        : spec.checkpoint_interval_pos.line > 0 ? spec.checkpoint_interval_pos
                        : spec.checkpoint_write_pos.line > 0    ? spec.checkpoint_write_pos
                                                                : spec.pos;
  return At(at.line > 0 ? at : spec.pos, s.message());
}

cluster::JobConfig ToJobConfig(const JobSpec& j) {
  cluster::JobConfig c;
  c.name = j.name;
  c.gpus = j.gpus;
  c.tp = j.tp;
  c.pp = j.pp;
  // An absent dp is derived; cluster::CheckGroups says when gpus is not divisible by tp*pp (both up to 10^7).
  c.dp = j.dp > 0 ? j.dp : static_cast<int>(std::max<int64_t>(1, j.gpus / (int64_t{j.tp} * j.pp)));
  c.ep = j.ep;
  c.grouped = j.has_parallelism;
  if (j.tp_pct >= 0) c.nvlink_share = j.tp_pct / 100.0;
  if (j.dp_pct >= 0) c.scaleout_share = j.dp_pct / 100.0;
  if (c.grouped) c.ep_share = j.ep_pct >= 0 ? j.ep_pct / 100.0 : 0.10;  // [guess] MoE all-to-all left exposed
  if (c.grouped) c.pp_share = j.pp_pct >= 0 ? j.pp_pct / 100.0 : 0;     // 1F1B overlaps stage sends with compute
  c.step_time = j.step_time;
  c.checkpoint_interval = j.checkpoint_interval;
  c.checkpoint_write = j.checkpoint_write;
  c.checkpoint_blocking = j.checkpoint_blocking;
  c.checkpoint_copy = j.checkpoint_copy;
  c.restart_overhead = j.restart_overhead;
  c.collective_timeout = j.collective_timeout;
  c.min_gpus = j.min_gpus;
  c.input_gbytes_per_s = j.input_mb_per_s / 1000.0;
  c.input_from_object_store = j.input_from_object_store;
  return c;
}

Status ValidateFaults(const Plan& plan, RunSpec& spec) {
  Rng pick_rng = Rng(spec.seed).Fork("plan.pick");
  FaultId next = 1;
  for (const FaultSpec& f : plan.faults) {
    const injectors::Injector* inj = injectors::FindInjector(f.kind);
    if (!inj) return At(f.kind_pos.line ? f.kind_pos : f.pos, "unknown fault kind '" + f.kind + "'; known kinds: " + injectors::InjectorNames());
    injectors::Params params;
    for (const auto& [key, value] : f.params) {
      std::map<std::string, std::string> one{{key, value.text}};
      auto p = injectors::ParseParams(*inj, one);
      if (!p.ok()) return At(value.pos, p.status().message());
    }
    std::map<std::string, std::string> raw;
    for (const auto& [key, value] : f.params) raw[key] = value.text;
    auto all = injectors::ParseParams(*inj, raw);
    if (!all.ok()) return At(f.pos, all.status().message());
    RC_ASSIGN_OR_RETURN(auto targets, Resolve(f, *inj, spec.topology, pick_rng));
    for (const cluster::Target& t : targets) {
      Status s = inj->CheckTarget(spec.topology, t);
      if (!s.ok()) return At(f.target.pos, s.message());
      spec.faults.push_back({next++, inj, t, *all, f.at, f.duration, f.target.text, f.pos});
    }
  }
  std::stable_sort(spec.faults.begin(), spec.faults.end(),
                   [](const ResolvedFault& a, const ResolvedFault& b) { return a.at < b.at; });
  return Status::Ok();
}

// Why `gate` can have no data in any run of `plan` ("" when it can have some): a per-fault metric in a plan
// that injects nothing, a per-job metric in a plan without jobs.
std::string OnlyEmpty(const Plan& plan, const Gate& gate) {
  const GateSubject subject = SubjectOf(gate.metric);
  if (subject == GateSubject::kFaults && plan.faults.empty() && plan.chaos.catalogue.empty())
    return "the plan has no faults and no chaos";
  if (subject == GateSubject::kJobs && plan.jobs.empty()) return "the plan has no jobs";
  return "";
}

// Everything of the cluster section that Topology::Build reads, through the model (its name, NVLink mode
// and fabric tiers: ApplyNvlinkMode) and its arguments: equal keys build equal topologies.
std::string TopologyKey(const ClusterSpec& c) {
  std::string key = c.model + "\n" + c.nvlink_mode + "\n" + std::to_string(c.fabric_tiers) + "\n" +
                    std::to_string(c.racks) + "\n" + std::to_string(c.spare_trays);
  for (const cluster::RegionSpec& r : RegionSpecs(c)) key += "\n" + r.name + "=" + std::to_string(r.racks);
  return key;
}

Result<RunSpec> Validate(const Plan& plan, const ValidateOptions& options) {
  RunSpec spec;
  spec.seed = options.seed.value_or(plan.seed);
  auto model = cluster::LoadRackModel(plan.cluster.model);
  if (!model.ok()) return At(plan.cluster.pos, model.status().message());
  RC_RETURN_IF_ERROR(ApplyNvlinkMode(plan.cluster, *model));
  // A plan with cluster.inventory is checked against its site by ValidateRealPlan (runner/cli/real_run.h).
  auto build = [&] {
    return cluster::Topology::Build(*model, plan.cluster.racks, plan.cluster.spare_trays, RegionSpecs(plan.cluster));
  };
  auto build_own = [&]() -> Result<SharedTopology> {
    RC_ASSIGN_OR_RETURN(cluster::Topology built, build());
    return SharedTopology(std::move(built));
  };
  auto topo = options.topologies ? options.topologies->Get(TopologyKey(plan.cluster), build) : build_own();
  const bool odd_racks = plan.cluster.racks % model->domain_racks != 0;  // a domain spans domain_racks racks
  if (!topo.ok())
    return At(!plan.cluster.regions.empty()                            ? plan.cluster.regions_pos
              : odd_racks && plan.cluster.racks_pos.line > 0 ? plan.cluster.racks_pos
                                                             : plan.cluster.pos,
              topo.status().message());
  spec.topology = std::move(*topo);
  RC_RETURN_IF_ERROR(CheckSpareRacks(plan, spec));  // validate_regions.cpp: whole domains, per region or of the cluster
  if (!plan.cluster.regions.empty()) {  // the regions' shared link and object stores (sim_region_link.cpp)
    spec.region_link_gbytes_per_s = plan.cluster.region_link_gbytes_per_s;
    spec.region_link_background = plan.cluster.region_link_background_percent / 100.0;
    spec.object_store_gbytes_per_s = plan.cluster.object_store_gbytes_per_s;
  }

  const std::vector<int> region_free = FreeGpusPerRegion(spec);  // validate_regions.cpp
  int free_gpus = 0;
  for (int n : region_free) free_gpus += n;
  int asked = 0;
  const int per_tray = spec.topology->model().gpus_per_tray;
  for (const JobSpec& j : plan.jobs) {
    if (j.min_gpus % per_tray != 0)  // a shrunk job runs on whole trays
      return At(j.elastic_pos, "elastic.min_gpus " + std::to_string(j.min_gpus) + " is not a multiple of the " +
                                   std::to_string(per_tray) + " GPUs per tray of " + spec.topology->model().name +
                                   "; a shrunk job runs on whole trays (e.g. min_gpus: " +
                                   std::to_string(std::max(per_tray, j.min_gpus / per_tray * per_tray)) + ")");
    asked += j.gpus;
    spec.jobs.push_back(ToJobConfig(j));
    RC_RETURN_IF_ERROR(CheckJobShape(j, spec.jobs.back(), spec.topology->model()));
    RC_RETURN_IF_ERROR(CheckCheckpointTimes(j, spec.jobs.back()));
    RC_RETURN_IF_ERROR(SetCopyTime(plan.cluster, j, spec.jobs.back()));
    RC_RETURN_IF_ERROR(CheckJobFitsRegion(j, spec.jobs.back(), spec, region_free));
    if (asked > free_gpus)
      return At(j.pos, "the jobs ask for " + std::to_string(asked) + " GPUs but the cluster has " +
                           std::to_string(free_gpus) + " outside its spare trays" +
                           (spec.spare_racks > 0 ? " and spare racks" : ""));
  }
  RC_RETURN_IF_ERROR(ValidateFaults(plan, spec));
  if (!plan.chaos.catalogue.empty()) {
    std::optional<Time> until = plan.chaos.until ? plan.chaos.until : plan.duration;
    if (!until) return At(plan.chaos.pos, "chaos needs an end: set chaos.until or the plan's duration (e.g. duration: 7d)");
    RC_RETURN_IF_ERROR(ExpandChaos(plan.chaos, plan.path, *until, spec));  // validate_chaos.cpp
  }

  std::string policy_name = options.healer_policy.empty() ? plan.healer.policy : options.healer_policy;
  // A policy file named by the plan is relative to the plan, like its inventory.
  if (options.healer_policy.empty() && (policy_name.ends_with(".yaml") || policy_name.ends_with(".yml")) &&
      std::filesystem::path(policy_name).is_relative())
    policy_name = (std::filesystem::path(plan.path).parent_path() / policy_name).lexically_normal().string();
  auto policy = healer::LoadPolicy(policy_name);
  if (!policy.ok()) {
    if (!options.healer_policy.empty()) return Status::Invalid("--healer: " + policy.status().message());
    return At(plan.healer.pos, policy.status().message());
  }
  spec.policy = std::move(*policy);
  if (spec.policy.shrink && !plan.cluster.inventory.empty())
    for (const JobSpec& j : plan.jobs)
      if (j.min_gpus > 0)
        return At(j.elastic_pos, "job '" + j.name + "' is elastic and policy '" + spec.policy.name +
                                     "' sets remediation.shrink, which only the simulator does: real mode cannot restart "
                                     "a job on fewer GPUs; remove elastic or use a policy with shrink: false");

  if (spec.spare_racks > 0 && !plan.cluster.inventory.empty())
    return At(plan.cluster.spares_pos,
              "cluster.spares only applies to simulated runs: on real racks the site's "
              "scheduler owns spare capacity; remove spares or the inventory");

  for (const Expectation& e : plan.expect) {
    auto g = ParseGate(e.text);
    if (!g.ok()) return At(e.pos, g.status().message());
    g->continuous = e.continuous;
    g->allow_empty = e.allow_empty;
    if (std::string why = OnlyEmpty(plan, *g); !why.empty() && !e.allow_empty)
      spec.warnings.push_back(e.pos.ToString() + ": gate '" + e.text + "' can only be empty: " + why +
                              "; it will fail with no data (add allow_empty: true if that is meant)");
    if (e.continuous) {
      Status c = CheckContinuous(*g);
      if (!c.ok()) return At(e.pos, c.message());
    }
    spec.gates.push_back(*g);
  }
  // Default horizon: an hour past the last fault's end, so recovery has time to show.
  Time last{};
  for (const ResolvedFault& f : spec.faults) last = std::max(last, f.at + f.duration.value_or(Duration{}));
  spec.horizon = plan.duration.value_or(last + Duration::Hours(1));
  spec.max_faults_at_once = plan.safety.max_faults_at_once;
  spec.abort = plan.safety.abort;
  RC_RETURN_IF_ERROR(CheckSafety(plan, spec));
  return spec;
}

}  // namespace

Status ApplyNvlinkMode(const ClusterSpec& cluster, cluster::RackModel& model) {
  model.fabric_tiers = cluster.fabric_tiers;  // cluster.fabric.tiers (range-checked by the loader)
  if (cluster.nvlink_mode.empty()) return Status::Ok();
  if (cluster.nvlink_mode != "full" && cluster.nvlink_mode != "adaptive")
    return At(cluster.pos, "cluster.nvlink_mode '" + cluster.nvlink_mode + "' is not a mode; valid: full, adaptive");
  model.adaptive_bandwidth = cluster.nvlink_mode == "adaptive";
  return Status::Ok();
}

Result<SharedTopology> TopologyCache::Get(const std::string& key,
                                          const std::function<Result<cluster::Topology>()>& build) {
  // Held while building: a second sweep worker asking for the same cluster waits for the first's.
  std::lock_guard lock(mu_);
  for (auto it = kept_.begin(); it != kept_.end(); ++it)
    if (it->first == key) {
      SharedTopology found = it->second;
      kept_.erase(it);
      kept_.emplace_back(key, found);  // the newest
      return found;
    }
  RC_ASSIGN_OR_RETURN(cluster::Topology built, build());
  if (kept_.size() >= kKeep) kept_.erase(kept_.begin());
  kept_.emplace_back(key, SharedTopology(std::move(built)));
  return kept_.back().second;
}

Result<RunSpec> ValidatePlan(const Plan& plan, const ValidateOptions& options) {
  // Messages quote the plan's own values (targets, kinds, names), which may hold newlines.
  auto spec = Validate(plan, options);
  if (!spec.ok()) return OneLine(spec.status());
  return spec;
}

}  // namespace rackchaos::runner
