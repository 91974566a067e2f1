#include "runner/replay/replay.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "runner/replay/replay_resolve.h"

namespace rackchaos::runner {
namespace {

using incident::EventKind;
using incident::IncidentEvent;

constexpr size_t kMaxConsequences = 8;
constexpr size_t kMaxRanks = 4096;
constexpr size_t kMaxNcclHosts = 64;

// Builds the fault list event by event; faults stay open (no end yet) in `open` by target.
class Builder {
 public:
  Builder(const incident::Incident& inc, const cluster::Topology& topo, const HostMap& map)
      : inc_(inc), names_(topo, map), topo_(topo) {
    for (const IncidentEvent& e : inc.events) {
      if (e.time.axis == incident::TimeAxis::kNone) continue;
      auto axis = static_cast<size_t>(e.time.axis);
      if (!origin_[axis]) origin_[axis] = e.time.seconds;
      last_ = std::max(last_, e.time.seconds - *origin_[axis]);
    }
    for (const std::string& f : inc.files) file_names_.push_back(std::filesystem::path(f).filename().string());
  }

  ReplayTimeline Build() {
    for (size_t i = 0; i < inc_.events.size(); ++i) {
      index_ = i;
      Event(inc_.events[i]);
    }
    // Faults are appended in event order, which is time order within an axis; requeues point at them
    // by index, so the two axes are put in order together with a permutation.
    std::vector<size_t> order(out_.faults.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return out_.faults[a].at < out_.faults[b].at; });
    std::vector<int> new_index(order.size());
    std::vector<ReplayFault> sorted;
    for (size_t i = 0; i < order.size(); ++i) {
      new_index[order[i]] = static_cast<int>(i);
      sorted.push_back(std::move(out_.faults[order[i]]));
    }
    out_.faults = std::move(sorted);
    for (ReplayJobEvent& j : out_.job_events)
      if (j.fault >= 0) j.fault = new_index[static_cast<size_t>(j.fault)];
    for (const ReplayFault& f : out_.faults)
      if (f.fatal && (!out_.first_fatal || f.at < *out_.first_fatal)) out_.first_fatal = f.at;
    out_.span = last_;
    return std::move(out_);
  }

 private:
  double Offset(const IncidentEvent& e) const {
    if (e.time.axis == incident::TimeAxis::kNone) return 0;
    return e.time.seconds - *origin_[static_cast<size_t>(e.time.axis)];
  }

  // "kernel.log:5 xid 79 on node07 0000:3b:00": the file's name only, so the text fits a terminal.
  std::string Source(const IncidentEvent& e) const {
    std::string s = file_names_[static_cast<size_t>(e.file)] + ":" + std::to_string(e.line) + " " +
                    incident::EventKindName(e.kind);
    if (e.kind == EventKind::kXid || e.kind == EventKind::kSxid) s += " " + std::to_string(e.code);
    if (e.kind == EventKind::kFaultStart || e.kind == EventKind::kFaultEnd) s += " " + e.action;
    if (!e.job.empty()) s += " job " + e.job;
    if (!e.host.empty()) s += " on " + e.host;
    if (!e.address.empty()) s += " " + e.address;
    if (!e.iface.empty()) s += " " + e.iface;
    return s;
  }

  void Skip(const IncidentEvent& e, const std::string& why) {
    ++out_.not_replayed_count;
    if (out_.not_replayed.size() < kMaxNotReplayedListed) out_.not_replayed.push_back({Source(e), why});
  }

  void SkipUnresolved(const IncidentEvent& e, const Status& why) {
    if (e.host.empty()) ++out_.hostless;
    Skip(e, why.message());
  }

  // Open faults are keyed by target and kind: a second event of the same kind on the same target is a
  // follow-up; a different kind (Xid 79 after an Xid 13) is a fault of its own.
  static std::string Key(const std::string& target, const std::string& kind) { return target + " " + kind; }

  void Start(const IncidentEvent& e, std::string kind, std::string target, std::map<std::string, std::string> params,
             bool fatal) {
    if (auto it = open_.find(Key(target, kind)); it != open_.end()) {
      ++out_.faults[it->second].follow_ups;
      ++out_.follow_ups;
      fault_of_event_[index_] = it->second;
      return;
    }
    ReplayFault f;
    f.kind = std::move(kind);
    f.target = std::move(target);
    f.params = std::move(params);
    f.at = Offset(e);
    f.source = Source(e);
    f.fatal = fatal;
    open_[Key(f.target, f.kind)] = out_.faults.size();
    fault_of_event_[index_] = out_.faults.size();
    out_.faults.push_back(std::move(f));
  }

