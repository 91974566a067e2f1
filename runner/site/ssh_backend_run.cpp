// SshBackend's side of a run's lifecycle (cluster/backend.h): what a real run must make sure of before
// its first fault, its jobs and its observation source, and what it leaves behind.
#include <algorithm>
#include <cstdlib>

#include "core/log.h"
#include "runner/site/clock_check.h"
#include "runner/site/recover.h"
#include "runner/site/ssh_backend.h"
#include "runner/site/ssh_monitor.h"

namespace rackchaos::runner {

SshBackend::SshBackend(const Inventory& inventory, const cluster::Topology& topology, ssh::SshPool& pool, Clock& clock,
                       EventSink& events, SshBackendOptions options)
    : inv_(inventory), topo_(topology), pool_(pool), clock_(clock), events_(events), options_(std::move(options)) {}

SshBackend::~SshBackend() { CancelRetries(); }  // here, where SshMonitor is complete

std::string SshBackend::SerialPrefix() const { return (inv_.site.empty() ? "SITE" : inv_.site) + "-"; }

std::string_view SshBackend::SerialOf(ComponentId id) const {
  auto t = inv_.trays.find(topo_.at(id).name);
  return t != inv_.trays.end() ? std::string_view(t->second.serial) : std::string_view();
}

bool SshBackend::Observes() const { return inv_.actions.count("observe_tray") > 0; }

// The run is in the ledger (its owner lock taken) before its report row exists: a run killed once the
// row is written is then always one `rackchaos recover` knows about and marks aborted. Its report run
// is recorded by StartRun.
void SshBackend::PrepareRun(const std::string& report_db) {
  if (options_.ledger_path.empty() || ledger_) return;
  auto ledger = Ledger::Open(options_.ledger_path);
  if (!ledger.ok()) {
    prepare_ = ledger.status();
    return;
  }
  ledger_ = std::make_unique<Ledger>(std::move(*ledger));
  auto run = ledger_->BeginRun(report_db, 0);
  if (run.ok()) options_.ledger_run = *run;
  prepare_ = run.status();
}

std::string SshBackend::LedgerOfRun() const { return ledger_ && options_.ledger_run ? LedgerIdentity(ledger_->path()) : ""; }

Status SshBackend::StartRun(const cluster::RunContext& run) {
  // Whatever earlier runs left applied is reverted first: a new run starts from a clean site.
  if (!options_.ledger_path.empty()) {
    PrepareRun(run.report_db);  // when the engine did not (a caller of StartRun alone)
    RC_RETURN_IF_ERROR(prepare_);
    // Numbered first: recover tells the rows of runs killed before they were numbered from this one's.
    RC_RETURN_IF_ERROR(ledger_->SetReportRun(options_.ledger_run, run.report_run));
    RecoverOptions recover;
    recover.accept_new_host_keys = options_.accept_new_host_keys;
    recover.connect_timeout = inv_.connect_timeout;
    recover.command_timeout = inv_.command_timeout;
    recover.on_wait = [](const std::string& line) { spdlog::warn("recover: {}", line); };
    RC_ASSIGN_OR_RETURN(RecoverResult recovered, Recover(*ledger_, recover));
    for (const std::string& line : recovered.lines) spdlog::warn("recover: {}", line);
    if (recovered.failed > 0)
      return Status::Unavailable(std::to_string(recovered.failed) +
                                 " fault(s) left by earlier runs are still "
                                 "applied and could not be reverted; see `rackchaos recover --ledger " +
                                 options_.ledger_path + "`");
    options_.ledger = ledger_.get();
  }
  // Every session the run needs is open and its host key checked before the first fault.
  std::vector<ssh::HostSpec> hosts;
  for (const std::string& h : options_.hosts)
    if (auto spec = HostOf(inv_, h)) hosts.push_back(*spec);
  const std::string before = "before the first fault (nothing was applied)";
  if (Status s = pool_.ConnectAll(hosts); !s.ok()) return s.WithContext("SSH " + before);
  // Faults land at one wall-clock instant on all their hosts: a host whose clock is off lands off.
  const std::vector<HostClock> clocks = CheckClocks(pool_, options_.fault_hosts);
  for (const HostClock& c : clocks)
    if (!c.status.ok()) return c.status.WithContext(before);
  RecordClocks(clocks);
  return Status::Ok();
}

void SshBackend::RecordClocks(const std::vector<HostClock>& clocks) {
  const HostClock* largest = nullptr;
  for (const HostClock& c : clocks) {
    if (!largest || std::llabs(c.offset_us) > std::llabs(largest->offset_us)) largest = &c;
    if (!ClockOff(c)) continue;
    const std::string what = DescribeOffset(c) + ": its faults land that far from the others'; check NTP/PTP";
    spdlog::warn("{}", what);
    events_.Record({clock_.Now(), ActionTaken{"ssh.clock", kNoComponent, kNoJob, false, what}});
  }
  if (!largest) return;
  const std::string what =
      std::to_string(clocks.size()) + " fault host clock(s), largest offset " + DescribeOffset(*largest);
  spdlog::info("{}", what);
  events_.Record({clock_.Now(), ActionTaken{"ssh.clock", kNoComponent, kNoJob, true, what}});
}

std::string SshBackend::JobActions(const char* action, const std::vector<cluster::JobConfig>& jobs) {
  std::string failed;
  const size_t gpus_per_tray = static_cast<size_t>(std::max(1, topo_.model().gpus_per_tray));
  for (const cluster::JobConfig& j : jobs) {
    auto run = [&]() -> Result<ssh::CommandResult> {
      RC_ASSIGN_OR_RETURN(TargetBinding b, BindSite(inv_, action));
      b.values["job"] = j.name;
      b.values["ranks"] = std::to_string((static_cast<size_t>(j.gpus) + gpus_per_tray - 1) / gpus_per_tray);
      return RunHealerAction(action, b, kNoComponent);
    };
    const Result<ssh::CommandResult> r = run();
    if (r.ok() && r->exit_status == 0) continue;
    const std::string why = r.ok() ? FirstLine(r->err) : r.status().ToString();
    spdlog::error("{} {} failed: {}", action, j.name, why);
    failed += (failed.empty() ? "" : "; ") + j.name + ": " + why;
  }
  return failed;
}

Status SshBackend::StartJobs(const std::vector<cluster::JobConfig>& jobs) {
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobId id = static_cast<JobId>(i);
    options_.job_names[id] = jobs[i].name;
    jobs_.push_back({id, jobs[i].name, jobs[i].gpus, jobs[i].step_time});
  }
  if (!Observes()) {
    if (!jobs.empty())
      spdlog::warn("the inventory has no healer section: the plan's {} job(s) are not started; only its faults run",
                   jobs.size());
    return Status::Ok();
  }
  jobs_started_ = true;
  const std::string failed = JobActions("start_job", jobs);
  if (!failed.empty()) return Status::Unavailable("start_job failed: " + failed);
  return Status::Ok();
}

