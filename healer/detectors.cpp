// The detectors: heartbeat loss, kernel Xid lines, link state, thermal telemetry, stragglers, job failures,
// reported part failures, power-capped clocks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "healer/by_component.h"
#include "healer/detector.h"

namespace rackchaos::healer {
namespace {

using cluster::Observation;

template <typename T>
const T* As(const Observation& obs) {
  return std::get_if<T>(&obs.body);
}

// A node is lost after `missed_beats` heartbeats fail to arrive.
class HeartbeatDetector : public Detector {
 public:
  std::string_view name() const override { return "heartbeat"; }
  size_t reads() const override { return KindOf<cluster::HeartbeatChange>(); }
  void OnObservation(const Observation& obs, DetectorContext& ctx) override {
    const auto* hb = As<cluster::HeartbeatChange>(obs);
    if (!hb) return;
    auto it = pending_.find(hb->node);
    if (hb->alive) {
      if (it != pending_.end()) ctx.clock.Cancel(it->second);
      pending_.erase(hb->node);
      lost_.erase(hb->node);
      return;
    }
    // A repeated "stopped" report, before or after the symptom, is the same loss.
    if (it != pending_.end() || lost_.count(hb->node)) return;
    Time deadline = hb->last_seen + hb->period * ctx.policy.heartbeat_missed_beats;
    ComponentId node = hb->node;
    pending_[node] = ctx.clock.CallAt(deadline, [this, &ctx, node] {
      pending_.erase(node);
      lost_.insert(node);
      ctx.raise({SymptomClass::kHeartbeatLost, "heartbeat", node, kNoJob,
                 std::to_string(ctx.policy.heartbeat_missed_beats) + " heartbeats missed", XidAction::kNone});
    });
  }

 private:
  std::map<ComponentId, TimerId> pending_;
  std::set<ComponentId> lost_;  // reported lost, not heard from since
};

// Reads the kernel log for Xid lines and maps their PCI address to a GPU of the node.
class XidDetector : public Detector {
 public:
  std::string_view name() const override { return "xid"; }
  size_t reads() const override { return KindOf<cluster::KernelLogLine>(); }
  void OnObservation(const Observation& obs, DetectorContext& ctx) override {
    const auto* log = As<cluster::KernelLogLine>(obs);
    if (!log) return;
    auto xid = ParseXidLine(log->line);
    if (!xid || xid->is_sxid) return;
    auto gpu = ctx.topo.GpuByPci(log->node, xid->pci);
    ComponentId target = gpu ? *gpu : log->node;
    std::string text = "Xid " + std::to_string(xid->code) + " (" + XidDescription(xid->code) + "): " + XidActionName(xid->action);
    ctx.raise({SymptomClass::kXid, "xid", target, kNoJob, text, xid->action});
  }
};

class LinkStateDetector : public Detector {
 public:
  std::string_view name() const override { return "link_state"; }
  size_t reads() const override { return KindOf<cluster::LinkStateChange>(); }
  void OnObservation(const Observation& obs, DetectorContext& ctx) override {
    const auto* link = As<cluster::LinkStateChange>(obs);
    if (!link) return;
    auto key = std::make_pair(link->component, link->port);
    if (link->up) {
      if (down_.erase(key)) ctx.clear(SymptomClass::kLinkDown, link->component);
      return;
    }
    if (!down_.insert(key).second) return;
    std::string what = link->port >= 0 ? "NVLink port " + std::to_string(link->port) + " inactive" : "NIC link down";
    ctx.raise({SymptomClass::kLinkDown, "link_state", link->component, kNoJob, what, XidAction::kNone, link->port});
  }

