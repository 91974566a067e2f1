#include "runner/replay/replay.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace rackchaos::runner {
namespace {

using incident::EventKind;
using incident::IncidentEvent;

// Builds the fault list event by event; faults stay open (no end yet) in `open` by target.
class Builder {
 public:
  Builder(const incident::Incident& inc, const cluster::Topology& topo, const HostMap& map)
      : inc_(inc), topo_(topo), map_(map) {
    for (const IncidentEvent& e : inc.events) {
      if (e.time.axis == incident::TimeAxis::kNone) continue;
      auto axis = static_cast<size_t>(e.time.axis);
      if (!origin_[axis]) origin_[axis] = e.time.seconds;
      last_ = std::max(last_, e.time.seconds - *origin_[axis]);
    }
  }

  ReplayTimeline Build() {
    for (const IncidentEvent& e : inc_.events) Event(e);
    std::stable_sort(out_.faults.begin(), out_.faults.end(), [](const auto& a, const auto& b) { return a.at < b.at; });
    out_.span = last_;
    return std::move(out_);
  }

 private:
  double Offset(const IncidentEvent& e) const {
    if (e.time.axis == incident::TimeAxis::kNone) return 0;
    return e.time.seconds - *origin_[static_cast<size_t>(e.time.axis)];
  }

  std::string Source(const IncidentEvent& e) const {
    std::string s =
        inc_.files[static_cast<size_t>(e.file)] + ":" + std::to_string(e.line) + " " + incident::EventKindName(e.kind);
    if (e.kind == EventKind::kXid || e.kind == EventKind::kSxid) s += " " + std::to_string(e.code);
    if (e.kind == EventKind::kFaultStart || e.kind == EventKind::kFaultEnd) s += " " + e.action;
    if (!e.host.empty()) s += " on " + e.host;
    if (!e.address.empty()) s += " " + e.address;
    if (!e.iface.empty()) s += " " + e.iface;
    return s;
  }

  void Skip(const IncidentEvent& e, const std::string& why) {
    ++out_.not_replayed_count;
    if (out_.not_replayed.size() < kMaxNotReplayedListed) out_.not_replayed.push_back({Source(e), why});
  }

  std::optional<std::string> Mapped(const std::string& host, const std::string& address) const {
    if (address.empty()) return std::nullopt;
    if (auto it = map_.targets.find(host + " " + address); it != map_.targets.end()) return it->second;
    if (auto it = map_.targets.find("* " + address); it != map_.targets.end()) return it->second;
    return std::nullopt;
  }

  std::optional<ComponentId> Tray(const std::string& host) const {
    auto it = map_.trays.find(host);
    if (it == map_.trays.end()) it = map_.trays.find("*");
    if (it == map_.trays.end()) return std::nullopt;
    auto id = topo_.Find(it->second);
    if (!id || topo_.at(*id).kind != cluster::Kind::kComputeTray) return std::nullopt;
    return id;
  }

  // The model target an event names, or why it names none.
  Result<std::string> Resolve(const IncidentEvent& e) const {
    if (auto t = Mapped(e.host, e.address)) return *t;
    if (auto t = Mapped(e.host, e.iface)) return *t;
    if (!e.address.empty() && topo_.ResolveTarget(e.address).ok()) return e.address;  // already a model name
    if (!e.address.empty() && e.address.find(':') != std::string::npos) {
      auto tray = Tray(e.host);
      if (!tray) return Status::NotFound("no tray mapped for host '" + e.host + "' (add 'HOST TRAY' to --gpu-map)");
      if (auto gpu = topo_.GpuByPci(*tray, e.address)) return topo_.at(*gpu).name;
      return Status::NotFound("no GPU with PCI " + e.address + " in " + topo_.at(*tray).name +
                              " (add 'HOST ADDRESS TARGET')");
    }
    if (e.address.empty() && !e.host.empty()) {
      if (auto tray = Tray(e.host)) return topo_.at(*tray).name;
    }
    return Status::NotFound("no model component for '" + e.address + "' on host '" + e.host + "'");
  }

