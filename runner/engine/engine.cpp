#include "runner/engine/engine.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <exception>
#include <optional>

#include "core/log.h"
#include "core/wall_time.h"
#include "healer/healer.h"
#include "healer/metrics.h"
#include "reports/store.h"
#include "reports/summary.h"
#include "runner/engine/fault_timeline.h"
#include "runner/engine/live_feed.h"
#include "runner/engine/pacer.h"
#include "runner/engine/score.h"
#include "runner/spec/safety.h"

#ifndef RACKCHAOS_VERSION
#define RACKCHAOS_VERSION "0.0.0"
#endif

namespace rackchaos::runner {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnStopSignal(int) { g_stop.store(true); }

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// The stop file is looked at every kStopFileEvery timers (cheap, and the same events on every replay
// of a simulated run) and, by a clock that waits, while it waits.
constexpr uint64_t kStopFileEvery = 10000;
constexpr uint64_t kProgressEvery = 1024;
// The report's WAL on a run whose events are written through (a real run): 256 pages of 4 KiB.
constexpr int kRealRunWalPages = 256;
constexpr int64_t kRealRunWalBytes = int64_t{1} << 20;

// One run's state across the stages of RunPlan. Every stage method records the first failure in
// end_.error; later stages then do only what cleaning up needs.
class Engine {
 public:
  Engine(const Plan& plan, const RunSpec& spec, const Rig& rig, const RunOptions& options)
      : plan_(plan),
        spec_(spec),
        rig_(rig),
        options_(options),
        horizon_(rig.horizon.value_or(spec.horizon)),
        healer_(spec.topology, rig.clock, rig.backend, rig.events, spec.policy),
        watch_(spec),
        timeline_(spec, rig.clock, rig.backend, rig.events, watch_),
        live_(options.live, rig.backend.Name().c_str()) {
    for (size_t i = 0; i < spec.jobs.size(); ++i)
      jobs_.push_back({static_cast<JobId>(i), spec.jobs[i].name, spec.jobs[i].gpus, spec.jobs[i].step_time});
    if (live_.on()) rig.events.Tee(&live_);  // every event the run records, as it is recorded
  }
  ~Engine() { rig_.events.Tee(nullptr); }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  bool ok() const { return end_.error.empty(); }
  bool Check(const Status& s) {
    if (!s.ok() && ok()) end_.error = s.ToString();
    return s.ok();
  }

  Status OpenReport();
  Status AddJobRows();
  Status StartBackend();
  Status StartJobs();
  void RunTimeline();
  void Stop();
  void Score();
  RunOutcome Finish();

 private:
  bool StopFileSeen() {
    if (!stop_file_) stop_file_ = StopFileExists();
    return stop_file_;
  }
  RunProgress Progress() const {
    return {rig_.clock.Now(), horizon_, timeline_.injected(), std::max(rig_.backend.JobsRunning(), 0),
            static_cast<int>(spec_.jobs.size())};
  }

