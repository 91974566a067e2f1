#include "runner/engine/run.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>

#include "cluster/sim_backend.h"
#include "core/clock.h"
#include "core/log.h"
#include "healer/healer.h"
#include "healer/metrics.h"
#include "reports/store.h"
#include "reports/summary.h"
#include "runner/spec/safety.h"
#include "runner/engine/live_feed.h"
#include "runner/engine/pacer.h"
#include "runner/engine/score.h"
#include "runner/engine/watch.h"

#ifndef RACKCHAOS_VERSION
#define RACKCHAOS_VERSION "0.0.0"
#endif

namespace rackchaos::runner {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnStopSignal(int) { g_stop.store(true); }

// Wall-clock stamps are for the run row only (never for events), so runs stay reproducible.
std::string WallNow() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// Keeps every event for the metrics and flushes them to the store in batches.
class RecordingSink : public EventSink {
 public:
  RecordingSink(reports::ReportStore& store, int64_t run, EventSink& tee) : store_(store), run_(run), tee_(tee) {}
  void Record(const Event& e) override {
    log_.Record(e);
    tee_.Record(e);
    if (log_.events().size() - flushed_ >= kBatch) (void)Flush();
  }
  Status Flush() {
    if (flushed_ == log_.events().size() || !status_.ok()) return status_;
    // One batch buffer for the whole run: a fresh 20,000-event vector per flush faulted in new pages each time.
    batch_.assign(log_.events().begin() + static_cast<long>(flushed_), log_.events().end());
    status_ = store_.AppendEvents(run_, batch_);
    if (status_.ok()) flushed_ = log_.events().size();
    return status_;
  }
  const std::vector<Event>& events() const { return log_.events(); }

 private:
  static constexpr size_t kBatch = 20000;
  reports::ReportStore& store_;
  int64_t run_;
  EventSink& tee_;  // live metrics (a LiveFeed that may do nothing)
  EventLog log_;
  std::vector<Event> batch_;  // the events being flushed
  size_t flushed_ = 0;
  Status status_;
};

// The components by reference to the topology's names; every serial is "SIM-<model>-" + name, left empty
// here and derived by the store from the prefix (no 500,000 strings built at 1,778 racks).
std::vector<reports::ComponentRef> ComponentRows(const cluster::Topology& topo) {
  std::vector<reports::ComponentRef> rows;
  rows.reserve(topo.size());
  for (const cluster::Component& c : topo.components())
    rows.push_back({c.id, c.name, cluster::KindName(c.kind), c.parent, {}});
  return rows;
}

// The faults that are applied now, so that they can be reverted at the end or on a stop.
struct Ledger {
  struct Entry {
    const ResolvedFault* fault;
    injectors::Applied applied;
    TimerId revert_timer = 0;
  };
  std::map<FaultId, Entry> open;
  int injected = 0;
};

void ScheduleFaults(const RunSpec& spec, VirtualClock& clock, cluster::Backend& backend, EventSink& events,
                    Ledger& ledger, Watch& watch) {
  const cluster::Topology& topo = spec.topology;
  for (const ResolvedFault& f : spec.faults) {
    clock.CallAt(f.at, [&, fp = &f] {
      if (spec.max_faults_at_once && static_cast<int>(ledger.open.size()) >= *spec.max_faults_at_once) {
        // Safety: the fault is not applied; the skip is an action on the record, with the reason.
        std::string why = "fault #" + std::to_string(fp->id) + " " + std::string(fp->injector->name()) + " on " +
                          topo.TargetName(fp->target) + " skipped: " + std::to_string(ledger.open.size()) +
                          " faults active, safety.max_faults_at_once " + std::to_string(*spec.max_faults_at_once);
        events.Record({clock.Now(), ActionTaken{"safety", fp->target.component, kNoJob, false, why}});
        spdlog::warn("{}", why);
        return;
      }
      auto applied = fp->injector->Apply(backend, topo, fp->target, fp->params, fp->id);
      std::string name = topo.TargetName(fp->target);
      if (!applied.ok()) {
        spdlog::error("fault #{} {} on {} failed: {}", fp->id, fp->injector->name(), name, applied.status().ToString());
        return;
      }
      events.Record({clock.Now(), FaultInjected{fp->id, std::string(fp->injector->name()), fp->target.component,
                                                fp->target.port, fp->selector, applied->detail}});
      spdlog::info("fault #{} {} on {} ({})", fp->id, fp->injector->name(), name, applied->detail);
      Ledger::Entry entry{fp, *applied, 0};
      ++ledger.injected;
      if (fp->duration) {
        entry.revert_timer = clock.CallAfter(*fp->duration, [&, fp] {
          Ledger::Entry e = ledger.open[fp->id];
          ledger.open.erase(fp->id);
          Status s = fp->injector->Revert(backend, topo, fp->target, e.applied, fp->id);
          events.Record({clock.Now(), FaultReverted{fp->id, s.ok() ? "after " + FormatDuration(*fp->duration) : s.ToString()}});
          spdlog::info("fault #{} reverted", fp->id);
        });
      }
      ledger.open[fp->id] = entry;
      watch.OnFaultsActive(ledger.open.size(), clock.Now());
    });
  }
}

void RevertAll(const RunSpec& spec, VirtualClock& clock, cluster::Backend& backend, EventSink& events, Ledger& ledger,
               const std::string& why) {
  for (auto& [id, e] : ledger.open) {
    if (e.revert_timer) clock.Cancel(e.revert_timer);
    Status s = e.fault->injector->Revert(backend, spec.topology, e.fault->target, e.applied, id);
    events.Record({clock.Now(), FaultReverted{id, s.ok() ? why : why + ": " + s.ToString()}});
  }
  ledger.open.clear();
}

constexpr uint64_t kStopFileEvery = 10000;
constexpr uint64_t kProgressEvery = 1024;

RunProgress Progress(const RunSpec& spec, const VirtualClock& clock, const cluster::SimBackend& sim, const Ledger& ledger) {
  RunProgress p{clock.Now(), spec.horizon, ledger.injected, 0, static_cast<int>(spec.jobs.size())};
  for (size_t j = 0; j < spec.jobs.size(); ++j) p.jobs_up += sim.JobStateOf(static_cast<JobId>(j)) == JobState::kRunning;
  return p;
}

RunOutcome Fail(RunOutcome out, const Status& s) {
  out.code = ExitCode::kRuntimeError;
  out.error = s.ToString();
  return out;
}

}  // namespace