  // The compute tray of a fault's target, resolved once per fault (node events compare trays often).
  ComponentId TrayOfFault(const ReplayFault& f) {
    auto [it, fresh] = tray_of_target_.try_emplace(f.target, kNoComponent);
    if (fresh) {
      if (auto id = topo_.ResolveTarget(f.target); id.ok()) it->second = topo_.TrayOf(id->component);
    }
    return it->second;
  }

  // NICs by interface or PCI address through the map; a line without the interface ("Port module
  // event") finds the NIC through an earlier line of the same host that printed both.
  Result<std::string> ResolveNic(const IncidentEvent& e) {
    const std::string pci_key = e.host + " " + e.address;
    auto target = Mapped(e.host, e.iface);
    if (!target) target = Mapped(e.host, e.address);
    if (!target) {
      if (auto it = nic_by_pci_.find(pci_key); it != nic_by_pci_.end()) target = it->second;
    }
    if (!target)
      return Status::NotFound("no NIC mapped for " + (e.iface.empty() ? e.address : e.iface) + " on host '" + e.host +
                              "' (add 'HOST IFACE r01.trayNN.nicN' to --gpu-map)");
    if (nic_by_pci_.size() < 65536) nic_by_pci_[pci_key] = *target;
    return *target;
  }

  // Open faults are keyed by target and kind: a second event of the same kind on the same target is a
  // follow-up; a different kind (Xid 79 after an Xid 13) is a fault of its own.
  static std::string Key(const std::string& target, const std::string& kind) { return target + " " + kind; }

