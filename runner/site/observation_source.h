// ObservationSource: one way of reading a real site's state (issue 21), driven by SshMonitor.
//
// A source asks its tool on its own period (an SSH command on every tray host, one PromQL query for the
// whole site, a Redfish read on the management host) without blocking, and hands what the tool said to
// the monitor as observe::Observed: the simulator's observation types, devices the tool reported gone,
// Xid gauges, and observation errors for everything it could not say. Parsing is always rackchaos's
// (runner/site/observe), never a site script's. The monitor publishes the observations to the healer and
// records the errors in the report; a source never publishes anything itself.
//
// Threading: Ask() and Take() are called on the run's thread, from the monitor's clock tick (never inside
// an Asio handler). A source whose answers arrive on another thread (an SSH pool or HTTP client callback)
// keeps them behind its own lock until Take().
#pragma once

#include <string>
#include <vector>

#include "core/clock.h"
#include "runner/site/observe/observed.h"

namespace rackchaos::runner {

class ObservationSource {
 public:
  virtual ~ObservationSource() = default;

  // For messages and the report: "nvidia-smi", "journald", "prometheus http://127.0.0.1:9090", ...
  virtual std::string Name() const = 0;
  // How often the monitor calls Ask().
  virtual Duration Period() const = 0;
  // Starts one poll now unless the previous one is still in flight (at most one in flight per host or
  // server, so a slow or unreachable one never piles polls up). Never blocks.
  virtual void Ask(Time now) = 0;
  // Everything that arrived since the last call, in arrival order; empty when nothing did. A poll that
  // timed out or failed arrives as an Observed holding only observation errors (kUnavailable).
  virtual std::vector<observe::Observed> Take() = 0;
  // No further polls; answers still in flight are dropped.
  virtual void Stop() = 0;
};

}  // namespace rackchaos::runner
