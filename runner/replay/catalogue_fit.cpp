#include "runner/replay/catalogue_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include "core/strings.h"
#include "healer/xid.h"
#include "runner/replay/poisson_interval.h"

namespace rackchaos::runner {
namespace {

using cluster::FailureClass;
using incident::EventKind;
using incident::IncidentEvent;

constexpr double kHour = 3600;
constexpr double kFollowWindow = kHour;  // a drain this soon after a counted failure on its host is its consequence

struct CauseKey {
  FailureClass cls;
  std::string name, injector;
  int xid = 0;
  Duration default_repair;
};

// A drain or down reason -> the cause it names, by words in it; nullopt when it names no part.
std::optional<CauseKey> ReasonCause(std::string_view raw, bool down) {
  const std::string reason = ToLower(raw);
  std::vector<std::string> words;
  std::string word;
  for (char c : reason + " ") {
    if (IsAlnum(c)) word += c;
    else if (!word.empty()) words.push_back(std::exchange(word, ""));
  }
  auto has = [&](std::initializer_list<const char*> prefixes) {
    for (const std::string& w : words)
      for (const char* p : prefixes)
        if (w.starts_with(p)) return true;
    return false;
  };
  const Duration h2 = Duration::Hours(2), h4 = Duration::Hours(4);
  if (has({"nvlink", "nvswitch", "sxid"})) return std::nullopt;  // no catalogue class for the NVLink fabric
  if (has({"xid", "gpu", "hbm"})) return CauseKey{FailureClass::kGpu, "GPU (Slurm drain reason)", "gpu_fail", 79, h4};
  if (has({"ib", "infiniband", "nic", "network", "cable", "mlx", "hca", "roce"}))
    return CauseKey{FailureClass::kNic, "network (Slurm drain reason)", "link_down", 0, h2};
  if (has({"psu", "power"})) return CauseKey{FailureClass::kNode, "power supply", "tray_pull", 0, h2};
  if (has({"ssd", "nvme", "disk"})) return CauseKey{FailureClass::kNode, "SSD", "tray_pull", 0, h2};
  if (has({"dimm", "memory", "mce"})) return CauseKey{FailureClass::kNode, "system memory", "tray_pull", 0, h2};
  if (has({"cpu"})) return CauseKey{FailureClass::kNode, "CPU", "tray_pull", 0, h4};
  if (has({"maint", "reboot", "upgrade", "firmware", "bios"}))
    return CauseKey{FailureClass::kNode, "host maintenance", "tray_pull", 0, h2};
  if (reason.find("not responding") != std::string::npos || reason.find("unresponsive") != std::string::npos ||
      (down && words.empty()))
    return CauseKey{FailureClass::kNode, "node not responding", "tray_pull", 0, h2};
  return std::nullopt;
}

// A root Xid -> its cause; nullopt for actions that are not a failure of the GPU or name none.
std::optional<CauseKey> XidCause(const IncidentEvent& e) {
  const std::string name = "Xid " + std::to_string(e.code) + ": " + healer::XidDescription(e.code);
  if (e.action == "restart_app")
    return CauseKey{FailureClass::kGpu, name, "process_crash", 0, Duration{}};
  for (const char* a : {"reset_gpu", "reboot_node", "drain_and_reset", "bus_reset", "system_reboot", "drain_p2p"})
    if (e.action == a) return CauseKey{FailureClass::kGpu, name, "gpu_fail", e.code, Duration::Hours(4)};
  return std::nullopt;
}

struct Tally {
  CauseKey key;
  int events = 0;
  std::vector<double> repairs;  // seconds
};

// A failure still waiting for its repair to show (a resume of its host, its link up).
struct Open {
  size_t tally;
  double at;
};

class Fitter {
 public:
  Fitter(const incident::Incident& inc, const FitOptions& o) : inc_(inc), o_(o) {}

  void Run() {
    for (const IncidentEvent& e : inc_.events) {
      if (e.time.axis != incident::TimeAxis::kWall) {
        ++fit_.no_wall_time;
        continue;
      }
      if (e.time.seconds < o_.since || e.time.seconds >= o_.until) {
        ++fit_.outside_window;
        continue;
      }
      Take(e);
    }
  }

  CatalogueFit Finish();

 private:
  std::string Where(const IncidentEvent& e) const {
    return (e.file >= 0 && e.file < static_cast<int>(inc_.files.size()) ? inc_.files[e.file] : "?") + ":" +
           std::to_string(e.line);
  }
  void Note(std::map<std::string, NotFitted>& to, const std::string& what, const IncidentEvent& e) {
    NotFitted& n = to[what];
    if (n.count++ == 0) n = {what, 1, Where(e)};
  }
  size_t Count(const CauseKey& key, const IncidentEvent& e) {
    auto it = std::find_if(tallies_.begin(), tallies_.end(), [&](const Tally& t) { return t.key.name == key.name; });
    if (it == tallies_.end()) it = tallies_.insert(tallies_.end(), Tally{key, 0, {}});
    ++it->events;
    ++fit_.failures;
    last_failure_[e.host] = e.time.seconds;
    return static_cast<size_t>(it - tallies_.begin());
  }