  void Start(const IncidentEvent& e, std::string kind, std::string target, std::map<std::string, std::string> params) {
    if (auto it = open_.find(Key(target, kind)); it != open_.end()) {
      ++out_.faults[it->second].follow_ups;
      ++out_.follow_ups;
      return;
    }
    ReplayFault f;
    f.kind = std::move(kind);
    f.target = std::move(target);
    f.params = std::move(params);
    f.at = Offset(e);
    f.source = Source(e);
    open_[Key(f.target, f.kind)] = out_.faults.size();
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

  void Xid(const IncidentEvent& e) {
    if (e.code == 154)
      return Skip(e, "recovery action " + std::to_string(e.recovery_action.value_or(-1)) + " (" + e.action +
                         "): a follow-up of the Xid before it");
    auto target = Resolve(e);
    if (!target.ok()) return Skip(e, target.status().message());
    const std::string& a = e.action;
    if (a == "check_nvlink") {
      if (!e.link) return Skip(e, "NVLink Xid without a link number");
      return Start(e, "link_down", *target + ".nvlink" + std::to_string(*e.link), {});
    }
    if (a == "restart_app") return Start(e, "process_crash", *target, {});
    if (a == "reset_gpu" || a == "reboot_node" || a == "drain_and_reset" || a == "bus_reset" || a == "system_reboot" ||
        a == "investigate" || a == "xid")
      return Start(e, "gpu_fail", *target, {{"xid", std::to_string(e.code)}});
    Skip(e, "Xid " + std::to_string(e.code) + " needs no action (" + a + ")");
  }

  void Node(const IncidentEvent& e) {
    auto tray = Tray(e.host);
    if (!tray) return Skip(e, "no tray mapped for node '" + e.host + "'");
    const std::string tray_name = topo_.at(*tray).name;
    double at = Offset(e);
    if (e.kind == EventKind::kNodeResume) {
      for (auto& f : out_.faults) {
        if (TrayOfFault(f) != *tray || f.at > at) continue;
        if (f.drained_after && !f.resumed_after) f.resumed_after = at - f.at;
      }
      std::vector<std::pair<std::string, std::string>> ending;  // target, kind
      for (const auto& [key, index] : open_) {
        const ReplayFault& f = out_.faults[index];
        if (TrayOfFault(f) == *tray && f.kind != "process_crash") ending.emplace_back(f.target, f.kind);
      }
      for (const auto& [target, kind] : ending) End(target, at, kind);
      return;
    }
    bool any = false;
    for (auto& f : out_.faults) {
      if (TrayOfFault(f) != *tray || f.at > at || (f.end && *f.end < at)) continue;
      any = true;
      if (!f.drained_after) {
        f.drained_after = at - f.at;
        f.drain_reason = e.detail;
      }
    }
    if (any) return;
    if (e.kind == EventKind::kNodeDown) {
      Start(e, "tray_pull", tray_name, {});
      out_.faults.back().drained_after = 0;
      out_.faults.back().drain_reason = e.detail;
      return;
    }
    Skip(e, "drain of " + tray_name + " with no fault imported on it (reason: " + e.detail + ")");
  }

  void Generic(const IncidentEvent& e) {
    auto target = Resolve(e);
    if (!target.ok()) return Skip(e, target.status().message());
    if (e.kind == EventKind::kFaultEnd) return End(*target, Offset(e));
    std::map<std::string, std::string> params;
    std::istringstream words(e.detail);
    for (std::string w; words >> w;) {
      size_t eq = w.find('=');
      if (eq != std::string::npos && eq > 0 && eq + 1 < w.size()) params[w.substr(0, eq)] = w.substr(eq + 1);
    }
    Start(e, e.action, *target, std::move(params));
  }

  void Event(const IncidentEvent& e) {
    switch (e.kind) {
      case EventKind::kXid: return Xid(e);
      case EventKind::kSxid:
        return Skip(e, e.fatal ? "NVSwitch SXid: no injector for switch faults yet" : "non-fatal SXid");
      case EventKind::kNicDown:
      case EventKind::kNicUp: {
        auto target = ResolveNic(e);
        if (!target.ok()) return Skip(e, target.status().message());
        if (e.kind == EventKind::kNicUp) return End(*target, Offset(e), "link_down");
        return Start(e, "link_down", *target, {});
      }
      case EventKind::kNodeDrain:
      case EventKind::kNodeDown:
      case EventKind::kNodeResume: return Node(e);
      case EventKind::kJobRequeue: ++out_.requeues; return;
      case EventKind::kFaultStart:
      case EventKind::kFaultEnd: return Generic(e);
      case EventKind::kNote: return Skip(e, "timeline note: " + e.detail);
    }
  }

  const incident::Incident& inc_;
  const cluster::Topology& topo_;
  const HostMap& map_;
  std::optional<double> origin_[3];
  double last_ = 0;
  std::map<std::string, ComponentId> tray_of_target_;
  std::map<std::string, std::string> nic_by_pci_;  // "HOST PCI" -> NIC target seen with its interface
  std::map<std::string, size_t> open_;             // Key(target, kind) -> index in out_.faults
  ReplayTimeline out_;
};

std::string Secs(double s) { return std::to_string(static_cast<int64_t>(std::llround(std::max(0.0, s)))) + "s"; }
std::string Secs(Duration d) { return Secs(d.Seconds()); }

// YAML double-quoted scalar: safe for any text from a log.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string CommentText(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
  return out;
}

// The cluster section: the model, racks or regions (with their spare racks and the link between them).
void ClusterYaml(std::ostream& y, const ClusterSpec& c) {
  y << "cluster:\n  model: " << Quote(c.model) << "\n";
  if (c.regions.empty()) y << "  racks: " << c.racks << "\n";
  else {
    y << "  regions:\n";
    for (const RegionPlan& r : c.regions) {
      y << "    - {name: " << Quote(r.name) << ", racks: " << r.racks;
      if (r.spare_racks >= 0) y << ", spares: {racks: " << r.spare_racks << "}";
      y << "}\n";
    }
    y << "  region_link_gbytes_per_s: " << c.region_link_gbytes_per_s << "\n  object_store_gbytes_per_s: "
      << c.object_store_gbytes_per_s << "\n";
    if (c.region_link_background_percent > 0)
      y << "  region_link_background_percent: " << c.region_link_background_percent << "\n";
  }
  if (c.spare_racks > 0) y << "  spares: {racks: " << c.spare_racks << "}\n";
  y << "  spare_trays: " << c.spare_trays << "\n\n";
}

// One job of workload.jobs, with its home region, input and far checkpoint copy when it has them.
void JobYaml(std::ostream& y, const JobSpec& j) {
  y << "    - name: " << Quote(j.name) << "\n      gpus: " << j.gpus << "\n      parallelism: {tp: " << j.tp
    << ", pp: " << j.pp << ", dp: " << (j.dp ? j.dp : j.gpus / std::max(1, j.tp * j.pp)) << ", ep: " << j.ep
    << "}\n      step_time: " << Secs(j.step_time) << "\n      checkpoint: {interval: " << Secs(j.checkpoint_interval)
    << ", write_time: " << Secs(j.checkpoint_write);
  if (j.checkpoint_copy > Duration{}) y << ", copy_time: " << Secs(j.checkpoint_copy);
  if (j.checkpoint_size_gb > 0) y << ", size_gb: " << j.checkpoint_size_gb;
  y << "}\n      restart_overhead: " << Secs(j.restart_overhead) << "\n      collective_timeout: "
    << Secs(j.collective_timeout) << "\n";
  if (j.min_gpus > 0) y << "      elastic: {min_gpus: " << j.min_gpus << "}\n";
  if (!j.region.text.empty()) y << "      region: " << Quote(j.region.text) << "\n";
  if (j.input_mb_per_s > 0) y << "      input_mb_per_s: " << j.input_mb_per_s << "\n";
  if (j.input_from_object_store) y << "      input_from: object_store\n";
}

}  // namespace