 private:
  std::set<std::pair<ComponentId, int>> down_;
};

// GPU temperature or thermal throttling for `samples` polls in a row; coolant flow below nominal for
// `samples` samples in a row (one noisy flow reading is not a stuck valve).
class ThermalDetector : public Detector {
 public:
  std::string_view name() const override { return "thermal"; }
  size_t reads() const override { return KindOf<cluster::TelemetrySample>(); }
  bool ReadsMetric(cluster::Metric m, const Policy&) const override {
    using cluster::Metric;
    return m == Metric::kLeak || m == Metric::kCoolantFlow || m == Metric::kSwitchTemperature ||
           m == Metric::kGpuTemperature || m == Metric::kThermalThrottle;
  }
  // A GPU poll matters from the alert on (`>=`); the throttle bit is 0 on a GPU that does not throttle.
  double GpuTemperatureLineC(const Policy& policy) const override { return policy.thermal_temperature_c; }
  void OnObservation(const Observation& obs, DetectorContext& ctx) override {
    const auto* s = As<cluster::TelemetrySample>(obs);
    if (!s) return;
    const Policy& p = ctx.policy;
    if (s->metric == cluster::Metric::kLeak) {  // a leak sensor: one wet reading is enough
      if (s->value > 0) ctx.raise({SymptomClass::kLeak, "thermal", s->component, kNoJob, "leak sensor tripped", XidAction::kNone});
      return;
    }
    if (s->metric == cluster::Metric::kCoolantFlow) {
      double nominal = ctx.topo.model().tray_flow_l_per_min;
      bool low = s->value < nominal * (1 - p.thermal_flow_drop);
      if (!low && streak_[s->component] > 0) ctx.clear(SymptomClass::kFlowLow, s->component);
      if (Latch(s->component, low, p.thermal_samples))
        ctx.raise({SymptomClass::kFlowLow, "thermal", s->component, kNoJob,
                   "coolant flow " + Fmt(s->value) + " L/min (nominal " + Fmt(nominal) + ")", XidAction::kNone});
      return;
    }
    if (s->metric == cluster::Metric::kSwitchTemperature) {  // a switch tray: the GPUs' margin under its slowdown
      const cluster::RackModel& m = ctx.topo.model();
      const double limit = p.thermal_temperature_c + (m.switch_slowdown_c - m.gpu_slowdown_c);
      if (HotPoll(s->component, obs.at, s->value >= limit, p.thermal_samples))
        ctx.raise({SymptomClass::kThermal, "thermal", s->component, kNoJob,
                   "switch tray temperature " + Fmt(s->value) + " C (alert " + Fmt(limit) + " C, slowdown " +
                       Fmt(m.switch_slowdown_c) + " C)",
                   XidAction::kNone});
      return;
    }
    if (s->metric != cluster::Metric::kGpuTemperature && s->metric != cluster::Metric::kThermalThrottle) return;
    bool hot = (s->metric == cluster::Metric::kGpuTemperature && s->value >= p.thermal_temperature_c) ||
               (s->metric == cluster::Metric::kThermalThrottle && s->value > 0);
    if (HotPoll(s->component, obs.at, hot, p.thermal_samples))
      ctx.raise({SymptomClass::kThermal, "thermal", s->component, kNoJob,
                 s->metric == cluster::Metric::kThermalThrottle ? "thermal slowdown active"
                                                                : "temperature " + Fmt(s->value) + " C",
                 XidAction::kNone});
  }