void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}
bool StopRequested() { return g_stop.load(); }
void RequestStop() { g_stop.store(true); }

RunOutcome ExecuteRun(const Plan& plan, const RunSpec& spec, const RunOptions& options) {
  RunOutcome out;
  // Stage 1: the store and the run row, before anything happens, so a crash leaves a 'running' row.
  auto store = reports::ReportStore::Open(options.db_path);
  if (!store.ok()) return Fail(out, store.status());
  reports::RunInfo info{plan.name, plan.path, plan.text, "", spec.seed, RACKCHAOS_VERSION, HostName(), "sim",
                        WallNow(), options.command_line};
  auto run = store->BeginRun(info);
  if (!run.ok()) return Fail(out, run.status());
  out.run_id = *run;
  std::vector<reports::JobRow> job_rows;
  std::vector<healer::JobInfo> job_infos;
  for (size_t i = 0; i < spec.jobs.size(); ++i) {
    const auto& j = spec.jobs[i];
    job_rows.push_back({static_cast<JobId>(i), j.name, j.gpus, j.step_time.Seconds()});
    job_infos.push_back({static_cast<JobId>(i), j.name, j.gpus, j.step_time});
  }
  Status s = store->AddComponents(*run, ComponentRows(spec.topology), "SIM-" + spec.topology.model().name + "-");
  if (s.ok()) s = store->AddJobs(*run, job_rows);
  if (!s.ok()) return Fail(out, s);

  // Stage 2: the simulated cluster and the healer, wired through observations only.
  VirtualClock clock;
  SetLogClock(&clock);
  LiveFeed live(options.live, "sim");
  RecordingSink events(*store, *run, live);
  Rng rng(spec.seed);
  cluster::SimOptions sim_options;
  sim_options.shrink_elastic = spec.policy.shrink;  // the scheduler side of remediation.shrink
  sim_options.spare_racks = spec.spare_racks;
  sim_options.region_spare_racks = spec.region_spare_racks;
  sim_options.region_link_gbytes_per_s = spec.region_link_gbytes_per_s;
  sim_options.region_link_background = spec.region_link_background;
  sim_options.object_store_gbytes_per_s = spec.object_store_gbytes_per_s;
  cluster::SimBackend sim(spec.topology, clock, rng.Fork("sim"), events, sim_options);
  for (const auto& j : spec.jobs) {
    auto id = sim.AddJob(j);
    if (!id.ok()) return Fail(out, id.status());
  }
  healer::Healer healer(spec.topology, clock, sim, events, spec.policy);
  sim.Subscribe(&healer);

  // The live safety watch: abort conditions on observations, continuous gates on the metrics so far.
  Watch watch(spec);
  if (watch.watches_observations()) sim.Subscribe(&watch);
  watch.ScheduleGateChecks(clock, events.events(), job_infos);

  // Stage 3: faults on the timeline, then the clock to the horizon (or until a stop is asked).
  Ledger ledger;
  ScheduleFaults(spec, clock, sim, events, ledger, watch);
  sim.Start();
  bool interrupted = false;
  bool stop_file = false;
  // A test's interrupt_at stops the clock there, not at the first event after it (events can be hours apart).
  const Time limit = options.interrupt_at ? std::min(*options.interrupt_at, spec.horizon) : spec.horizon;
  const Duration progress_step{std::max<int64_t>(spec.horizon.us / 100, 1)};
  Time next_progress = progress_step;
  Pacer pacer(options.pace);
  for (uint64_t steps = 1;; ++steps) {
    const Time allowed = pacer.Allowed(limit);
    if (!clock.RunNext(allowed)) {
      if (allowed >= limit) break;
      // Paced, and ahead of the wall clock: what happened so far goes to the store (serve's live page
      // polls it) and to the live metrics, then a short wait.
      (void)events.Flush();
      live.Tick(events.events(), spec.topology, job_infos, clock.Now());
      pacer.Wait();
      if (StopRequested()) {
        interrupted = true;
        break;
      }
      continue;
    }
    if (live.on()) live.Tick(events.events(), spec.topology, job_infos, clock.Now());
    // The stop file is looked at every kStopFileEvery events: cheap, and the same events on every replay.
    stop_file = steps % kStopFileEvery == 0 && StopFileExists();
    if (stop_file || StopRequested()) {
      interrupted = true;
      if (options.on_stop) options.on_stop(static_cast<int>(ledger.open.size()));
      break;
    }
    if (watch.tripped()) break;
    // Every kProgressEvery events or 1% of the horizon, whichever comes first: quiet stretches of a
    // long run can be days of simulated time with few events.
    if (options.progress && (steps % kProgressEvery == 0 || clock.Now() >= next_progress)) {
      options.progress(Progress(spec, clock, sim, ledger));
      next_progress = clock.Now() + progress_step;
    }
  }
  // The clock reached interrupt_at (not a stop or an abort first): as if SIGINT arrived then.
  if (!interrupted && !watch.tripped() && options.interrupt_at && *options.interrupt_at < spec.horizon) interrupted = true;
  const bool aborted = !interrupted && watch.tripped();
  const std::string stop_reason = stop_file ? "stop file " + StopFilePath() : "interrupted by signal";
  Time end = interrupted || aborted ? clock.Now() : spec.horizon;

  // Stage 4: nothing stays applied, whatever happened; an abort is on the record before its reverts.
  if (aborted) watch.RecordAbort(events, clock.Now());
  RevertAll(spec, clock, sim, events, ledger, aborted ? "run aborted" : interrupted ? "run interrupted" : "end of run");
  s = events.Flush();
  if (!s.ok()) return Fail(out, s);

  // Stage 5: metrics from the recorded events, gates, verdict.
  auto scored = ScoreRun(*store, *run, spec, events.events(), job_infos, end, out.gates);
  if (!scored.ok()) return Fail(out, scored.status());
  const Verdict verdict = Decide({.interrupted = interrupted, .stop_reason = stop_reason, .host_error = "", .aborted = aborted,
                                  .abort_reason = watch.reason(), .failed_gate = *scored});
  out.code = verdict.code;
  s = store->FinishRun(*run, verdict.status, ToInt(out.code), WallNow(), verdict.reason);
  if (!s.ok()) return Fail(out, s);
  if (live.on()) {
    auto metrics = store->ReadMetrics(*run);
    live.Finish(verdict.status, metrics.ok() ? &*metrics : nullptr);
  }
  SetLogClock(nullptr);
  auto summary = reports::RenderSummary(*store, *run);
  out.summary = summary.ok() ? *summary : summary.status().ToString();
  return out;
}

}  // namespace rackchaos::runner
