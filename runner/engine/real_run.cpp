#include "runner/engine/real_run.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

#include "core/log.h"
#include "healer/metrics.h"
#include "reports/store.h"
#include "reports/summary.h"
#include "runner/site/clock_check.h"
#include "runner/site/ledger.h"
#include "runner/engine/live_feed.h"
#include "runner/engine/padded_names.h"
#include "runner/engine/real_timeline.h"
#include "runner/spec/safety.h"
#include "runner/engine/score.h"
#include "runner/ssh/ssh_pool.h"
#include "healer/healer.h"
#include "runner/site/ssh_backend.h"
#include "runner/site/ssh_monitor.h"
#include "runner/site/wall_clock.h"
#include "runner/engine/watch.h"

#ifndef RACKCHAOS_VERSION
#define RACKCHAOS_VERSION "0.0.0"
#endif

namespace rackchaos::runner {

Status CheckModel(const Inventory& inv, const ClusterSpec& cluster) {
  if (inv.model != cluster.model || inv.racks != cluster.racks)
    return Status::Invalid(cluster.pos.ToString() + ": the plan's cluster is " + cluster.model + " x" +
                           std::to_string(cluster.racks) + " but site inventory " + inv.path + " maps " + inv.model +
                           " x" + std::to_string(inv.racks) + "; make them agree");
  return Status::Ok();
}

namespace {

namespace fs = std::filesystem;

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// Real runs have few events and a crash must not lose them: every event is stored as it happens.
class StoringSink : public EventSink {
 public:
  StoringSink(reports::ReportStore& store, int64_t run, EventSink& tee) : store_(store), run_(run), tee_(tee) {}
  void Record(const Event& e) override {
    log_.Record(e);
    tee_.Record(e);
    Status s = store_.AppendEvents(run_, {e});
    if (!s.ok() && status_.ok()) status_ = s;
  }
  const std::vector<Event>& events() const { return log_.events(); }
  const Status& status() const { return status_; }