 private:
  static std::string Fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  // Counts consecutive abnormal samples; true once when the streak reaches `need`.
  bool Latch(ComponentId c, bool abnormal, int need) {
    int& n = streak_[c];
    if (!abnormal) {
      n = 0;
      return false;
    }
    return ++n == need;
  }
  // A GPU's temperature and throttle samples of one poll share a time and count as one sample: the poll
  // is hot if either is. Counting each would make one hot, throttling poll meet `samples: 2` on its own.
  // True once per streak, when the count of hot polls in a row reaches `need`.
  bool HotPoll(ComponentId gpu, Time at, bool hot, int need) {
    Poll& p = polls_[gpu];
    if (at != p.at) {  // a new poll: close the previous one
      p.before = p.hot ? p.before + 1 : 0;
      if (!p.hot) p.raised = false;
      p.at = at;
      p.hot = false;
    }
    p.hot = p.hot || hot;
    if (!p.hot || p.raised || p.before + 1 < need) return false;
    p.raised = true;
    return true;
  }
  struct Poll {
    Time at{-1};
    bool hot = false;     // this poll so far
    int before = 0;       // hot polls in a row before this one
    bool raised = false;  // this streak already raised its symptom
  };
  // Looked up per sample, never walked: an array by component id.
  ByComponent<int> streak_;   // coolant flow, per valve
  ByComponent<Poll> polls_;  // temperature and throttle, per GPU; temperature per switch tray
};

// A GPU its power limit holds back: the power-cap clock event (SW power cap or HW power brake) active
// and the SM clock below min_clock of its maximum, in the same poll, for `samples` polls in a row. Either
// alone says little: a GPU running at its normal limit reports the power cap routinely, and heat (the
// thermal detector's) or an idle GPU lowers the clock too. Off unless the policy turns it on
// (detectors.clock.enabled). A poll is one time per GPU, as in the thermal detector.
class ClockDetector : public Detector {
 public:
  std::string_view name() const override { return "clock"; }
  size_t reads() const override { return KindOf<cluster::TelemetrySample>(); }
  bool ReadsMetric(cluster::Metric m, const Policy& policy) const override {
    return policy.clock_enabled && (m == cluster::Metric::kPowerCapped || m == cluster::Metric::kGpuClockFraction);
  }
  // It acts only on a GPU at its power cap, whose polls never stop.
  double GpuTemperatureLineC(const Policy&) const override { return std::numeric_limits<double>::infinity(); }
  void OnObservation(const Observation& obs, DetectorContext& ctx) override {
    const auto* s = As<cluster::TelemetrySample>(obs);
    const Policy& policy = ctx.policy;
    if (!s || !policy.clock_enabled) return;
    if (s->metric != cluster::Metric::kPowerCapped && s->metric != cluster::Metric::kGpuClockFraction) return;
    Poll& p = polls_[s->component];
    if (obs.at != p.at) {  // a new poll: close the previous one
      const bool slow = p.Slow(policy.clock_min_fraction);
      p.before = slow ? p.before + 1 : 0;
      if (!slow) p.raised = false;
      p = Poll{obs.at, false, -1, p.before, p.raised};
    }
    if (s->metric == cluster::Metric::kPowerCapped)
      p.capped = p.capped || s->value > 0;
    else
      p.clock = s->value;
    if (!p.Slow(policy.clock_min_fraction) || p.raised || p.before + 1 < policy.clock_samples) return;
    p.raised = true;
    char text[96];
    std::snprintf(text, sizeof text, "SM clock %.0f%% of max, held by the power cap for %d polls", p.clock * 100,
                  p.before + 1);
    ctx.raise({SymptomClass::kClockLow, "clock", s->component, kNoJob, text, XidAction::kNone});
  }

 private:
  struct Poll {
    Time at{-1};
    bool capped = false;  // this poll's power-cap clock event
    double clock = -1;    // this poll's SM clock as a fraction of max; -1 = not read (yet)
    int before = 0;       // slow polls in a row before this one
    bool raised = false;  // this streak already raised its symptom
    bool Slow(double min_fraction) const { return capped && clock >= 0 && clock < min_fraction; }
  };
  ByComponent<Poll> polls_;  // per GPU
};

// A rank that is a robust outlier in every step report for a whole window, in one of two series:
// - straggler (compute times): a synchronous job runs at its slowest rank, so that rank is the one
//   that waits least in collectives;
// - slow_link (send times): the rank behind a slow link takes longer to send its share, while the
//   ranks waiting for it only see longer steps. An outlier must also exceed the median by min_excess.
//   In a full report of fewer than kFewRanks ranks each rank is judged against the others only: one slow
//   rank of 4 would otherwise inflate the MAD it is judged by (and its peer's sends, slowed by the
//   degraded link's late ACKs, lift the median).
constexpr size_t kFewRanks = 16;

class OutlierDetector : public Detector {
 public:
  explicit OutlierDetector(bool comm) : comm_(comm) {}
  std::string_view name() const override { return comm_ ? "slow_link" : "straggler"; }
  size_t reads() const override { return KindOf<cluster::StepReport>(); }
  void OnObservation(const Observation& obs, DetectorContext& ctx) override {
    const auto* r = As<cluster::StepReport>(obs);
    if (!r) return;
    const std::vector<float>& series = comm_ ? r->comm_s : r->compute_s;
    if (r->rank_gpus.size() != series.size() || (comm_ && series.empty())) return;  // not measured / malformed
    const Policy& p = ctx.policy;
    const OutlierTest t = comm_ ? p.slow_link
                                : OutlierTest{p.straggler_window, p.straggler_min_reports, p.straggler_mad_threshold,
                                              p.straggler_min_slowdown, Duration{}};
    const RankSummary bulk = comm_ ? RankSummary{r->bulk_ranks, r->bulk_comm_median_s, r->bulk_comm_mad_s}
                                   : RankSummary{r->bulk_ranks, r->bulk_median_s, r->bulk_mad_s};
    std::vector<size_t> out =
        comm_ && bulk.ranks == 0 && series.size() < kFewRanks
            ? LeaveOneOutOutliers(series, t.mad_threshold, t.min_slowdown, t.min_excess.Seconds())
            : RobustOutliers(series, t.mad_threshold, t.min_slowdown, bulk, t.min_excess.Seconds());
    std::set<ComponentId> now;
    for (size_t i : out) now.insert(r->rank_gpus[i]);
    auto& streaks = streaks_[r->job];
    for (auto it = streaks.begin(); it != streaks.end();)  // a rank back in line resets its streak
      it = now.count(it->first) ? std::next(it) : streaks.erase(it);
    for (ComponentId g : now) {
      Streak& s = streaks[g];
      if (s.reports == 0) s.since = obs.at;
      ++s.reports;
      if (!s.raised && s.reports >= t.min_reports && obs.at - s.since >= t.window) {
        s.raised = true;
        const std::string what = comm_ ? "rank's sends slower than the median for " : "rank slower than the median for ";
        ctx.raise({comm_ ? SymptomClass::kSlowLink : SymptomClass::kStraggler, std::string(name()), g, r->job,
                   what + FormatDuration(obs.at - s.since), XidAction::kNone});
      }
    }
  }

