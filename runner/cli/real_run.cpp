#include "runner/cli/real_run.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "runner/site/host_maps.h"
#include "runner/site/ledger.h"
#include "runner/site/padded_names.h"
#include "runner/site/ssh_backend.h"
#include "runner/site/ssh_monitor.h"
#include "runner/site/wall_clock.h"
#include "runner/ssh/ssh_pool.h"

namespace rackchaos::runner {

namespace fs = std::filesystem;

void UseInventory(Plan& plan, const std::string& inventory) {
  if (!inventory.empty()) plan.cluster.inventory = fs::absolute(inventory).lexically_normal().string();
}

Status CheckModel(const Inventory& inv, const ClusterSpec& cluster) {
  if (inv.model != cluster.model || inv.racks != cluster.racks)
    return Status::Invalid(cluster.pos.ToString() + ": the plan's cluster is " + cluster.model + " x" +
                           std::to_string(cluster.racks) + " but site inventory " + inv.path + " maps " + inv.model +
                           " x" + std::to_string(inv.racks) + "; make them agree");
  return Status::Ok();
}

Result<RealSpec> ValidateRealPlan(const Plan& plan, const RunSpec& spec) {
  RealSpec real;
  fs::path path = plan.cluster.inventory;
  if (path.is_relative()) path = fs::path(plan.path).parent_path() / path;
  auto inv = LoadInventory(path.lexically_normal().string());
  if (!inv.ok()) {
    if (inv.status().code() == StatusCode::kInvalidArgument) return inv.status();
    return At(plan.cluster.pos, "cluster.inventory: " + inv.status().message());
  }
  real.inventory = std::move(*inv);
  RC_RETURN_IF_ERROR(CheckModel(real.inventory, plan.cluster));
  // Tray names in any padding (r1.tray03 on a 120-rack cluster) become the model's (runner/site/padded_names.h).
  RC_RETURN_IF_ERROR(CanonicalTrayNames(real.inventory, spec.topology));
  const Inventory& iv = real.inventory;
  RC_RETURN_IF_ERROR(CheckObserve(iv, spec.topology));
  // Once, before anything runs: every fault's verb is one this site can do on this target.
  std::set<std::string> hosts;
  std::map<Time, int> armed_at;  // apply commands armed at once, per `at` (each holds a session slot)
  for (const ResolvedFault& f : spec.faults) {
    std::vector<cluster::Verb> verbs = VerbsForTarget(f.injector->name(), spec.topology, f.target);
    if (verbs.empty()) verbs = f.injector->verbs();
    for (cluster::Verb verb : verbs) {
      const std::string action = ActionFor(verb);
      if (action.empty()) {
        std::string actions;
        for (const std::string& a : ActionNames()) actions += (actions.empty() ? "" : ", ") + a;
        return At(f.pos, std::string(f.injector->name()) +
                             " cannot run on real hosts yet: no inventory action "
                             "carries out the '" +
                             cluster::VerbName(verb) + "' verb (actions: " + actions + ")");
      }
      auto b = BindTarget(iv, spec.topology, action, f.target);
      if (!b.ok())
        return At(f.pos, std::string(f.injector->name()) + " on " + spec.topology->TargetName(f.target) +
                             " cannot run on this site: " + b.status().message());
      hosts.insert(b->host);
      // One slot stays free for everything else (the healer, the monitor) while a group is armed.
      if (++armed_at[f.at] > iv.max_concurrent - 1)
        return At(f.pos, "more than " + std::to_string(iv.max_concurrent - 1) + " fault commands at " +
                             FormatDuration(f.at) +
                             ": faults that share an `at` are armed together, each holding "
                             "an SSH session slot until it lands, and ssh.max_concurrent is " +
                             std::to_string(iv.max_concurrent) + " (raise it, or spread the faults)");
    }
  }
  real.fault_hosts.assign(hosts.begin(), hosts.end());
  // The healer runs when the site can be observed; the plan's jobs then need the job actions too.
  real.healer = iv.actions.count("observe_tray") > 0;
  if (real.healer) {
    for (const std::string& h : SshMonitor::Hosts(iv)) hosts.insert(h);
    if (!plan.jobs.empty())
      for (const char* action : {"start_job", "stop_job", "observe_jobs"})
        if (!iv.actions.count(action))
          return At(plan.jobs.front().pos, std::string("the plan has jobs but site inventory ") + iv.path +
                                               " defines no healer." + action + " command");
  }
  // Remediation steps the policy turns on but the site cannot carry out: the run goes ahead without them.
  if (real.healer) {
    const healer::Policy& policy = spec.policy;
    auto missing = [&](bool on, const char* key, const char* action, const char* what) {
      if (on && !iv.actions.count(action))
        real.warnings.push_back("healer policy " + policy.name + " has remediation." + key +
                                " on but site inventory " + iv.path + " defines no healer." + action +
                                " command: the healer will not " + what +
                                " on this site (it diagnoses the tray without it); define one, or turn the key off");
    };
    missing(policy.reboot, "reboot", "reboot", "reboot a node whose Xid asks for it (Xid 79 ...)");
    missing(policy.gpu_reset, "gpu_reset", "gpu_reset", "reset a GPU whose Xid asks for it (Xid 48 ...)");
  }
  // Live aborts need the observations they judge; a condition nothing on this site reports is refused.
  const AbortSpec& abort = spec.abort;
  if (abort.gpu_temperature && !InventoryObserves(iv, cluster::Metric::kGpuTemperature))
    return At(abort.pos,
              "safety.abort.gpu_temperature needs GPU temperatures: site inventory " + iv.path +
                  " configures no source of them; add `observe: {gpu: {tool: nvidia-smi}}` (or dcgmi, a bmc "
                  "point with metric gpu_temperature, or prometheus providing gpu_telemetry), remove the limit, or "
                  "run on the simulator");
  if (abort.gpus_offline && !iv.actions.count("observe_tray"))
    return At(abort.pos, "safety.abort.gpus_offline needs heartbeats: site inventory " + iv.path +
                             " defines no healer.observe_tray command");
  if (abort.jobs_down && !iv.actions.count("observe_jobs"))
    return At(abort.pos, "safety.abort.jobs_down needs the scheduler's job list: site inventory " + iv.path +
                             " defines no healer.observe_jobs command");
  real.hosts.assign(hosts.begin(), hosts.end());
  Time last{};
  for (const ResolvedFault& f : spec.faults) last = std::max(last, f.at + f.duration.value_or(Duration{}));
  real.horizon = plan.duration.value_or(last);
  return real;
}

RunOutcome ExecuteRealRun(const Plan& plan, const RunSpec& spec, const RealSpec& real, const RealRunOptions& options) {
  const Inventory& inv = real.inventory;
  boost::asio::io_context io;
  ssh::PoolOptions pool_options;
  pool_options.accept_new_host_keys = options.accept_new_host_keys;
  pool_options.connect_timeout = inv.connect_timeout;
  pool_options.command_timeout = inv.command_timeout;
  pool_options.max_concurrent = inv.max_concurrent;
  ssh::SshPool pool(io, pool_options);
  WallClock clock(io);
  // Real runs have few events and a crash must not lose one: each is stored as it happens.
  RecordingSink events(RecordingSink::Mode::kWriteThrough);
  SshBackendOptions backend_options;
  for (const ResolvedFault& f : spec.faults)
    if (f.duration) backend_options.durations[f.id] = *f.duration;
  backend_options.ledger_path = options.ledger_path.empty() ? DefaultLedgerPath(options.db_path) : options.ledger_path;
  backend_options.accept_new_host_keys = options.accept_new_host_keys;
  backend_options.hosts = real.hosts;
  backend_options.fault_hosts = real.fault_hosts;
  SshBackend backend(inv, spec.topology, pool, clock, events, std::move(backend_options));
  RunOptions run_options;
  run_options.db_path = options.db_path;
  run_options.command_line = options.command_line;
  run_options.on_stop = options.on_stop;
  run_options.live = options.live;
  backend.PrepareRun(options.db_path);  // in the ledger before the run row exists (recover finds it)
  run_options.ledger = backend.LedgerOfRun();  // and the row names it, so recover finds the row exactly
  run_options.ledger_run = backend.LedgerRun();
  return RunPlan(plan, spec, {backend, clock, events, real.horizon, inv.observe_period}, run_options);
}

}  // namespace rackchaos::runner