ReplayTimeline BuildReplayTimeline(const incident::Incident& incident, const cluster::Topology& topo,
                                   const HostMap& map) {
  return Builder(incident, topo, map).Build();
}

JobSpec DefaultReplayJob(const cluster::Topology& topo) {
  int gpus = 0, per_tray = 1;
  for (ComponentId tray : topo.trays()) {
    if (topo.at(tray).spare) continue;
    per_tray = std::max<int>(1, static_cast<int>(topo.GpusOfTray(tray).size()));
    gpus += static_cast<int>(topo.GpusOfTray(tray).size());
  }
  JobSpec job;
  job.name = "replay-job";
  job.gpus = gpus;
  job.tp = per_tray;
  job.dp = gpus / per_tray;
  job.step_time = Duration::Seconds(6);
  return job;
}

std::string ReplayPlanYaml(const ReplayTimeline& t, const ReplayPlanOptions& o) {
  std::ostringstream y;
  for (const auto& c : o.comments) y << "# " << CommentText(c) << "\n";
  y << "name: " << Quote(o.name) << "\n";
  if (!o.description.empty()) y << "description: " << Quote(o.description) << "\n";
  y << "seed: " << o.seed << "\n";
  y << "duration: " << Secs(o.lead.Seconds() + t.span + o.tail.Seconds()) << "\n\n";
  ClusterYaml(y, o.cluster);
  y << "workload:\n  jobs:\n";
  for (const JobSpec& j : o.jobs) JobYaml(y, j);
  y << "\nfaults:" << (t.faults.empty() ? " []\n" : "\n");
  for (const ReplayFault& f : t.faults) {
    y << "  # " << CommentText(f.source);
    if (f.follow_ups) y << " (+" << f.follow_ups << " follow-up event(s))";
    y << "\n  - at: " << Secs(o.lead.Seconds() + f.at) << "\n    kind: " << Quote(f.kind)
      << "\n    target: " << Quote(f.target) << "\n";
    if (!f.params.empty()) {
      y << "    params: {";
      bool first = true;
      for (const auto& [k, v] : f.params) {
        y << (first ? "" : ", ") << Quote(k) << ": " << Quote(v);
        first = false;
      }
      y << "}\n";
    }
    if (f.end) y << "    for: " << Secs(std::max(1.0, *f.end - f.at)) << "\n";
  }
  y << "\nhealer:\n  policy: " << Quote(o.healer) << "\n";
  return y.str();
}

}  // namespace rackchaos::runner
