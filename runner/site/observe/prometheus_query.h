// The site's Prometheus: one instant query's answer (`/api/v1/query`) over dcgm-exporter's and
// node_exporter's metrics -> telemetry for every host of the site at once.
//
// Series are mapped by their labels: the host by dcgm-exporter's Hostname (or hostname, newer
// versions) label, else the scrape target's `instance` (HostMap::Answers); the GPU by pci_bus_id,
// else gpu (the index), else UUID; a NIC by node_exporter's `device`. Metric names read:
//   DCGM_FI_DEV_GPU_TEMP, DCGM_FI_DEV_POWER_USAGE, DCGM_FI_DEV_SM_CLOCK, DCGM_FI_DEV_MAX_SM_CLOCK,
//   DCGM_FI_DEV_POWER_MGMT_LIMIT / DCGM_FI_DEV_ENFORCED_POWER_LIMIT,
//   DCGM_FI_DEV_CLOCK_THROTTLE_REASONS / DCGM_FI_DEV_CLOCKS_EVENT_REASONS (the bitmask),
//   DCGM_FI_DEV_XID_ERRORS (-> Observed::xid_gauges), node_network_carrier (-> LinkStateChange of a
//   NIC), and `up` (0: the host's exporter does not answer -> kUnavailable).
// resultType "vector" carries the evaluation time, "matrix" (a range selector such as
// `{__name__=~"DCGM_.*"}[30s]`) the samples' own times; the newest sample of a series older than
// `max_age_s` before `now_s` is kStale. Only a range query shows a sample's real age: an instant
// vector reports any sample inside Prometheus' lookback window at the evaluation time.
// NaN is kMissing; status "error" is one kToolError for the site; a GPU of `hosts` without a series
// of a metric in `expect` is kMissing (partial data), naming the GPU and the metric. Never throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runner/site/observe/host_map.h"
#include "runner/site/observe/observed.h"

namespace rackchaos::observe {

// Which GPU metrics the query asks for (a GPU without them is reported missing).
struct PromExpect {
  bool temperature = true, power = true, sm_clock = true, reasons = true, xid = true;
  bool sm_max = false;  // dcgm-exporter's default counters have no maximum clock
};

struct PromQuery {
  std::string server;  // the Prometheus' name, for site-wide errors
  double now_s = 0;    // when the query was asked (Unix seconds)
  double max_age_s = 30;
  PromExpect expect;
};

Observed ParsePrometheusQuery(std::string_view body, const std::vector<HostMap>& hosts, const PromQuery& query);

}  // namespace rackchaos::observe
