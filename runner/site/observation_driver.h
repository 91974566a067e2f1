// ObservationDriver: runs the `observe:` sources of a real run (observation_source.h) and turns what
// they read into what the simulator shows the healer for the same thing.
//
// Each source is asked on its own period (a clock timer per source; the first ask at Start). On each of
// its ticks, and on every Pump() (the SshMonitor's tick), the answers that arrived are handled:
//   observations        published as they are: TelemetrySample every poll (the detectors count hot
//                       polls, the safety watch reads temperatures); LinkStateChange only when a port's
//                       state changed (a port not seen before counts as up, as the simulator starts);
//                       KernelLogLine with the GPU's site PCI address rewritten to the model's, so the
//                       xid detector names the GPU (host_maps.h ToModelAddress)
//   kGpuLost device     the simulator's line for a GPU fallen off the bus: a driver Xid 79 line for the
//                       GPU's node, once per loss (again only after a poll of that host saw it back)
//   kDriverDown device  no observation (the simulator has no such state): an observation error on the record
//   Xid gauge samples   observe::XidGauge: a changed non-zero code becomes a driver Xid line
//   observation errors  an ActionTaken{"observe", component, ok=false, "<host>: <source>: <problem>: <what>"}
//                       event, once per (host, source, problem, component) per minute, and a log warning
//                       at most once per minute per host and source.
// Missing data is never published: no default value stands in for it, healthy or failed.
//
// Threading: the run's thread. The borrowed references must outlive the driver.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/observation.h"
#include "cluster/topology.h"
#include "core/clock.h"
#include "core/event.h"
#include "runner/site/observation_sources.h"
#include "runner/site/observe/xid_gauge.h"

namespace rackchaos::runner {

class ObservationDriver {
 public:
  using Publish = std::function<void(cluster::Observation)>;

  ObservationDriver(const cluster::Topology& topo, Clock& clock, EventSink& events, Publish publish);
  ~ObservationDriver();
  ObservationDriver(const ObservationDriver&) = delete;
  ObservationDriver& operator=(const ObservationDriver&) = delete;

  // The tray hosts the sources read (BuildHostMaps); sources may keep references into it.
  std::vector<observe::HostMap>& hosts() { return hosts_; }
  void Add(SourceList sources);
  size_t size() const { return sources_.size(); }

  void Start();  // asks every source now, then on its period
  void Pump();   // handles what arrived since the last call
  void Stop();   // no further asks; answers in flight are dropped
  // Handles one answer (what Pump does per answer); public for the tests of the translation.
  void Handle(const observe::Observed& observed);

 private:
  void Tick(size_t i);
  void Error(const observe::ObservationError& e, Time now);
  const observe::HostMap* HostOf(ComponentId node) const;

  const cluster::Topology& topo_;
  Clock& clock_;
  EventSink& events_;
  Publish publish_;
  std::vector<observe::HostMap> hosts_;
  SourceList sources_;
  std::vector<TimerId> timers_;
  bool running_ = false;
  std::map<std::pair<ComponentId, int>, bool> port_up_;
  std::set<ComponentId> lost_;                 // GPUs reported lost, not seen since
  observe::XidGauge xid_gauge_;
  using ErrorKey = std::tuple<std::string, int, int, ComponentId>;  // host, source, problem, component
  std::map<ErrorKey, Time> recorded_;          // when each error was last put on the record
  std::map<std::pair<std::string, int>, Time> warned_;  // when each (host, source) was last warned about
  std::map<std::pair<std::string, int>, long> suppressed_;  // errors not warned about since
};

}  // namespace rackchaos::runner
