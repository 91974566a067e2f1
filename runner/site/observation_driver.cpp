#include "runner/site/observation_driver.h"

#include "cluster/kernel_log.h"
#include "core/log.h"
#include "runner/site/host_maps.h"

namespace rackchaos::runner {
namespace {

// An error is put on the record, and a host's source warned about in the log, at most this often.
const Duration kErrorInterval = Duration::Seconds(60);

}  // namespace

ObservationDriver::ObservationDriver(const cluster::Topology& topo, Clock& clock, EventSink& events, Publish publish)
    : topo_(topo), clock_(clock), events_(events), publish_(std::move(publish)) {}

ObservationDriver::~ObservationDriver() { Stop(); }

void ObservationDriver::Add(SourceList sources) {
  for (auto& s : sources) {
    spdlog::info("observe: {} every {}", s->Name(), FormatDuration(s->Period()));
    sources_.push_back(std::move(s));
  }
}

void ObservationDriver::Start() {
  running_ = true;
  timers_.assign(sources_.size(), 0);
  for (size_t i = 0; i < sources_.size(); ++i) {
    sources_[i]->Ask(clock_.Now());
    timers_[i] = clock_.CallAfter(sources_[i]->Period(), [this, i] { Tick(i); });
  }
}

void ObservationDriver::Stop() {
  if (!running_) return;
  running_ = false;
  for (TimerId t : timers_)
    if (t) clock_.Cancel(t);
  timers_.clear();
  for (auto& s : sources_) s->Stop();
}

void ObservationDriver::Tick(size_t i) {
  timers_[i] = 0;
  if (!running_) return;
  for (const observe::Observed& o : sources_[i]->Take()) Handle(o);
  if (!running_) return;  // a sink stopped the run (the safety watch): no further polls
  sources_[i]->Ask(clock_.Now());
  timers_[i] = clock_.CallAfter(sources_[i]->Period(), [this, i] { Tick(i); });
}

void ObservationDriver::Pump() {
  if (!running_) return;
  for (auto& s : sources_)
    for (const observe::Observed& o : s->Take()) Handle(o);
}

const observe::HostMap* ObservationDriver::HostOf(ComponentId node) const {
  for (const observe::HostMap& h : hosts_)
    if (h.node == node) return &h;
  return nullptr;
}

void ObservationDriver::Handle(const observe::Observed& observed) {
  const Time now = clock_.Now();
  auto publish = [&](cluster::ObservationBody body) { publish_({now, std::move(body)}); };
  for (const cluster::ObservationBody& body : observed.observations) {
    if (const auto* link = std::get_if<cluster::LinkStateChange>(&body)) {
      auto [it, fresh] = port_up_.try_emplace({link->component, link->port}, true);
      if (it->second == link->up) continue;
      it->second = link->up;
      publish(body);
    } else if (const auto* log = std::get_if<cluster::KernelLogLine>(&body)) {
      const observe::HostMap* host = HostOf(log->node);
      publish(cluster::KernelLogLine{log->node, host ? ToModelAddress(log->line, *host, topo_) : log->line});
    } else {
      if (const auto* t = std::get_if<cluster::TelemetrySample>(&body)) lost_.erase(t->component);  // answering again
      publish(body);
    }
  }
  for (const observe::DeviceReport& d : observed.devices) {
    if (d.state == observe::DeviceState::kGpuLost && d.component != kNoComponent) {
      if (!lost_.insert(d.component).second) continue;
      // As the simulator shows a GPU that fell off the bus (cluster/sim_thermal.cpp): the driver's Xid 79.
      cluster::XidLine x{topo_.PciOf(d.component), 79, std::nullopt, "", cluster::DefaultXidMessage(79)};
      spdlog::warn("observe: {}: {}: {}", d.host, observe::SourceName(d.source), d.detail);
      publish(cluster::KernelLogLine{topo_.TrayOf(d.component), cluster::FormatXidLine(x, cluster::LogStyle::kBare, 0, "")});
      continue;
    }
    observe::ObservationError e{d.host, d.source, observe::Problem::kUnavailable, d.component,
                                std::string(observe::DeviceStateName(d.state)) + ": " + d.detail};
    Error(e, now);
  }
  if (!observed.xid_gauges.empty()) Handle(xid_gauge_.Update(observed.xid_gauges));
  for (const observe::ObservationError& e : observed.errors) Error(e, now);
}

void ObservationDriver::Error(const observe::ObservationError& e, Time now) {
  const std::string text = e.ToString();
  auto [at, fresh] = recorded_.try_emplace({e.host, static_cast<int>(e.source), static_cast<int>(e.problem), e.component}, now);
  if (fresh || now - at->second >= kErrorInterval) {
    at->second = now;
    events_.Record({now, ActionTaken{"observe", e.component, kNoJob, false, text}});
  }
  const std::pair<std::string, int> key{e.host, static_cast<int>(e.source)};
  auto warned = warned_.find(key);
  if (warned != warned_.end() && now - warned->second < kErrorInterval) {
    ++suppressed_[key];
    return;
  }
  warned_[key] = now;
  const long more = std::exchange(suppressed_[key], 0);
  spdlog::warn("observation error: {}{}", text, more ? " (and " + std::to_string(more) + " more in the last minute)" : "");
}

}  // namespace rackchaos::runner
