// PrometheusSource: the site's Prometheus as an ObservationSource (issue 21). One PromQL range query per
// period over HTTP for the whole site, instead of one SSH poll per host:
//
//   {__name__=~"DCGM_FI_DEV_GPU_TEMP|DCGM_FI_DEV_POWER_USAGE|...|up"}[<2 x max_age>]
//
// asked at `time=<now>` (the runner's Unix time when it asks), so every series' newest sample keeps its
// own timestamp and the parser (observe::ParsePrometheusQuery) can tell a stale one (older than
// max_age) from a fresh one; reading twice as far back as max_age lets a stale series be reported as
// stale rather than as absent. Which metrics are asked for follows the inventory's `provides`:
//   gpu_telemetry  DCGM_FI_DEV_GPU_TEMP, _POWER_USAGE, _SM_CLOCK, _CLOCK_THROTTLE_REASONS and
//                  _CLOCKS_EVENT_REASONS (older and newer names of the bitmask), _MAX_SM_CLOCK unless the
//                  inventory gives max_sm_clock
//   xid            DCGM_FI_DEV_XID_ERRORS
//   nic_links      node_network_carrier (of the trays' `nics`; a NIC with no series is kMissing)
// and always `up` (a scrape target of a mapped host that is down -> kUnavailable for that host).
//
// What cannot be observed is an observation error, never a reading and never a throw: Prometheus
// refusing the connection, not answering within the timeouts, breaking off, or answering HTTP 5xx is
// one kUnavailable error for the site (naming the URL); HTTP 4xx, status "error" and bodies that are
// not Prometheus' JSON are kToolError / kUnreadable; NaN, stale and absent series are the parser's
// kMissing / kStale per GPU and metric. The next period asks again, over a new connection if needed.
//
// Threading: Ask(), Take() and Stop() on the run's thread; the HTTP client answers on its own thread,
// where the answer is parsed and kept behind a lock until Take().
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/topology.h"
#include "runner/site/http_client.h"
#include "runner/site/inventory.h"
#include "runner/site/observation_source.h"
#include "runner/site/observe/host_map.h"
#include "runner/site/observe/prometheus_query.h"

namespace rackchaos::runner {

// The PromQL the source asks (see the header comment).
std::string PrometheusQueryText(const PrometheusConfig& config);

class PrometheusSource : public ObservationSource {
 public:
  PrometheusSource(PrometheusConfig config, std::vector<observe::HostMap> hosts);
  ~PrometheusSource() override;

  std::string Name() const override;  // "prometheus http://host:port"
  Duration Period() const override { return config_.period; }
  void Ask(Time now) override;
  std::vector<observe::Observed> Take() override;
  void Stop() override;

  const std::string& query() const { return query_; }
  // The last answer's costs, for the benchmark: wall time of the HTTP exchange, CPU time of parsing and
  // mapping it (the client thread's), and its size.
  struct Costs {
    double http_s = 0, parse_cpu_s = 0;
    size_t bytes = 0;
    int answers = 0;
  };
  Costs costs() const;

 private:
  observe::Observed Interpret(HttpAnswer answer, double now_s, Costs& costs) const;
  void AddMissingNics(observe::Observed& out) const;

  PrometheusConfig config_;
  HttpUrl url_;
  std::vector<observe::HostMap> hosts_;
  observe::PromQuery base_;
  std::string query_;
  mutable std::mutex mu_;
  bool in_flight_ = false, stopped_ = false;
  std::vector<observe::Observed> arrived_;
  Costs costs_;
  std::unique_ptr<HttpClient> client_;  // last: stopped and destroyed first
};

// The source the inventory's `prometheus:` section configures, over BuildHostMaps' hosts (runner/site/
// host_maps.h) with `max_sm_clock` as every GPU's maximum SM clock; null when it has no such section.
std::unique_ptr<ObservationSource> MakePrometheusSource(const Inventory& inventory, const cluster::Topology& topology);

}  // namespace rackchaos::runner