 private:
  bool comm_;
  struct Streak {
    Time since{};
    int reports = 0;
    bool raised = false;
  };
  std::map<JobId, std::map<ComponentId, Streak>> streaks_;
};

class JobFailureDetector : public Detector {
 public:
  std::string_view name() const override { return "job_failure"; }
  size_t reads() const override { return KindOf<cluster::JobStatus>(); }
  void OnObservation(const Observation& obs, DetectorContext& ctx) override {
    const auto* js = As<cluster::JobStatus>(obs);
    if (!js || js->state != JobState::kFailed) return;
    ctx.raise({SymptomClass::kJobFailed, "job_failure", kNoComponent, js->job, "job failed: " + js->reason,
               XidAction::kNone});
  }
};

// A part whose own controller reports it failed: a PSU (the shelf's BMC, Metric::kPsuOk, detector
// "power"), a CDU pump, a DPU or a spine switch (Metric::kPartOk, detector "part_health"). Raised once;
// cleared when the part reports OK again.
class HealthReportDetector : public Detector {
 public:
  HealthReportDetector(std::string_view name, cluster::Metric metric, SymptomClass cls, std::string text)
      : name_(name), metric_(metric), cls_(cls), text_(std::move(text)) {}
  std::string_view name() const override { return name_; }
  size_t reads() const override { return KindOf<cluster::TelemetrySample>(); }
  bool ReadsMetric(cluster::Metric m, const Policy&) const override { return m == metric_; }
  void OnObservation(const Observation& obs, DetectorContext& ctx) override {
    const auto* s = As<cluster::TelemetrySample>(obs);
    if (!s || s->metric != metric_) return;
    if (s->value > 0) {
      if (failed_.erase(s->component)) ctx.clear(cls_, s->component);
      return;
    }
    if (failed_.insert(s->component).second)
      ctx.raise({cls_, std::string(name_), s->component, kNoJob, text_, XidAction::kNone});
  }