 private:
  reports::ReportStore& store_;
  int64_t run_;
  EventSink& tee_;  // live metrics (a LiveFeed that may do nothing)
  EventLog log_;
  Status status_;
};

std::vector<reports::ComponentRow> ComponentRows(const cluster::Topology& topo, const Inventory& inv) {
  std::vector<reports::ComponentRow> rows;
  rows.reserve(topo.size());
  const std::string site = inv.site.empty() ? "SITE" : inv.site;
  for (const cluster::Component& c : topo.components()) {
    auto t = inv.trays.find(c.name);
    std::string serial = t != inv.trays.end() && !t->second.serial.empty() ? t->second.serial : site + "-" + c.name;
    rows.push_back({c.id, c.name, cluster::KindName(c.kind), c.parent, serial});
  }
  return rows;
}

// Runs start_job or stop_job for every job of the plan; returns how many failed.
int JobActions(SshBackend& backend, const Inventory& inv, const RunSpec& spec, const std::string& action) {
  int failed = 0;
  const size_t gpus_per_tray = static_cast<size_t>(std::max(1, spec.topology.model().gpus_per_tray));
  for (const cluster::JobConfig& j : spec.jobs) {
    auto b = BindSite(inv, action);
    if (!b.ok()) return static_cast<int>(spec.jobs.size());
    b->values["job"] = j.name;
    b->values["ranks"] = std::to_string((static_cast<size_t>(j.gpus) + gpus_per_tray - 1) / gpus_per_tray);
    auto r = backend.RunHealerAction(action, *b, kNoComponent);
    if (!r.ok() || r->exit_status != 0) {
      ++failed;
      spdlog::error("{} {} failed: {}", action, j.name, r.ok() ? r->err : r.status().ToString());
    }
  }
  return failed;
}

// Records the largest clock offset as an "ssh.clock" action, and one with ok = false per host that is off.
void RecordClocks(const std::vector<HostClock>& clocks, const Clock& clock, EventSink& events) {
  const HostClock* largest = nullptr;
  for (const HostClock& c : clocks) {
    if (!largest || std::llabs(c.offset_us) > std::llabs(largest->offset_us)) largest = &c;
    if (!ClockOff(c)) continue;
    const std::string what = DescribeOffset(c) + ": its faults land that far from the others'; check NTP/PTP";
    spdlog::warn("{}", what);
    events.Record({clock.Now(), ActionTaken{"ssh.clock", kNoComponent, kNoJob, false, what}});
  }
  if (!largest) return;
  const std::string what = std::to_string(clocks.size()) + " fault host clock(s), largest offset " + DescribeOffset(*largest);
  spdlog::info("{}", what);
  events.Record({clock.Now(), ActionTaken{"ssh.clock", kNoComponent, kNoJob, true, what}});
}

RunOutcome Fail(RunOutcome out, const Status& s) {
  out.code = ExitCode::kRuntimeError;
  out.error = s.ToString();
  return out;
}

}  // namespace

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
  // Tray names in any padding (r1.tray03 on a 120-rack cluster) become the model's (runner/engine/padded_names.h).
  RC_RETURN_IF_ERROR(CanonicalTrayNames(real.inventory, spec.topology));
  const Inventory& iv = real.inventory;
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
        return At(f.pos, std::string(f.injector->name()) + " cannot run on real hosts yet: no inventory action "
                             "carries out the '" + cluster::VerbName(verb) + "' verb (actions: " + actions + ")");
      }
      auto b = BindTarget(iv, spec.topology, action, f.target);
      if (!b.ok())
        return At(f.pos, std::string(f.injector->name()) + " on " + spec.topology.TargetName(f.target) +
                             " cannot run on this site: " + b.status().message());
      hosts.insert(b->host);
      // One slot stays free for everything else (the healer, the monitor) while a group is armed.
      if (++armed_at[f.at] > iv.max_concurrent - 1)
        return At(f.pos, "more than " + std::to_string(iv.max_concurrent - 1) + " fault commands at " +
                             FormatDuration(f.at) + ": faults that share an `at` are armed together, each holding "
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
  // Live aborts need the observations they judge; a condition nothing on this site reports is refused.
  const AbortSpec& abort = spec.abort;
  if (abort.gpu_temperature)
    return At(abort.pos, "safety.abort.gpu_temperature: real mode does not read GPU temperatures yet (the "
                         "inventory has no telemetry action); remove it or run on the simulator");
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
  RunOutcome out;
  const Inventory& inv = real.inventory;
  // Stage 1: the ledger, and whatever earlier runs left applied: a new run starts from a clean site.
  const std::string ledger_path = options.ledger_path.empty() ? DefaultLedgerPath(options.db_path) : options.ledger_path;
  auto ledger = Ledger::Open(ledger_path);
  if (!ledger.ok()) return Fail(out, ledger.status());
  RecoverOptions recover_options;
  recover_options.accept_new_host_keys = options.accept_new_host_keys;
  recover_options.connect_timeout = inv.connect_timeout;
  recover_options.command_timeout = inv.command_timeout;
  auto recovered = Recover(*ledger, recover_options);
  if (!recovered.ok()) return Fail(out, recovered.status());
  for (const std::string& line : recovered->lines) spdlog::warn("recover: {}", line);
  if (recovered->failed > 0)
    return Fail(out, Status::Unavailable(std::to_string(recovered->failed) + " fault(s) left by earlier runs are still "
                                         "applied and could not be reverted; see `rackchaos recover --ledger " +
                                         ledger_path + "`"));

  // Stage 2: the run row before anything touches a host, so a crash leaves a 'running' row.
  auto store = reports::ReportStore::Open(options.db_path);
  if (!store.ok()) return Fail(out, store.status());
  reports::RunInfo info{plan.name, plan.path, plan.text, "", spec.seed, RACKCHAOS_VERSION, HostName(), "ssh",
                        LedgerWallNow(), options.command_line};
  auto run = store->BeginRun(info);
  if (!run.ok()) return Fail(out, run.status());
  out.run_id = *run;
  // At once, so a run killed from here on is one `rackchaos recover` knows about and marks aborted.
  auto ledger_run = ledger->BeginRun(options.db_path, *run);
  if (!ledger_run.ok()) return Fail(out, ledger_run.status());
  Status s = store->AddComponents(*run, ComponentRows(spec.topology, inv));
  if (!s.ok()) return Fail(out, s);
  std::vector<reports::JobRow> job_rows;
  std::vector<healer::JobInfo> job_infos;
  for (size_t i = 0; i < spec.jobs.size(); ++i) {
    const auto& j = spec.jobs[i];
    job_rows.push_back({static_cast<JobId>(i), j.name, j.gpus, j.step_time.Seconds()});
    job_infos.push_back({static_cast<JobId>(i), j.name, j.gpus, j.step_time});
  }
  if (real.healer) s = store->AddJobs(*run, job_rows);
  if (!s.ok()) return Fail(out, s);
  if (!spec.jobs.empty() && !real.healer)
    spdlog::warn("the inventory has no healer section: the plan's {} job(s) are not started; only its faults run",
                 spec.jobs.size());
  auto finish = [&](const char* status, ExitCode code, const std::string& reason) {
    (void)store->FinishRun(*run, status, ToInt(code), LedgerWallNow(), reason);
  };

  // Stage 3: every session the faults need is open and its host key checked before the first fault.
  boost::asio::io_context io;
  ssh::PoolOptions pool_options;
  pool_options.accept_new_host_keys = options.accept_new_host_keys;
  pool_options.connect_timeout = inv.connect_timeout;
  pool_options.command_timeout = inv.command_timeout;
  pool_options.max_concurrent = inv.max_concurrent;
  ssh::SshPool pool(io, pool_options);
  std::vector<ssh::HostSpec> hosts;
  for (const std::string& h : real.hosts) hosts.push_back(*SshBackend::HostOf(inv, h));
  s = pool.ConnectAll(hosts);
  if (!s.ok()) {
    finish("error", ExitCode::kRuntimeError, "SSH: " + s.message());
    (void)ledger->FinishRun(*ledger_run);
    return Fail(out, s.WithContext("before the first fault (nothing was applied)"));
  }

  // Faults land at one wall-clock instant on all their hosts: a host whose clock is off lands off.
  const std::vector<HostClock> clocks = CheckClocks(pool, real.fault_hosts);
  for (const HostClock& c : clocks) {
    if (c.status.ok()) continue;
    finish("error", ExitCode::kRuntimeError, c.status.message());
    (void)ledger->FinishRun(*ledger_run);
    return Fail(out, c.status.WithContext("before the first fault (nothing was applied)"));
  }

  // Stage 4: the faults on the wall clock until the end, or until a stop is asked.
  WallClock clock(io);
  SetLogClock(&clock);
  LiveFeed live(options.live, "ssh");
  StoringSink events(*store, *run, live);
  RecordClocks(clocks, clock, events);
  SshBackendOptions backend_options{&*ledger, *ledger_run, {}, {}};
  for (const ResolvedFault& f : spec.faults)
    if (f.duration) backend_options.durations[f.id] = *f.duration;
  for (const healer::JobInfo& j : job_infos) backend_options.job_names[j.id] = j.name;
  SshBackend backend(inv, spec.topology, pool, clock, events, backend_options);
  // The live safety watch (safety.abort, continuous gates) beside the healer, on the same observations.
  Watch watch(spec);
  RealTimeline timeline(spec, clock, backend, events, watch, {inv.arm_lead, inv.fire_lead});
  // The healer sees only what the monitor reads from the site; it acts through the inventory's commands.
  healer::Healer healer(spec.topology, clock, backend, events, spec.policy);
  SshMonitor monitor(inv, spec.topology, pool, clock, backend, events, job_infos,
                     [&timeline] { return timeline.last_injected(); });
  int job_failures = 0;
  if (watch.watches_observations()) backend.Subscribe(&watch);
  watch.ScheduleGateChecks(clock, events.events(), job_infos, inv.observe_period);
  if (real.healer) {
    backend.Subscribe(&healer);
    job_failures += JobActions(backend, inv, spec, "start_job");
    monitor.Start();
  }
  timeline.Schedule();
  // A stop file halts the run like a signal does (checked each time the clock wakes: wall time is cheap here).
  auto stop = [&watch] {
    if (StopFileExists()) RequestStop();
    return StopRequested() || watch.tripped();
  };
  while (clock.RunNext(real.horizon, stop)) {
  }
  const bool interrupted = StopRequested();
  if (interrupted && options.on_stop) options.on_stop(static_cast<int>(backend.applied()));
  const bool aborted = !interrupted && watch.tripped();
  const Time end = clock.Now();
  if (aborted) watch.RecordAbort(events, clock.Now());  // on the record before the reverts it causes

  // Stage 5: nothing stays applied, whatever happened: faults, the jobs, trays the healer still holds.
  monitor.Stop();
  if (real.healer) job_failures += JobActions(backend, inv, spec, "stop_job");
  const int revert_failures =
      timeline.RevertAll(interrupted ? "run interrupted" : aborted ? "run aborted" : "end of run");
  if (real.healer)
    for (const auto& [name, mapping] : inv.trays)
      if (auto id = spec.topology.Find(name); id && healer.IsIsolated(*id)) {
        Status r = backend.Resume(*id);
        events.Record({clock.Now(), ActionTaken{"resume", *id, kNoJob, r.ok(), "end of run: " + (r.ok() ? std::string("returned to service") : r.ToString())}});
      }
  SetLogClock(nullptr);
  if (!events.status().ok()) return Fail(out, events.status());

  // Stage 6: metrics, gates, verdict. A fault that could not be applied or reverted is an error.
  auto scored = ScoreRun(*store, *run, spec, events.events(), job_infos, end, out.gates);
  if (!scored.ok()) return Fail(out, scored.status());
  const int fault_failures = timeline.failures() + revert_failures + job_failures;
  RunEnd run_end{.interrupted = interrupted, .stop_reason = "interrupted by signal", .host_error = "", .aborted = aborted,
                 .abort_reason = watch.reason(), .failed_gate = *scored};
  if (fault_failures > 0)
    run_end.host_error = std::to_string(fault_failures) + " fault apply/revert step(s) failed on the hosts (see the "
                         "ssh.* actions in the report" + (backend.applied() ? "; run `rackchaos recover`)" : ")");
  const Verdict verdict = Decide(run_end);
  out.code = verdict.code;
  if (verdict.code == ExitCode::kRuntimeError) out.error = verdict.reason;
  finish(verdict.status, out.code, verdict.reason);
  if (live.on()) {
    auto metrics = store->ReadMetrics(*run);
    live.Finish(verdict.status, metrics.ok() ? &*metrics : nullptr);
  }
  if (backend.applied() == 0) (void)ledger->FinishRun(*ledger_run);
  auto summary = reports::RenderSummary(*store, *run);
  out.summary = summary.ok() ? *summary : summary.status().ToString();
  return out;
}

}  // namespace rackchaos::runner