  // Ends the open faults on `target` (of `kind` only, when given).
  void End(const std::string& target, double at, const std::string& kind = "") {
    for (auto it = open_.begin(); it != open_.end();) {
      ReplayFault& f = out_.faults[it->second];
      if (f.target == target && (kind.empty() || f.kind == kind)) {
        f.end = std::max(at, f.at);
        it = open_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // An Xid the driver printed because of an earlier one (45, 154, 63): part of its cause's fault.
  void Consequence(const IncidentEvent& e) {
    auto cause = fault_of_event_.find(static_cast<size_t>(e.caused_by));
    const IncidentEvent& c = inc_.events[static_cast<size_t>(e.caused_by)];
    if (cause == fault_of_event_.end())
      return Skip(e, "caused by " + Source(c) + ", which is not replayed");
    ReplayFault& f = out_.faults[cause->second];
    ++f.follow_ups;
    ++out_.follow_ups;
    std::string what = "xid " + std::to_string(e.code);
    if (e.code == 154) what += " recovery action " + std::to_string(e.recovery_action.value_or(-1));
    if (f.consequences.size() < kMaxConsequences) f.consequences.push_back(what + " (" + e.action + ")");
    fault_of_event_[index_] = cause->second;
  }

  void Xid(const IncidentEvent& e) {
    if (e.caused_by >= 0) return Consequence(e);
    if (e.code == 154)
      return Skip(e, "recovery action " + std::to_string(e.recovery_action.value_or(-1)) + " (" + e.action +
                         ") with no Xid of this GPU before it");
    const std::string& a = e.action;
    if (a == "check_nvlink" && e.severity == incident::Severity::kNonFatal)
      return Skip(e, "non-fatal NVLink error (the driver says so): the link stays up");
    auto target = names_.Gpu(e);
    if (!target.ok()) return SkipUnresolved(e, target.status());
    if (a == "check_nvlink") {
      if (!e.link) return Skip(e, "NVLink Xid without a link number (Link -1: no one link)");
      return Start(e, "link_down", *target + ".nvlink" + std::to_string(*e.link), {}, e.fatal());
    }
    if (a == "restart_app") return Start(e, "process_crash", *target, {}, false);
    if (a == "reset_gpu" || a == "reboot_node" || a == "drain_and_reset" || a == "bus_reset" || a == "system_reboot" ||
        a == "investigate" || a == "xid")
      return Start(e, "gpu_fail", *target, {{"xid", std::to_string(e.code)}}, e.severity != incident::Severity::kNonFatal);
    Skip(e, "Xid " + std::to_string(e.code) + " needs no action (" + a + ")");
  }

  // Faults on `tray` that the event at `at` can be about: started at or before it, not ended before it.
  std::vector<size_t> OpenOnTray(ComponentId tray, double at) {
    std::vector<size_t> out;
    for (size_t i = 0; i < out_.faults.size(); ++i) {
      const ReplayFault& f = out_.faults[i];
      if (names_.TrayOfTarget(f.target) == tray && f.at <= at && !(f.end && *f.end < at)) out.push_back(i);
    }
    return out;
  }

  void Node(const IncidentEvent& e) {
    auto tray = names_.Tray(e.host);
    if (!tray) return Skip(e, "no tray mapped for node '" + e.host + "'");
    const std::string tray_name = topo_.at(*tray).name;
    double at = Offset(e);
    if (e.kind == EventKind::kNodeResume) {
      for (auto& f : out_.faults) {
        if (names_.TrayOfTarget(f.target) != *tray || f.at > at) continue;
        if (f.drained_after && !f.resumed_after) f.resumed_after = at - f.at;
      }
      std::vector<std::pair<std::string, std::string>> ending;  // target, kind
      for (const auto& [key, index] : open_) {
        const ReplayFault& f = out_.faults[index];
        if (names_.TrayOfTarget(f.target) == *tray && f.kind != "process_crash") ending.emplace_back(f.target, f.kind);
      }
      for (const auto& [target, kind] : ending) End(target, at, kind);
      return;
    }
    std::vector<size_t> open = OpenOnTray(*tray, at);
    if (!open.empty()) {
      // The site drained for the first fatal fault; only when none is open, for the first fault.
      size_t pick = open.front();
      for (size_t i : open) {
        if (out_.faults[i].fatal) {
          pick = i;
          break;
        }
      }
      ReplayFault& f = out_.faults[pick];
      if (!f.drained_after) {
        f.drained_after = at - f.at;
        f.drain_reason = e.detail;
      }
      return;
    }
    if (e.kind == EventKind::kNodeDown) {
      Start(e, "tray_pull", tray_name, {}, true);
      out_.faults.back().drained_after = 0;
      out_.faults.back().drain_reason = e.detail;
      return;
    }
    Skip(e, "drain of " + tray_name + " with no fault imported on it (reason: " + e.detail + ")");
  }

  void Job(const IncidentEvent& e) {
    const bool requeue = e.kind == EventKind::kJobRequeue;
    ++(requeue ? out_.requeues : out_.kills);
    if (out_.job_events.size() >= kMaxJobEventsListed) return;
    ReplayJobEvent j{Offset(e), requeue ? "requeue" : "kill", e.job.empty() ? std::to_string(e.code) : e.job, e.host,
                     -1, Source(e)};
    std::optional<ComponentId> tray = e.host.empty() ? std::nullopt : names_.Tray(e.host);
    for (size_t i = 0; i < out_.faults.size(); ++i) {
      const ReplayFault& f = out_.faults[i];
      if (f.at > j.at || (tray && names_.TrayOfTarget(f.target) != *tray)) continue;
      if (j.fault < 0 || f.at >= out_.faults[static_cast<size_t>(j.fault)].at) j.fault = static_cast<int>(i);
    }
    out_.job_events.push_back(std::move(j));
  }

  void Nccl(const IncidentEvent& e) {
    NcclSummary& n = out_.nccl;
    const double at = Offset(e);
    auto first = [&](std::optional<double>& when, std::string& detail) {
      if (e.time.axis == incident::TimeAxis::kNone || (when && *when <= at)) return;
      when = at;
      detail = e.detail;
    };
    if (e.kind == EventKind::kNcclTimeout) {
      ++n.timeouts;
      first(n.first_timeout, n.first_timeout_detail);
      if (e.rank && n.ranks.size() < kMaxRanks && !std::binary_search(n.ranks.begin(), n.ranks.end(), *e.rank))
        n.ranks.insert(std::lower_bound(n.ranks.begin(), n.ranks.end(), *e.rank), *e.rank);
    } else if (e.kind == EventKind::kNcclWarn) {
      ++n.warnings;
      first(n.first_warning, n.first_warning_detail);
      if (!e.host.empty() && n.hosts.size() < kMaxNcclHosts &&
          !std::binary_search(n.hosts.begin(), n.hosts.end(), e.host))
        n.hosts.insert(std::lower_bound(n.hosts.begin(), n.hosts.end(), e.host), e.host);
    } else {
      ++n.errors;
      first(n.first_error, n.first_error_detail);
    }
  }

  void Generic(const IncidentEvent& e) {
    auto target = names_.Component(e);
    if (!target.ok()) return SkipUnresolved(e, target.status());
    if (e.kind == EventKind::kFaultEnd) return End(*target, Offset(e));
    std::map<std::string, std::string> params;
    std::istringstream words(e.detail);
    for (std::string w; words >> w;) {
      size_t eq = w.find('=');
      if (eq != std::string::npos && eq > 0 && eq + 1 < w.size()) params[w.substr(0, eq)] = w.substr(eq + 1);
    }
    const bool fatal = e.action != "process_crash" && e.action != "gpu_throttle";
    Start(e, e.action, *target, std::move(params), fatal);
  }

  void Event(const IncidentEvent& e) {
    switch (e.kind) {
      case EventKind::kXid: return Xid(e);
      case EventKind::kSxid:
        return Skip(e, e.fatal() ? "NVSwitch SXid: no injector for switch faults yet" : "non-fatal SXid");
      case EventKind::kNicDown:
      case EventKind::kNicUp: {
        auto target = names_.Nic(e);
        if (!target.ok()) return SkipUnresolved(e, target.status());
        if (e.kind == EventKind::kNicUp) return End(*target, Offset(e), "link_down");
        return Start(e, "link_down", *target, {}, true);
      }
      case EventKind::kNodeDrain:
      case EventKind::kNodeDown:
      case EventKind::kNodeResume: return Node(e);
      case EventKind::kJobRequeue:
      case EventKind::kJobKill: return Job(e);
      case EventKind::kNcclTimeout:
      case EventKind::kNcclWarn:
      case EventKind::kNcclError: return Nccl(e);
      case EventKind::kFaultStart:
      case EventKind::kFaultEnd: return Generic(e);
      case EventKind::kNote: return Skip(e, "timeline note: " + e.detail);
    }
  }

  const incident::Incident& inc_;
  ReplayNames names_;
  const cluster::Topology& topo_;
  std::vector<std::string> file_names_;
  std::optional<double> origin_[3];
  double last_ = 0;
  size_t index_ = 0;                           // of the event being read
  std::map<size_t, size_t> fault_of_event_;    // event index -> the fault it started or joined
  std::map<std::string, size_t> open_;         // Key(target, kind) -> index in out_.faults
  ReplayTimeline out_;
};

}  // namespace

ReplayTimeline BuildReplayTimeline(const incident::Incident& incident, const cluster::Topology& topo,
                                   const HostMap& map) {
  return Builder(incident, topo, map).Build();
}

}  // namespace rackchaos::runner
