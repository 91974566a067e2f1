// The inventory's `prometheus:` section: the site's Prometheus as an observation source (issue 21).
#include <algorithm>

#include "runner/site/http_url.h"
#include "runner/site/inventory_reader.h"

namespace rackchaos::runner {

const std::vector<std::string>& PrometheusObservations() {
  static const std::vector<std::string> kNames = {"gpu_telemetry", "xid", "nic_links"};
  return kNames;
}

namespace inventory_yaml {

namespace {

std::string CheckObservation(const std::string& v) {
  const auto& known = PrometheusObservations();
  if (std::find(known.begin(), known.end(), v) != known.end()) return "";
  return "is not an observation Prometheus provides; expected one of: " + Join(known);
}

}  // namespace

Status ReadPrometheus(Reader& r, const YAML::Node& node, Inventory& inv) {
  PrometheusConfig p;
  p.pos = r.Pos(node);
  RC_ASSIGN_OR_RETURN(auto entries, r.Entries(node, "prometheus", "prometheus"));
  bool has_url = false;
  for (const auto& [k, v] : entries) {
    const std::string key = k.Scalar();
    const InventoryKey& info = InventoryKeyOf("prometheus", key);  // Entries refused any other key
    if (key == "url") {
      RC_RETURN_IF_ERROR(r.Text(v, "prometheus.url", p.url));
      if (auto url = ParseHttpUrl(p.url); !url.ok()) return r.Error(v, "prometheus.url: " + url.status().message());
      has_url = true;
    }
    if (key == "period") RC_RETURN_IF_ERROR(r.Dur(v, "prometheus.period", info, p.period));
    if (key == "max_age") RC_RETURN_IF_ERROR(r.Dur(v, "prometheus.max_age", info, p.max_age));
    if (key == "timeout") RC_RETURN_IF_ERROR(r.Dur(v, "prometheus.timeout", info, p.timeout));
    if (key == "connect_timeout") RC_RETURN_IF_ERROR(r.Dur(v, "prometheus.connect_timeout", info, p.connect_timeout));
    if (key == "max_sm_clock") RC_RETURN_IF_ERROR(r.Int(v, "prometheus.max_sm_clock", info, p.max_sm_clock_mhz));
    if (key == "provides") {
      std::vector<std::string> listed;
      RC_RETURN_IF_ERROR(r.StringList(v, "prometheus.provides", listed, CheckObservation));
      if (listed.empty()) return r.Error(v, "prometheus.provides lists nothing; leave the section out instead");
      p.provides.clear();
      for (const std::string& name : PrometheusObservations())  // table order, each once
        if (std::find(listed.begin(), listed.end(), name) != listed.end()) p.provides.push_back(name);
    }
  }
  if (!has_url) return r.Error(node, "prometheus needs a url (e.g. url: http://prometheus.example:9090)");
  inv.prometheus = std::move(p);
  return Status::Ok();
}

Status CheckOneSourceEach(Reader& r, const YAML::Node& root, const Inventory& inv) {
  if (!inv.prometheus) return Status::Ok();
  const PrometheusConfig& p = *inv.prometheus;
  struct Overlap {
    const char* provided;  // in prometheus.provides
    bool other;            // the other source is configured
    const char* other_name;
    const char* what;
  };
  const Overlap overlaps[] = {
      {"gpu_telemetry", inv.observe.count("gpu") > 0, "observe.gpu", "GPU telemetry"},
      {"xid", inv.observe.count("kernel_log") > 0, "observe.kernel_log", "Xid errors"},
      {"nic_links", inv.actions.count("observe_links") > 0, "healer.observe_links", "NIC link state"},
  };
  const YAML::Node section = Child(root, "prometheus");
  const YAML::Node listed = Child(section, "provides");
  for (const Overlap& o : overlaps) {
    if (!o.other || std::find(p.provides.begin(), p.provides.end(), o.provided) == p.provides.end()) continue;
    return r.Error(listed.IsNull() ? section : listed,
                   std::string("prometheus provides ") + o.provided + (listed.IsNull() ? " (by default)" : "") +
                       " and " + o.other_name + " gives " + o.what + " too; each observation comes from one "
                       "source (the healer would count each reading twice): list in prometheus.provides only what "
                       "the other sources do not give");
  }
  return Status::Ok();
}

}  // namespace inventory_yaml
}  // namespace rackchaos::runner