  void Take(const IncidentEvent& e);

  const incident::Incident& inc_;
  const FitOptions& o_;
  CatalogueFit fit_;
  std::vector<Tally> tallies_;
  std::map<std::string, NotFitted> unclassified_, not_failures_;
  std::map<std::string, double> last_failure_;        // host -> time of its last counted failure
  std::map<std::string, double> gpu_failed_;          // host + GPU -> time of its last counted Xid
  std::map<std::string, std::vector<Open>> host_open_;  // host -> failures its next resume repairs
  std::map<std::string, Open> nic_down_;              // host + NIC -> its open link-down failure
  std::map<std::string, bool> drained_;               // host -> drained or down, not yet resumed
};

void Fitter::Take(const IncidentEvent& e) {
  const double t = e.time.seconds;
  switch (e.kind) {
    case EventKind::kXid: {
      if (e.caused_by >= 0) return Note(not_failures_, "Xid caused by an earlier Xid (a follow-up)", e);
      auto cause = XidCause(e);
      if (!cause) {
        const std::string why = e.action == "check_nvlink" ? "an NVLink error; no catalogue class for NVLink"
                                : e.action == "none"       ? "informational (action none)"
                                                           : "no known action (" + e.action + ")";
        return Note(e.action == "none" ? not_failures_ : unclassified_, "Xid " + std::to_string(e.code) + ": " + why, e);
      }
      const std::string gpu = e.host + " " + e.address;
      if (auto it = gpu_failed_.find(gpu); it != gpu_failed_.end() && t - it->second < kFollowWindow)
        return Note(not_failures_, "Xid on a GPU that failed within the hour (one failure)", e);
      gpu_failed_[gpu] = t;
      const size_t i = Count(*cause, e);
      if (cause->injector == "gpu_fail") host_open_[e.host].push_back({i, t});
      return;
    }
    case EventKind::kSxid:
      return Note(unclassified_, "SXid " + std::to_string(e.code) + " (NVSwitch): no catalogue class for switches", e);
    case EventKind::kNicDown: {
      const std::string nic = e.host + " " + (e.iface.empty() ? e.address : e.iface);
      if (nic_down_.count(nic)) return Note(not_failures_, "NIC link down while already down", e);
      const size_t i = Count({FailureClass::kNic, "NIC link down", "link_down", 0, Duration::Hours(2)}, e);
      nic_down_[nic] = {i, t};
      return;
    }
    case EventKind::kNicUp: {
      const std::string nic = e.host + " " + (e.iface.empty() ? e.address : e.iface);
      if (auto it = nic_down_.find(nic); it != nic_down_.end()) {
        tallies_[it->second.tally].repairs.push_back(t - it->second.at);
        nic_down_.erase(it);
      }
      return;
    }
    case EventKind::kNodeDrain:
    case EventKind::kNodeDown: {
      const bool down = e.kind == EventKind::kNodeDown;
      if (drained_[e.host]) return Note(not_failures_, "drain or down of a host already out of service", e);
      drained_[e.host] = true;
      if (auto it = last_failure_.find(e.host); it != last_failure_.end() && t - it->second < kFollowWindow)
        return Note(not_failures_, "drain or down within the hour after a counted failure on the host", e);
      auto cause = ReasonCause(e.detail, down);
      if (!cause) {
        drained_[e.host] = false;  // not a failure we count: its resume repairs nothing
        return Note(unclassified_, std::string("Slurm ") + (down ? "down" : "drain") + " reason " + Quote(e.detail.substr(0, 60)) + ": names no part", e);
      }
      host_open_[e.host].push_back({Count(*cause, e), t});
      return;
    }
    case EventKind::kNodeResume: {
      drained_[e.host] = false;
      for (const Open& o : host_open_[e.host]) tallies_[o.tally].repairs.push_back(t - o.at);
      host_open_[e.host].clear();
      return;
    }
    case EventKind::kJobRequeue:
    case EventKind::kJobKill:
      return Note(not_failures_, "job requeue or kill (a consequence)", e);
    case EventKind::kNcclTimeout:
    case EventKind::kNcclWarn:
    case EventKind::kNcclError:
      return Note(not_failures_, "NCCL line (the job's view of a failure)", e);
    default:
      return Note(not_failures_, std::string("timeline row (") + incident::EventKindName(e.kind) + ")", e);
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Three significant digits ("0.00112", "5.43e-05"), plain digits from 1000 up ("4464").
std::string Sig(double v, int digits = 3) {
  char buf[32];
  if (v >= 1000) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

CatalogueFit Fitter::Finish() {
  const double days = (o_.until - o_.since) / 86400;
  for (FailureClass cls : cluster::kFailureClasses)
    fit_.component_days[static_cast<int>(cls)] = o_.components[static_cast<int>(cls)] * days;
  for (const Tally& t : tallies_) {
    FitCause c;
    c.cause.name = t.key.name;
    c.cause.cls = t.key.cls;
    c.cause.injector = t.key.injector;
    c.cause.xid = t.key.xid;
    c.cause.events = t.events;
    const double exposure = fit_.component_days[static_cast<int>(t.key.cls)];
    const PoissonInterval ci = PoissonMeanInterval(t.events);
    c.cause.rate_per_hour = exposure > 0 ? t.events / exposure / 24 : 0;
    c.cause.interval_low = exposure > 0 ? ci.low / exposure : 0;
    c.cause.interval_high = exposure > 0 ? ci.high / exposure : 0;
    c.repairs_seen = static_cast<int>(t.repairs.size());
    c.repair_measured = !t.repairs.empty() && t.key.injector != "process_crash";
    // Whole minutes: a repair is an operator's time, and the YAML stays readable.
    c.cause.repair = c.repair_measured ? Duration::Minutes(std::max<int64_t>(1, std::llround(Median(t.repairs) / 60)))
                                       : t.key.default_repair;
    if (t.events < kFewEvents)
      fit_.warnings.push_back("cause " + Quote(c.cause.name) + ": " + std::to_string(t.events) +
                              " event(s), too few to fit (95% interval " + Sig(*c.cause.interval_low) + " .. " +
                              Sig(*c.cause.interval_high) + " per component-day); kept, but read it as a bound");
    fit_.causes.push_back(std::move(c));
  }
  std::stable_sort(fit_.causes.begin(), fit_.causes.end(), [](const FitCause& a, const FitCause& b) {
    return a.cause.cls != b.cause.cls ? a.cause.cls < b.cause.cls : *a.cause.events > *b.cause.events;
  });
  for (FailureClass cls : cluster::kFailureClasses) {
    const double exposure = fit_.component_days[static_cast<int>(cls)];
    const bool any = std::any_of(fit_.causes.begin(), fit_.causes.end(), [&](const FitCause& c) { return c.cause.cls == cls; });
    if (!any && exposure > 0)
      fit_.warnings.push_back(std::string("no ") + cluster::FailureClassName(cls) +
                              " failure in the window: the catalogue gives the class no cause (rate 0; the 95% upper "
                              "bound is " + Sig(PoissonMeanInterval(0).high / exposure) + " per component-day)");
  }
  if (fit_.no_wall_time > 0)
    fit_.warnings.push_back(std::to_string(fit_.no_wall_time) +
                            " event(s) have no wall-clock time (plain dmesg uptimes) and were not counted; pass --boot-time");
  for (auto& [what, n] : unclassified_) fit_.unclassified.push_back(n);
  for (auto& [what, n] : not_failures_) fit_.not_failures.push_back(n);
  auto by_count = [](const NotFitted& a, const NotFitted& b) { return a.count > b.count; };
  std::stable_sort(fit_.unclassified.begin(), fit_.unclassified.end(), by_count);
  std::stable_sort(fit_.not_failures.begin(), fit_.not_failures.end(), by_count);
  return std::move(fit_);
}

std::string YamlString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out + "\"";
}

}  // namespace

cluster::FailureCatalogue CatalogueFit::Catalogue(const FitOptions& options) const {
  cluster::FailureCatalogue c;
  c.name = options.name;
  c.source = options.source;
  for (const FitCause& f : causes) c.causes.push_back(f.cause);
  return c;
}

CatalogueFit FitCatalogue(const incident::Incident& incident, const FitOptions& options) {
  Fitter f(incident, options);
  f.Run();
  return f.Finish();
}

std::string FittedCatalogueYaml(const CatalogueFit& fit, const FitOptions& o) {
  std::ostringstream y;
  y << "# Failure catalogue fitted by `rackchaos catalogue fit` (docs/catalogue.md). Rates are failures per\n"
    << "# component-day with their exact 95% Poisson interval; exposure (component-days):";
  for (FailureClass cls : cluster::kFailureClasses)
    y << " " << cluster::FailureClassName(cls) << " " << Sig(fit.component_days[static_cast<int>(cls)]);
  y << ".\n# " << fit.failures << " failure(s) counted; " << fit.unclassified.size()
    << " kind(s) of event could not be classified (see the command's output).\n"
    << "name: " << YamlString(o.name) << "\nsource: " << YamlString(o.source) << "\n"
    << "shape: {gpu: 1, nic: 1, node: 1}   # exponential: a fit of counts says nothing about the shape\ncauses:\n";
  for (const FitCause& f : fit.causes) {
    y << "  - {name: " << YamlString(f.cause.name) << ", class: " << cluster::FailureClassName(f.cause.cls)
      << ", rate: " << Sig(f.cause.rate_per_hour * 24, 4) << ", events: " << *f.cause.events << ", interval: ["
      << Sig(*f.cause.interval_low) << ", " << Sig(*f.cause.interval_high) << "], injector: " << f.cause.injector;
    if (f.cause.xid) y << ", xid: " << f.cause.xid;
    y << ", repair: " << FormatDuration(f.cause.repair) << "}";
    if (f.repair_measured)
      y << "   # repair: median of " << f.repairs_seen << " seen";
    else if (f.cause.injector != "process_crash")
      y << "   # repair: [guess], the class default (no repair seen in the logs)";
    y << "\n";
  }
  return y.str();
}

}  // namespace rackchaos::runner