  const Plan& plan_;
  const RunSpec& spec_;
  const Rig& rig_;
  const RunOptions& options_;
  const Time horizon_;
  std::vector<healer::JobInfo> jobs_;
  healer::Healer healer_;
  Watch watch_;
  FaultTimeline timeline_;
  LiveFeed live_;  // does nothing without options.live
  std::optional<reports::ReportStore> store_;
  int64_t run_ = 0;
  bool backend_started_ = false;
  bool stop_file_ = false;
  int teardown_failures_ = 0;
  Time end_time_{};
  RunEnd end_;
  RunOutcome out_;
};

Status Engine::OpenReport() {
  reports::OpenOptions open;
  if (options_.busy_timeout_ms) open.busy_timeout_ms = *options_.busy_timeout_ms;
  if (rig_.events.write_through()) {
    // A real run stores its events one by one for hours: a WAL checkpointed every 1 MiB and cut back to
    // 1 MiB after, not the simulator's 64 MiB (bench/README.md, "A long real run").
    open.wal_autocheckpoint_pages = kRealRunWalPages;
    open.journal_size_limit = kRealRunWalBytes;
  }
  RC_ASSIGN_OR_RETURN(reports::ReportStore store, reports::ReportStore::Open(options_.db_path, open));
  store_.emplace(std::move(store));
  const reports::RunInfo info{plan_.name,        plan_.path, plan_.text,          "",        spec_.seed,
                              RACKCHAOS_VERSION, HostName(), rig_.backend.Name(), WallStampNow(), options_.command_line,
                              options_.ledger,   options_.ledger_run};
  RC_ASSIGN_OR_RETURN(run_, store_->BeginRun(info));
  out_.run_id = run_;
  rig_.events.Attach(*store_, run_);
  // The parts by reference to the topology's names: a serial left empty is the backend's prefix and the
  // name, derived by the store (no 500,000 strings built at 1,778 racks).
  const cluster::Topology& topo = spec_.topology;
  const std::string prefix = rig_.backend.SerialPrefix();
  auto row = [&](size_t i) -> reports::ComponentRef {
    const cluster::Component& c = topo.components()[i];
    return {c.id, c.name, cluster::KindName(c.kind), c.parent, rig_.backend.SerialOf(c.id)};
  };
  // A file that has this cluster already (a sweep's or a later `run`'s seed) is asked by the rows' digest
  // first: computed once per shared topology when the rows depend on it alone, never a row built.
  if (rig_.serials_derived) {
    auto digest = [&] {
      return spec_.topology.Memo(prefix, [&] { return reports::ComponentsDigest(topo.size(), row, prefix); });
    };
    RC_ASSIGN_OR_RETURN(bool linked, store_->LinkComponents(run_, digest));
    if (linked) return AddJobRows();
  }
  std::vector<reports::ComponentRef> rows;
  rows.reserve(topo.size());
  for (size_t i = 0; i < topo.size(); ++i) rows.push_back(row(i));
  RC_RETURN_IF_ERROR(store_->AddComponents(run_, rows, prefix));
  return AddJobRows();
}

Status Engine::AddJobRows() {
  if (!rig_.backend.Observes()) return Status::Ok();  // its jobs do not run: no job rows
  std::vector<reports::JobRow> job_rows;
  for (const healer::JobInfo& j : jobs_) job_rows.push_back({j.id, j.name, j.gpus, j.nominal_step.Seconds()});
  return store_->AddJobs(run_, job_rows);
}

Status Engine::StartBackend() {
  backend_started_ = true;
  return rig_.backend.StartRun({options_.db_path, run_});
}

// The healer and the watch see observations only; the order of these steps is the order of the
// simulator's timers, which keeps simulated runs byte for byte what they were.
Status Engine::StartJobs() {
  RC_RETURN_IF_ERROR(rig_.backend.StartJobs(spec_.jobs));
  if (rig_.backend.Observes()) rig_.backend.Subscribe(&healer_);
  // The live safety watch: abort conditions on observations, continuous gates on the metrics so far.
  if (watch_.watches_observations()) rig_.backend.Subscribe(&watch_);
  if (rig_.backend.Observes())
    for (cluster::ObservationSink* observer : options_.observers) rig_.backend.Subscribe(observer);
  watch_.ScheduleGateChecks(rig_.clock, rig_.events.events(), jobs_, rig_.gate_period);
  // Nothing reads the events while the run runs (no continuous gate, no live metrics): a real run,
  // which stores each as it happens, keeps none in memory and scores from the store (Score).
  if (!watch_.has_continuous_gates() && !live_.on()) rig_.events.DropStored();
  timeline_.Schedule();
  rig_.backend.StartObserving();
  return Status::Ok();
}

void Engine::RunTimeline() {
  Clock& clock = rig_.clock;
  // A test's interrupt_at stops the clock there, not at the first timer after it (they can be hours apart).
  const Time limit = options_.interrupt_at ? std::min(*options_.interrupt_at, horizon_) : horizon_;
  const Duration progress_step{std::max<int64_t>(horizon_.us / 100, 1)};
  Time next_progress = progress_step;
  const std::function<bool()> stop = [this] { return StopFileSeen() || StopRequested() || watch_.tripped(); };
  Pacer pacer(options_.pace);
  for (uint64_t steps = 1;; ++steps) {
    const Time allowed = pacer.Allowed(limit);  // `limit` unless paced
    if (!clock.RunNext(allowed, stop)) {
      if (allowed >= limit || stop()) break;
      // Paced, and ahead of the wall clock: what happened so far goes to the store (serve's live page
      // polls it) and to the live metrics, then a short wait; a stop is looked for as a waiting clock does.
      (void)rig_.events.Flush();
      live_.Tick(rig_.events.events(), spec_.topology, jobs_, clock.Now());
      pacer.Wait();
      continue;
    }
    if (live_.on()) live_.Tick(rig_.events.events(), spec_.topology, jobs_, clock.Now());
    if (steps % kStopFileEvery == 0) (void)StopFileSeen();
    if (stop_file_ || StopRequested() || watch_.tripped()) break;
    // Every kProgressEvery timers or 1% of the horizon, whichever comes first: quiet stretches of a
    // long simulated run can be days with few timers.
    if (options_.progress && (steps % kProgressEvery == 0 || clock.Now() >= next_progress)) {
      options_.progress(Progress());
      next_progress = clock.Now() + progress_step;
    }
  }
  end_.interrupted = stop_file_ || StopRequested();
  if (end_.interrupted && options_.on_stop) options_.on_stop(timeline_.open_faults());
  // The clock reached interrupt_at (not a stop or an abort first): as if SIGINT arrived then.
  if (!end_.interrupted && !watch_.tripped() && options_.interrupt_at && *options_.interrupt_at < horizon_)
    end_.interrupted = true;
  end_.stop_reason = stop_file_ ? "stop file " + StopFilePath() : "interrupted by signal";
  end_.aborted = !end_.interrupted && watch_.tripped();
  end_.abort_reason = watch_.reason();
  end_time_ = clock.Now();
}

void Engine::Stop() {
  cluster::Backend& backend = rig_.backend;
  const Time now = rig_.clock.Now();
  if (end_.aborted) watch_.RecordAbort(rig_.events, now);  // on the record before the reverts it causes
  // Nothing stays applied, whatever happened: the faults, the jobs, trays the healer still holds.
  backend.StopObserving();
  if (Status s = backend.StopJobs(spec_.jobs); !s.ok()) {
    spdlog::error("{}", s.ToString());
    ++teardown_failures_;
  }
  timeline_.RevertAll(end_.aborted ? "run aborted" : end_.interrupted ? "run interrupted" : "end of run");
  std::vector<ComponentId> held;
  for (ComponentId tray : spec_.topology->trays())
    if (healer_.HoldsDrained(tray)) held.push_back(tray);
  if (Status s = backend.ResumeHeld(held); !s.ok()) spdlog::warn("end of run: {}", s.ToString());
  Check(rig_.events.Flush());
}

void Engine::Score() {
  std::optional<std::vector<Event>> stored;  // the events a real run did not keep (RecordingSink::DropStored)
  if (!rig_.events.keeps_all()) {
    auto read = store_->ReadRunEvents(run_);
    if (!Check(read.status())) return;
    stored = std::move(*read);
  }
  const std::vector<Event>& events = stored ? *stored : rig_.events.events();
  auto failed_gate = ScoreRun(*store_, run_, spec_, events, jobs_, end_time_, out_.gates);
  if (!Check(failed_gate.status())) return;
  end_.failed_gate = *failed_gate;
  // A fault that could not be applied or reverted, or a job that could not be stopped, is an error.
  const int failures = timeline_.failures() + teardown_failures_;
  if (failures > 0)
    end_.host_error = std::to_string(failures) +
                      " fault, job or revert step(s) failed (see the failed actions in "
                      "the report" +
                      (rig_.backend.StillApplied() ? "; run `rackchaos recover`)" : ")");
}

RunOutcome Engine::Finish() {
  const RunVerdict verdict = Verdict(end_);
  out_.code = verdict.code;
  if (verdict.code == ExitCode::kRuntimeError) out_.error = verdict.reason;
  if (run_ != 0) {
    Status s = store_->FinishRun(run_, verdict.status, ToInt(verdict.code), WallStampNow(), verdict.reason);
    if (!s.ok()) {
      out_.code = ExitCode::kRuntimeError;
      out_.error = s.ToString();
    }
  }
  // The live feed ends with what was stored (a run that never got a row ends as 'error' when the feed
  // goes, reports/live_metrics.h).
  if (live_.on() && run_ != 0) {
    auto metrics = store_->ReadMetrics(run_);
    live_.Finish(verdict.status, metrics.ok() ? &*metrics : nullptr);
  }
  // After the verdict is stored: a site finishes its ledger run only then, so a crash between the two
  // leaves a run `rackchaos recover` still marks.
  if (backend_started_)
    if (Status s = rig_.backend.Shutdown(); !s.ok()) spdlog::error("shutting the backend down: {}", s.ToString());
  if (ok() && run_ != 0) {
    auto summary = reports::RenderSummary(*store_, run_);
    out_.summary = summary.ok() ? *summary : summary.status().ToString();
  }
  return out_;
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

RunOutcome RunPlan(const Plan& plan, const RunSpec& spec, const Rig& rig, const RunOptions& options) {
  LogClockScope log_clock(&rig.clock);  // log lines carry the run's time; no clock outlives the run
  Engine run(plan, spec, rig, options);
  // An exception out of any stage (a bug, or memory or threads running out) is an error like any other: it
  // must not skip the reverts, nor leave the run row 'running' for `report` to read as a result.
  const auto guarded = [&run](const char* stage, const auto& body) {
    try {
      body();
    } catch (const std::exception& e) {
      run.Check(Status(StatusCode::kInternal, std::string("unexpected exception while ") + stage + ": " + e.what()));
    } catch (...) {
      run.Check(Status(StatusCode::kInternal, std::string("unexpected exception while ") + stage));
    }
  };
  // 1. Open the report: the run row before anything happens, so a crash leaves a 'running' row; then
  //    the parts, with the backend's serials, and the jobs. From here on every failure ends as 'error'.
  guarded("opening the report", [&] { run.Check(run.OpenReport()); });
  // 2. Start the backend (the simulator: nothing; a site: recover what earlier runs left, register in
  //    the ledger, open and host-key-check every session, check the clocks). Nothing is applied yet.
  if (run.ok()) guarded("starting the backend", [&] { run.Check(run.StartBackend()); });
  // 3. Place the jobs; the healer and the watch start on the backend's observations; the faults are
  //    scheduled on the clock.
  if (run.ok()) guarded("starting the jobs", [&] { run.Check(run.StartJobs()); });
  // 4. The fault timeline: the clock runs to the horizon, or until a stop or an abort.
  if (run.ok()) guarded("running the timeline", [&] { run.RunTimeline(); });
  // 5. Stop: the observation source and the jobs; revert what is still applied; return held trays.
  guarded("stopping the run", [&] { run.Stop(); });
  // 6. Score: metrics and gates from the recorded events.
  if (run.ok()) guarded("scoring the run", [&] { run.Score(); });
  // 7. Store the verdict (one place picks it, runner/engine/score.h), then shut the backend down.
  return run.Finish();
}

}  // namespace rackchaos::runner
