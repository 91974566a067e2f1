#include "runner/site/ssh_monitor.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/log.h"
#include "core/strings.h"
#include "runner/site/host_maps.h"

namespace rackchaos::runner {
namespace {

// A job is hung when no rank finished a step for this many periods; a host is silent after two.
constexpr int kStallPeriods = 2;
constexpr int kSilentPeriods = 2;
// A job's speed is its step rate over this many periods against the nominal rate; below kSlowSpeed a
// running job counts as slowed (single steps jitter on a busy machine, a window of them much less).
constexpr int kSpeedPeriods = 4;
constexpr double kSlowSpeed = 0.75;

JobState SchedulerState(const std::string& s) {
  if (s == "RUNNING") return JobState::kRunning;
  if (s == "PENDING" || s == "CONFIGURING" || s == "REQUEUED" || s == "RESIZING") return JobState::kQueued;
  return JobState::kFailed;  // NONE (gone), FAILED, TIMEOUT, CANCELLED, NODE_FAIL, ...
}

}  // namespace

SshMonitor::SshMonitor(const Inventory& inventory, const cluster::Topology& topology, ssh::SshPool& pool, Clock& clock,
                       SshBackend& backend, EventSink& events, std::vector<MonitoredJob> jobs)
    : inv_(inventory), topo_(topology), pool_(pool), clock_(clock), backend_(backend), events_(events),
      period_(inventory.observe_period),
      driver_(topology, clock, events, [&backend](cluster::Observation obs) { backend.Publish(obs); }) {
  if (inv_.actions.count("observe_tray")) {
    for (const auto& [name, mapping] : inv_.trays) {
      auto id = topo_.Find(name);
      if (!id) continue;
      tray_of_host_[mapping.host] = trays_.size();
      Tray t;
      t.id = *id;
      t.host = mapping.host;
      trays_.push_back(std::move(t));
    }
  }
  for (MonitoredJob& j : jobs) {
    Job& job = jobs_[j.name];
    job.spec = std::move(j);
    job.progress = StepWindow(period_ * (kSpeedPeriods - 1));
  }
  driver_.hosts() = BuildHostMaps(inv_, topo_);
  auto render = [&backend](const std::string& tmpl, const std::string& host, const std::map<std::string, std::string>& values) {
    return backend.Render(tmpl, host, values);
  };
  driver_.Add(MakeObservationSources({inv_, topo_, pool_, clock_, render, driver_.hosts()}));
}

SshMonitor::~SshMonitor() {
  *alive_ = false;
  Stop();
}

std::vector<std::string> SshMonitor::Hosts(const Inventory& inv) {
  std::set<std::string> hosts;
  if (inv.actions.count("observe_tray"))
    for (const auto& [name, mapping] : inv.trays) hosts.insert(mapping.host);
  if (!inv.observe.empty())
    for (const auto& [name, mapping] : inv.trays) hosts.insert(mapping.host);
  if (auto bmc = inv.observe.find("bmc"); bmc != inv.observe.end()) hosts.insert(bmc->second.run_on);
  for (const std::string& action : HealerActionNames()) {
    auto a = inv.actions.find(action);
    if (a != inv.actions.end() && !a->second.run_on.empty()) hosts.insert(a->second.run_on);
  }
  return {hosts.begin(), hosts.end()};
}

void SshMonitor::Start() {
  running_ = true;
  const Time now = clock_.Now();
  for (Tray& t : trays_) t.last_seen = now;
  for (auto& [name, j] : jobs_) j.progress_at = now;
  Poll();
  driver_.Start();
  timer_ = clock_.CallAfter(period_, [this] { Tick(); });
}

void SshMonitor::Stop() {
  running_ = false;
  driver_.Stop();
  if (timer_) clock_.Cancel(timer_);
  timer_ = 0;
}

SshMonitor::Tray& SshMonitor::TrayOf(ComponentId tray) {
  return trays_[tray_of_host_.at(inv_.trays.at(topo_.at(tray).name).host)];
}

void SshMonitor::Publish(cluster::ObservationBody body, Time now) { backend_.Publish({now, std::move(body)}); }

void SshMonitor::Tick() {
  timer_ = 0;
  if (!running_) return;
  const Time now = clock_.Now();
  for (Tray& t : trays_) {
    if (!t.answer) continue;
    Answer a = std::move(*t.answer);
    t.answer.reset();
    t.failing = !a.ok;
    if (!a.ok) continue;
    t.last_seen = a.at;
    for (std::string_view line : SplitLines(a.out)) {
      std::istringstream in{std::string(line)};
      std::string key;
      long step = -1;
      double compute = 0, total = 0, send = 0;
      if (in >> key && key == "step" && in >> step >> compute >> total) {
        t.step = step;
        t.step_seen = a.at;
        t.compute_s = compute;
        t.step_s = total;
        t.send_s = in >> send && send >= 0 ? send : -1;  // optional: ranks that time their sends
      }
    }
  }
  Heartbeats(now);
  if (links_answer_) {
    if (links_answer_->ok) Links(links_answer_->out, now);
    links_answer_.reset();
  }
  if (jobs_answer_) {
    if (jobs_answer_->ok) Jobs(jobs_answer_->out, now);
    jobs_answer_.reset();
  }
  for (auto& [name, j] : jobs_) {
    Steps(j, now);
    Track(j, now);
  }
  driver_.Pump();
  Poll();
  if (running_) timer_ = clock_.CallAfter(period_, [this] { Tick(); });
}

void SshMonitor::Poll() {
  for (Tray& t : trays_) {
    if (t.in_flight) continue;  // still waiting for this host: an unreachable tray holds up only itself
    auto b = BindTarget(inv_, topo_, "observe_tray", {t.id, -1});
    if (!b.ok()) continue;
    auto cmd = backend_.Render(inv_.actions.at("observe_tray").apply, b->host, b->values);
    if (!cmd.ok()) continue;
    t.in_flight = true;
    t.asked_at = clock_.Now();
    pool_.Run({b->host}, *cmd, [this, alive = alive_, &t](ssh::CommandResult r) {
      if (!*alive) return;
      t.in_flight = false;
      t.answer = Answer{r.status.ok() && r.exit_status == 0, clock_.Now(), std::move(r.out)};
    });
  }
  PollSite("observe_links", links_in_flight_, links_answer_);
  PollSite("observe_jobs", jobs_in_flight_, jobs_answer_);
}

void SshMonitor::PollSite(const std::string& action, bool& in_flight, std::optional<Answer>& answer) {
  if (in_flight || !inv_.actions.count(action)) return;
  auto b = BindSite(inv_, action);
  if (!b.ok()) return;
  auto cmd = backend_.Render(inv_.actions.at(action).apply, b->host, b->values);
  if (!cmd.ok()) return;
  in_flight = true;
  pool_.Run({b->host}, *cmd, [this, alive = alive_, &in_flight, &answer](ssh::CommandResult r) {
    if (!*alive) return;
    in_flight = false;
    if (!r.status.ok() || r.exit_status != 0) spdlog::debug("monitor: {} failed: {}", r.host, r.status.ToString());
    answer = Answer{r.status.ok() && r.exit_status == 0, clock_.Now(), std::move(r.out)};
  });
}

void SshMonitor::Heartbeats(Time now) {
  for (Tray& t : trays_) {
    // Silent = asked and not answering. Not "no answer lately": a blocking remote command of the run
    // (a diagnostic) delays the monitor's own ticks, and that is no fault of the trays.
    const bool alive = !t.failing && (!t.in_flight || now - t.asked_at <= period_ * kSilentPeriods);
    if (alive == t.alive) continue;
    t.alive = alive;
    spdlog::info("monitor: {} {}", t.host, alive ? "answers again" : "is silent");
    Publish(cluster::HeartbeatChange{t.id, alive, t.last_seen, period_}, now);
  }
}

void SshMonitor::Links(const std::string& out, Time now) {
  for (std::string_view line : SplitLines(out)) {
    std::istringstream in{std::string(line)};
    std::string host, iface, state;
    if (!(in >> host >> iface >> state)) continue;
    auto t = tray_of_host_.find(host);
    if (t == tray_of_host_.end()) continue;
    const TrayMapping& m = inv_.trays.at(topo_.at(trays_[t->second].id).name);
    auto nic = std::find(m.nics.begin(), m.nics.end(), iface);
    if (nic == m.nics.end()) continue;
    auto id = topo_.Find(m.tray + ".nic" + std::to_string(nic - m.nics.begin()));
    if (!id) continue;
    const bool up = state == "up";
    auto known = link_up_.find(*id);
    if (known == link_up_.end() ? up : known->second == up) {
      link_up_[*id] = up;
      continue;
    }
    link_up_[*id] = up;
    spdlog::info("monitor: {} {} {}", host, iface, up ? "up" : "down");
    Publish(cluster::LinkStateChange{*id, -1, up}, now);
  }
}

void SshMonitor::Jobs(const std::string& out, Time now) {
  for (std::string_view line : SplitLines(out)) {
    std::istringstream in{std::string(line)};
    std::string name, state, hosts;
    long ckpt = 0;
    if (!(in >> name >> state >> ckpt >> hosts)) continue;
    auto it = jobs_.find(name);
    if (it == jobs_.end()) continue;
    Job& j = it->second;
    std::vector<ComponentId> trays;
    for (std::string_view h : hosts == "-" ? std::vector<std::string_view>{} : Split(hosts, ','))
      if (auto t = tray_of_host_.find(std::string(h)); t != tray_of_host_.end()) trays.push_back(trays_[t->second].id);
    const JobState sched = SchedulerState(state);
    if (ckpt > j.ckpt) {
      j.ckpt = ckpt;
      events_.Record({now, Checkpointed{j.spec.id, static_cast<double>(ckpt)}});
    }
    if (j.seen && sched == j.sched && trays == j.trays) continue;
    if (sched == JobState::kRunning && (j.sched != JobState::kRunning || trays != j.trays)) {
      j.replaced = j.seen && j.state != JobState::kQueued;  // not the first start: a restart
      j.progress_at = now;  // a new placement: its ranks start from the checkpoint
      j.reported_step = -1;
      j.progress.Clear();
      for (ComponentId tray : trays) TrayOf(tray).step = -1;  // only answers from the new ranks count
    }
    if (trays != j.trays || j.held.empty()) {
      std::vector<ComponentId> sorted = trays;
      std::sort(sorted.begin(), sorted.end());
      j.held.push_back({now, std::move(sorted)});
    }
    j.seen = true;
    j.sched = sched;
    j.trays = trays;
    Publish(cluster::JobStatus{j.spec.id, sched, trays, sched == JobState::kFailed ? "scheduler: " + state : ""}, now);
  }
}

// One StepReport per step all ranks have finished: each rank's compute time on its tray's first GPU.
void SshMonitor::Steps(Job& j, Time now) {
  if (j.sched != JobState::kRunning || j.trays.empty()) return;
  cluster::StepReport r{j.spec.id, 0, {}, {}};
  long min_step = -1;
  for (ComponentId tray : j.trays) {
    const Tray& t = TrayOf(tray);
    if (t.step < 0) return;
    min_step = min_step < 0 ? t.step : std::min(min_step, t.step);
    auto gpus = topo_.GpusOfTray(tray);
    r.rank_gpus.push_back(gpus.empty() ? tray : gpus.front());
    r.compute_s.push_back(static_cast<float>(t.compute_s));
    r.comm_s.push_back(static_cast<float>(t.send_s));
    r.step_time_s = std::max(r.step_time_s, t.step_s);
  }
  if (std::any_of(r.comm_s.begin(), r.comm_s.end(), [](float s) { return s < 0; })) r.comm_s.clear();
  long max_step = 0;
  Time seen{};
  for (ComponentId tray : j.trays) {
    max_step = std::max(max_step, TrayOf(tray).step);
    seen = std::max(seen, TrayOf(tray).step_seen);
  }
  if (max_step != j.last_step) {
    j.progress_at = now;
    j.last_step = max_step;
  }
  // Progress by the time the answers came, not by this tick's: a late tick is no slowdown of the job.
  j.progress.Add(seen, max_step);
  if (min_step <= j.reported_step) return;
  j.reported_step = min_step;
  Publish(std::move(r), now);
}

FaultId Suspect(const std::vector<SshBackend::Landing>& landings, const std::vector<JobPlacement>& held) {
  for (auto l = landings.rbegin(); l != landings.rend(); ++l) {
    if (l->everywhere) return l->fault;
    for (size_t i = 0; i < held.size(); ++i) {
      if (i + 1 < held.size() && held[i + 1].since <= l->at) continue;  // left before it landed
      if (l->ended && held[i].since >= *l->ended) continue;               // placed after it was over
      const std::vector<ComponentId>& trays = held[i].trays;  // both sorted: one merge pass
      for (auto a = trays.begin(), b = l->trays.begin(); a != trays.end() && b != l->trays.end();) {
        if (*a == *b) return l->fault;
        *a < *b ? ++a : ++b;
      }
    }
  }
  return kNoFault;
}

// The report's view of the job (metrics read it): running, slowed, hung or restarting.
void SshMonitor::Track(Job& j, Time now) {
  if (j.replaced) {  // the scheduler placed it anew without a visible gap: record the restart itself
    j.replaced = false;
    if (j.state != JobState::kRestarting) {
      JobState placed = j.sched;
      j.sched = JobState::kQueued;
      Track(j, now);
      j.sched = placed;
    }
  }
  JobState state = j.sched;
  double speed = 1, step_s = 0;
  StepWindow::Rate rate;
  if (state == JobState::kRunning) {
    if (now - j.progress_at > period_ * kStallPeriods) state = JobState::kHung;
    rate = j.progress.Measure(j.spec.nominal_step);
    speed = rate.speed;
    step_s = rate.step_s;
    if (speed >= kSlowSpeed) speed = 1;
  } else if (j.state == JobState::kRunning || j.state == JobState::kHung || j.state == JobState::kRestarting) {
    state = JobState::kRestarting;
  }
  const FaultId suspect = Suspect(backend_.landings(), j.held);
  std::optional<Time> full_speed_since;  // the start of a measured window at full speed
  if (state == JobState::kRunning && speed == 1 && step_s > 0) full_speed_since = rate.from;
  j.charge.See(suspect, suspect != kNoFault && backend_.Holds(suspect), full_speed_since, now);
  // Also once a (re)started job's step rate is first measured: the report counts steps from it.
  const bool first_rate = state == JobState::kRunning && !j.timed && step_s > 0;
  if (state == j.state && (speed < 1) == (j.speed < 1) && !first_rate) return;
  JobChanged c;
  c.job = j.spec.id;
  c.state = state;
  c.steps = static_cast<double>(std::max<long>(j.last_step, 0));
  c.step_time_s = state == JobState::kRunning ? step_s : 0;
  c.speed = state == JobState::kRunning ? speed : 0;
  c.gpus = j.spec.gpus;
  c.cause = j.charge.Cause(suspect);
  if (state == JobState::kRestarting && j.state != JobState::kRestarting && j.last_step > j.ckpt) {
    // The steps since the checkpoint are thrown away: redone at the nominal pace.
    c.lost_work = j.spec.nominal_step * (j.last_step - j.ckpt);
    c.steps = static_cast<double>(j.ckpt);
    c.detail = "restart from checkpoint step " + std::to_string(j.ckpt) + " (was at step " + std::to_string(j.last_step) + ")";
    j.last_step = j.ckpt;
  }
  if (state == JobState::kRunning || state == JobState::kHung) c.trays = j.trays;
  j.state = state;
  j.speed = speed;
  j.timed = state == JobState::kRunning && step_s > 0;
  // Stamped now, not at the tick's start: the healer may have acted on this tick's observations.
  events_.Record({clock_.Now(), c});
}

}  // namespace rackchaos::runner