 private:
  std::string_view name_;
  cluster::Metric metric_;
  SymptomClass cls_;
  std::string text_;
  std::set<ComponentId> failed_;
};

}  // namespace

const char* SymptomClassName(SymptomClass c) {
  switch (c) {
    case SymptomClass::kHeartbeatLost: return "heartbeat_lost";
    case SymptomClass::kXid: return "xid";
    case SymptomClass::kLinkDown: return "link_down";
    case SymptomClass::kStraggler: return "straggler";
    case SymptomClass::kSlowLink: return "slow_link";
    case SymptomClass::kThermal: return "thermal";
    case SymptomClass::kFlowLow: return "flow_low";
    case SymptomClass::kJobFailed: return "job_failed";
    case SymptomClass::kPsuFailed: return "psu_failed";
    case SymptomClass::kLeak: return "leak";
    case SymptomClass::kPartFailed: return "part_failed";
    case SymptomClass::kClockLow: return "clock_low";
  }
  return "unknown";
}

namespace {
// Median and MAD of `v` (reordered).
std::pair<double, double> MedianMad(std::vector<float>& v) {
  auto mid = v.begin() + static_cast<long>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double median = *mid;
  for (float& x : v) x = static_cast<float>(std::fabs(x - median));
  std::nth_element(v.begin(), mid, v.end());
  return {median, *mid};
}
}  // namespace

std::vector<size_t> LeaveOneOutOutliers(const std::vector<float>& x, double threshold, double min_slowdown,
                                        double min_excess_s) {
  std::vector<size_t> out;
  if (x.size() < 3) return out;
  std::vector<float> others;
  for (size_t i = 0; i < x.size(); ++i) {
    others.clear();
    for (size_t j = 0; j < x.size(); ++j)
      if (j != i) others.push_back(x[j]);
    auto [median, mad] = MedianMad(others);
    mad = std::max(mad, median * 1e-4);
    const double excess = x[i] - median;
    if (excess / (1.4826 * mad) > threshold && excess > median * min_slowdown && excess > min_excess_s) out.push_back(i);
  }
  return out;
}

std::vector<size_t> RobustOutliers(const std::vector<float>& compute_s, double threshold, double min_slowdown,
                                   const RankSummary& bulk, double min_excess_s) {
  std::vector<size_t> out;
  if (compute_s.size() + static_cast<size_t>(std::max<int64_t>(bulk.ranks, 0)) < 3) return out;
  double median = 0, mad = 0;
  if (bulk.ranks > static_cast<int64_t>(compute_s.size())) {
    // The unlisted bulk is the majority: its median and MAD are the normal ranks' (a few listed ranks
    // move the median of all by less than the bulk's own spread).
    median = bulk.median_s;
    mad = bulk.mad_s;
  } else {
    std::vector<float> v(compute_s);
    v.insert(v.end(), static_cast<size_t>(std::max<int64_t>(bulk.ranks, 0)), static_cast<float>(bulk.median_s));
    std::tie(median, mad) = MedianMad(v);
    if (bulk.ranks > 0) mad = std::max(mad, bulk.mad_s);
  }
  mad = std::max(mad, median * 1e-4);  // all-equal ranks: no division by zero
  for (size_t i = 0; i < compute_s.size(); ++i) {
    double excess = compute_s[i] - median;
    if (excess / (1.4826 * mad) > threshold && excess > median * min_slowdown && excess > min_excess_s) out.push_back(i);
  }
  return out;
}

double Detector::GpuTemperatureLineC(const Policy& policy) const {
  using cluster::Metric;
  const size_t kind = reads();
  if (kind == kAllKinds || kind == KindOf<cluster::TelemetrySample>())
    for (size_t i = 0; i < cluster::kMetricCount; ++i)
      if (const Metric m = static_cast<Metric>(i); cluster::IsGpuMetric(m) && ReadsMetric(m, policy))
        return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::infinity();
}

const std::vector<DetectorInfo>& DetectorTable() {
  static const std::vector<DetectorInfo> kTable = {
      {"heartbeat", "node heartbeats missed for N periods", [] { return std::make_unique<HeartbeatDetector>(); },
       "Node heartbeats (period from the node). Raises 'heartbeat lost' for a node not heard from for "
       "missed_beats periods; a node heard again clears it.",
       "detectors.heartbeat.missed_beats"},
      {"xid", "NVIDIA Xid lines in the kernel log, with the catalogue's action", [] { return std::make_unique<XidDetector>(); },
       "Kernel log lines. Each NVIDIA Xid line (not SXid) is mapped by PCI bus id to a GPU of the node and raised "
       "with the Xid catalogue's recommended action (reset GPU, reboot node, ...).",
       ""},
      {"link_state", "NVLink ports inactive or NIC links down", [] { return std::make_unique<LinkStateDetector>(); },
       "Link state changes: an NVLink port going inactive or a NIC link going down raises a symptom at once; the "
       "link coming back up clears it.",
       ""},
      {"thermal", "GPU and switch-tray temperature, thermal slowdown, coolant flow", [] { return std::make_unique<ThermalDetector>(); },
       "Telemetry polls: GPU temperature at or above temperature_c (or thermal slowdown active) for `samples` "
       "polls in a row; an NVLink switch tray's temperature at or above temperature_c plus the model's switch-tray "
       "slowdown minus its GPU slowdown temperature (the same margin under its own slowdown) for `samples` polls in "
       "a row; coolant flow below (1 - flow_drop) x the model's nominal tray flow for `samples` samples in a "
       "row; a tray zone's leak sensor tripped (one wet reading).",
       "detectors.thermal.temperature_c, detectors.thermal.samples, detectors.thermal.flow_drop"},
      {"straggler", "ranks slower than the rest (median absolute deviation over a window)", [] { return std::make_unique<OutlierDetector>(false); },
       "Per-rank step reports: a rank whose compute time is a robust outlier (|x - median| / (1.4826 MAD) above "
       "mad_threshold and at least min_slowdown slower) in min_reports reports spanning a whole window.",
       "detectors.straggler.window, detectors.straggler.min_reports, detectors.straggler.mad_threshold, "
       "detectors.straggler.min_slowdown"},
      {"slow_link", "ranks whose sends are slower than the rest: a degraded link (median absolute deviation over a window)",
       [] { return std::make_unique<OutlierDetector>(true); },
       "Per-rank send times in step reports (jobs that measure them): a rank whose time to send its share of a "
       "collective is a robust outlier (as straggler, and above the median by at least min_excess) in min_reports "
       "reports spanning a whole window. The link itself reads up and logs nothing.",
       "detectors.slow_link.window, detectors.slow_link.min_reports, detectors.slow_link.mad_threshold, "
       "detectors.slow_link.min_slowdown, detectors.slow_link.min_excess"},
      {"job_failure", "jobs the scheduler reports failed", [] { return std::make_unique<JobFailureDetector>(); },
       "Scheduler job state: a job the scheduler reports failed (e.g. the NCCL watchdog fired) raises a job-level "
       "symptom.",
       ""},
      {"power", "PSUs a power shelf reports failed",
       [] {
         return std::make_unique<HealthReportDetector>("power", cluster::Metric::kPsuOk, SymptomClass::kPsuFailed,
                                                       "PSU reports failed");
       },
       "PSU status from the power shelves' BMCs: a PSU reported failed raises a symptom at once; reported OK "
       "again clears it.",
       ""},
      {"part_health", "CDU pumps, DPUs and spine switches their controllers report failed",
       [] {
         return std::make_unique<HealthReportDetector>("part_health", cluster::Metric::kPartOk, SymptomClass::kPartFailed,
                                                       "part reports failed");
       },
       "Part status from the CDU's controller (pumps), the DPU's BMC and the fabric manager (spines): a part "
       "reported failed raises a symptom at once; reported OK again clears it.",
       ""},
      {"region_probe", "regions, object stores and checkpoint stores their health probes report failing",
       [] {
         return std::make_unique<HealthReportDetector>("region_probe", cluster::Metric::kProbeOk,
                                                       SymptomClass::kPartFailed, "health probe failing");
       },
       "Each region's health probe (plans with cluster.regions): the region's endpoints reachable, its object "
       "store's read throughput within its service level, its checkpoint store acknowledging a test write. A probe "
       "failing raises a symptom at once; passing again clears it.",
       ""},
      {"clock", "GPUs their power cap holds below their clock (off unless the policy enables it)",
       [] { return std::make_unique<ClockDetector>(); },
       "GPU telemetry polls (clock event reasons and SM clock, as nvidia-smi, DCGM and the simulator report them): "
       "with detectors.clock.enabled, a GPU whose power-cap clock event (SW power cap or HW power brake) is active "
       "while its SM clock is below min_clock of its maximum, for `samples` polls in a row. Finds a power cap (a "
       "gpu_throttle) before the job's step times show it as a straggler.",
       "detectors.clock.enabled, detectors.clock.min_clock, detectors.clock.samples"},
  };
  return kTable;
}

}  // namespace rackchaos::healer