Status SshBackend::StopJobs(const std::vector<cluster::JobConfig>& jobs) {
  if (!jobs_started_) return Status::Ok();
  jobs_started_ = false;
  const std::string failed = JobActions("stop_job", jobs);
  if (!failed.empty()) return Status::Unavailable("stop_job failed: " + failed);
  return Status::Ok();
}

// The healer sees only what the monitor reads from the site; the report's guess at what a job's
// trouble is due to is the last landed fault that reaches it, while it holds or the job has not
// recovered from it (Suspect and JobCharge, ssh_monitor.h).
void SshBackend::StartObserving() {
  if ((!Observes() && inv_.observe.empty() && !inv_.prometheus) || monitor_) return;
  monitor_ = std::make_unique<SshMonitor>(inv_, topo_, pool_, clock_, *this, events_, jobs_);
  monitor_->Start();
}

void SshBackend::StopObserving() {
  if (monitor_) monitor_->Stop();
}

Status SshBackend::ResumeHeld(const std::vector<ComponentId>& trays) {
  Status first;
  for (ComponentId id : trays) {
    if (!inv_.trays.count(topo_.at(id).name)) continue;  // not the site's: nothing of it was drained here
    Status r = Resume(id);
    events_.Record(
        {clock_.Now(), ActionTaken{"resume", id, kNoJob, r.ok(),
                                   "end of run: " + (r.ok() ? std::string("returned to service") : r.ToString())}});
    if (!r.ok() && first.ok()) first = r;
  }
  return first;
}

Status SshBackend::Shutdown() {
  StopObserving();
  // A run that left nothing applied (nor a tray drained) is finished in the ledger; otherwise `rackchaos
  // recover` takes it.
  if (ledger_ && options_.ledger_run && open_.empty() && drains_.empty())
    return ledger_->FinishRun(options_.ledger_run);
  return Status::Ok();
}

}  // namespace rackchaos::runner
