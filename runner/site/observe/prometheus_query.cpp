#include "runner/site/observe/prometheus_query.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "runner/site/observe/gpu_reading.h"
#include "runner/site/observe/json.h"
#include "runner/site/observe/text.h"

namespace rackchaos::observe {

namespace {

enum class Kind { kTemp, kPower, kSm, kSmMax, kLimit, kReasons, kXid, kCarrier, kUp, kOther };

Kind KindOf(std::string_view name) {
  if (name == "DCGM_FI_DEV_GPU_TEMP") return Kind::kTemp;
  if (name == "DCGM_FI_DEV_POWER_USAGE") return Kind::kPower;
  if (name == "DCGM_FI_DEV_SM_CLOCK") return Kind::kSm;
  if (name == "DCGM_FI_DEV_MAX_SM_CLOCK") return Kind::kSmMax;
  if (name == "DCGM_FI_DEV_POWER_MGMT_LIMIT" || name == "DCGM_FI_DEV_ENFORCED_POWER_LIMIT") return Kind::kLimit;
  if (name == "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS" || name == "DCGM_FI_DEV_CLOCKS_EVENT_REASONS") return Kind::kReasons;
  if (name == "DCGM_FI_DEV_XID_ERRORS") return Kind::kXid;
  if (name == "node_network_carrier") return Kind::kCarrier;
  if (name == "up") return Kind::kUp;
  return Kind::kOther;
}

// A GPU's reading as the series arrive; fields start as "no series".
struct Pending {
  const HostMap* host = nullptr;
  const GpuAddress* gpu = nullptr;
  GpuReading reading;
};

Value NotQueried() { return Value::Absent(Problem::kMissing, "no series"); }

std::string Age(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  return buf;
}

// The newest [time, "value"] of a series: "value" for vectors, the last of "values" for matrices.
const JsonValue* NewestSample(const JsonValue& series) {
  if (const JsonValue* v = series.Find("value")) return v;
  const JsonValue* values = series.Find("values");
  if (!values || !values->is_array() || values->items().empty()) return nullptr;
  return &values->items().back();
}

constexpr FieldNames kPromNames{"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK",
                            "DCGM_FI_DEV_MAX_SM_CLOCK", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"};

class PromReader {
 public:
  PromReader(const std::vector<HostMap>& hosts, const PromQuery& q) : hosts_(hosts), q_(q) {}

  Observed Run(std::string_view body) {
    auto doc = ParseJson(body);
    if (!doc.ok() || !doc->is_object()) return Site(Problem::kUnreadable, "answer is not JSON: " + doc.status().message());
    std::string_view status = doc->StringAt("status");
    if (status == "error")
      return Site(Problem::kToolError, std::string(doc->StringAt("errorType")) + ": " + std::string(doc->StringAt("error")));
    const JsonValue* data = doc->Find("data");
    const JsonValue* result = data ? data->Find("result") : nullptr;
    std::string_view type = data ? data->StringAt("resultType") : std::string_view();
    if (status != "success" || !result || !result->is_array() || (type != "vector" && type != "matrix"))
      return Site(Problem::kUnreadable, "answer has no vector or matrix result (status \"" + std::string(status) +
                                            "\", resultType \"" + std::string(type) + "\")");
    IndexHosts();
    for (const JsonValue& series : result->items()) Series(series);
    Finish();
    return std::move(out_);
  }

 private:
  Observed Site(Problem p, std::string what) {
    out_.Error(q_.server, Source::kPrometheus, p, kNoComponent, std::move(what));
    return std::move(out_);
  }

  // Every name HostMap::Answers accepts, to the first host (in `hosts_` order) that answers to it: a
  // whole site's answer has tens of thousands of series, each looked up here.
  void IndexHosts() {
    for (const HostMap& m : hosts_) {
      if (!m.host.empty()) names_.try_emplace(m.host, &m);
      for (const std::string& a : m.aliases) {
        if (a.empty()) continue;
        names_.try_emplace(a, &m);
        if (size_t colon = a.rfind(':'); colon != std::string::npos && a.find(':') == colon)
          names_.try_emplace(a.substr(0, colon), &m);
      }
    }
  }
  const HostMap* Named(std::string_view name) const {
    if (name.empty()) return nullptr;
    auto it = names_.find(name);
    return it == names_.end() ? nullptr : it->second;
  }

  const HostMap* HostOf(const JsonValue& labels) {
    for (std::string_view key : {"Hostname", "hostname"})
      if (std::string_view h = labels.StringAt(key); !h.empty())
        if (const HostMap* m = Named(h)) return m;
    // The target as given ("10.0.0.7:9400") before its host part alone, so two exporters on one
    // address (different ports) stay apart.
    std::string_view instance = labels.StringAt("instance");
    if (const HostMap* m = Named(instance)) return m;
    return Named(instance.substr(0, instance.rfind(':')));
  }

  void Series(const JsonValue& series) {
    const JsonValue* labels = series.Find("metric");
    if (!labels || !labels->is_object()) return Unreadable("a series without labels");
    std::string_view name = labels->StringAt("__name__");
    Kind kind = KindOf(name);
    if (kind == Kind::kOther) return;
    const JsonValue* sample = NewestSample(series);
    double at = 0, value = 0;
    std::string_view text;
    if (!sample || !sample->is_array() || sample->items().size() != 2 || !sample->items()[0].is_number() ||
        !sample->items()[1].is_string())
      return Unreadable(std::string(name) + ": a series without a [time, \"value\"] sample");
    at = sample->items()[0].number();
    text = sample->items()[1].text();
    const HostMap* host = HostOf(*labels);
    if (!host) {
      if (kind != Kind::kUp) Unmapped(std::string(name) + " of host \"" + HostLabel(*labels) + "\" not in the inventory");
      return;
    }
    const bool nan = text == "NaN";
    const bool number = ParseNumber(text, value);
    const bool stale = q_.now_s - at > q_.max_age_s;
    if (kind == Kind::kUp) {
      if (number && value == 0)
        out_.Error(host->host, Source::kPrometheus, Problem::kUnavailable, host->node,
                   "scrape target " + std::string(labels->StringAt("instance")) + " is down (up == 0)");
      return;
    }
    if (kind == Kind::kCarrier) return Carrier(*host, *labels, number, value, stale, at, text);
    std::string pci = NormalizePci(labels->StringAt("pci_bus_id"));
    uint64_t index = 0;
    bool has_index = ParseCount(labels->StringAt("gpu"), index) && index <= 0xffff;
    const GpuAddress* gpu = host->FindGpu(has_index ? static_cast<int>(index) : -1, pci);
    if (!gpu) gpu = host->FindUuid(labels->StringAt("UUID"));
    if (!gpu)
      return Unmapped(std::string(name) + " of " + HostMap::Describe(has_index ? static_cast<int>(index) : -1, pci) +
                      " on " + host->host + " not in the inventory");
    Pending& p = Gpu(*host, *gpu);
    // An inventory that names the GPU by index only: the exporter's pci_bus_id label gives the address a
    // driver line needs (its Xid gauge becomes one).
    if (p.reading.pci.empty() && !pci.empty()) p.reading.pci = pci;
    Value v;
    if (stale)
      v = Value::Absent(Problem::kStale, "newest sample is " + Age(q_.now_s - at) + " old (limit " + Age(q_.max_age_s) + ")");
    else if (nan)
      v = Value::Absent(Problem::kMissing, "NaN");
    else if (!number)
      v = Value::Absent(Problem::kUnreadable, "unreadable value \"" + std::string(text) + "\"");
    else if ((kind == Kind::kReasons || kind == Kind::kXid) && (value < 0 || value > 9007199254740992.0 || value != std::floor(value)))
      v = Value::Absent(Problem::kUnreadable, "value " + std::string(text) + " is not a bitmask");
    else
      v = (kind == Kind::kReasons || kind == Kind::kXid) ? Value::Bits(static_cast<uint64_t>(value)) : Value::Number(value);
    GpuReading& r = p.reading;
    switch (kind) {
      case Kind::kTemp: r.temperature_c = v; break;
      case Kind::kPower: r.power_w = v; break;
      case Kind::kSm: r.sm_mhz = v; break;
      case Kind::kSmMax: r.sm_max_mhz = v; break;
      case Kind::kLimit: r.power_limit_w = v; break;
      case Kind::kReasons: r.reasons = v; break;
      case Kind::kXid: r.xid = v; break;
      default: break;
    }
  }

  void Carrier(const HostMap& host, const JsonValue& labels, bool number, double value, bool stale, double at,
               std::string_view text) {
    const NicAddress* nic = host.FindNic(labels.StringAt("device"));
    if (!nic) return;  // node_exporter lists every interface; only the inventory's NICs matter
    if (stale)
      out_.Error(host.host, Source::kPrometheus, Problem::kStale, nic->nic,
                 "node_network_carrier of " + nic->device + ": newest sample is " + Age(q_.now_s - at) + " old");
    else if (!number)
      out_.Error(host.host, Source::kPrometheus, Problem::kMissing, nic->nic,
                 "node_network_carrier of " + nic->device + ": " + std::string(text));
    else
      out_.Add(cluster::LinkStateChange{nic->nic, -1, value > 0});
  }

  Pending& Gpu(const HostMap& host, const GpuAddress& gpu) {
    auto [it, added] = pending_.try_emplace({&host, gpu.gpu});
    if (added) {
      it->second.host = &host;
      it->second.gpu = &gpu;
      GpuReading& r = it->second.reading;
      r.index = gpu.index;
      r.pci = gpu.pci;
      r.temperature_c = r.power_w = r.sm_mhz = r.sm_max_mhz = r.power_limit_w = r.reasons = r.xid = NotQueried();
    }
    return it->second;
  }

  void Finish() {
    // Every GPU of the site gets its reading, so a host with no series at all is reported too.
    for (const HostMap& h : hosts_)
      for (const GpuAddress& g : h.gpus) Gpu(h, g);
    const PromExpect& e = q_.expect;
    const std::string_view none;
    // A metric the query did not ask for is no missing data: its name is left empty.
    const FieldNames names{e.temperature ? kPromNames.temperature : none, e.power ? kPromNames.power : none,
                           e.sm_clock ? kPromNames.sm : none, e.sm_max ? kPromNames.sm_max : none,
                           e.reasons ? kPromNames.reasons : none};
    for (auto& [key, p] : pending_) {
      ToObservations(p.reading, *p.gpu, p.host->host, Source::kPrometheus, names, out_);
      if (p.reading.xid.present)
        out_.xid_gauges.push_back({p.host->host, Source::kPrometheus, p.gpu->gpu, p.host->node, p.reading.pci,
                                   static_cast<int>(p.reading.xid.bits & 0xffff)});
      else if (e.xid)
        out_.Error(p.host->host, Source::kPrometheus, p.reading.xid.problem, p.gpu->gpu,
                   HostMap::Describe(p.gpu->index, p.gpu->pci) + " DCGM_FI_DEV_XID_ERRORS: " + p.reading.xid.note);
    }
  }

  static std::string HostLabel(const JsonValue& labels) {
    std::string_view h = labels.StringAt("Hostname");
    if (h.empty()) h = labels.StringAt("hostname");
    if (h.empty()) h = labels.StringAt("instance");
    return std::string(h);
  }
  void Unreadable(std::string what) { out_.Error(q_.server, Source::kPrometheus, Problem::kUnreadable, kNoComponent, std::move(what)); }
  void Unmapped(std::string what) { out_.Error(q_.server, Source::kPrometheus, Problem::kUnmapped, kNoComponent, std::move(what)); }

  const std::vector<HostMap>& hosts_;
  const PromQuery& q_;
  std::map<std::pair<const HostMap*, ComponentId>, Pending> pending_;
  std::map<std::string, const HostMap*, std::less<>> names_;
  Observed out_;
};

}  // namespace

Observed ParsePrometheusQuery(std::string_view body, const std::vector<HostMap>& hosts, const PromQuery& query) {
  return PromReader(hosts, query).Run(body);
}

}  // namespace rackchaos::observe
