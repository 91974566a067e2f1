#include "runner/site/observe/redfish_sensors.h"

#include <map>

#include "runner/site/observe/json.h"

namespace rackchaos::observe {

namespace {

using cluster::Metric;

struct RedfishReader {
  const std::string& bmc;
  const std::vector<RedfishPoint>& points;
  std::map<size_t, bool> done;  // point index -> read (or reported)
  Observed out;

  void Walk(const JsonValue& v, int depth) {
    if (depth > kMaxJsonDepth) return;
    if (v.is_object()) {
      std::string_view id = v.StringAt("@odata.id");
      std::string_view source = v.StringAt("DataSourceUri");
      for (size_t i = 0; i < points.size(); ++i)
        if (!done.count(i) && (points[i].uri == id || points[i].uri == source)) Read(i, v);
    }
    for (const JsonValue& item : v.items()) Walk(item, depth + 1);
  }

  void Err(size_t i, Problem p, const std::string& what) {
    done[i] = true;
    out.Error(bmc, Source::kRedfish, p, points[i].component, points[i].uri + ": " + what);
  }
  void Sample(size_t i, double value) {
    done[i] = true;
    out.Add(cluster::TelemetrySample{points[i].component, points[i].metric, value});
  }

  void Read(size_t i, const JsonValue& o) {
    const Metric m = points[i].metric;
    const JsonValue* status = o.Find("Status");
    std::string_view state = status ? status->StringAt("State") : std::string_view();
    if (m == Metric::kPsuOk || m == Metric::kPartOk) {
      std::string_view health = status ? status->StringAt("Health") : std::string_view();
      if (state == "Absent") return Err(i, Problem::kMissing, "Status.State is Absent");
      if (state == "Disabled" || state == "UnavailableOffline") return Sample(i, 0);
      if (health == "OK" || health == "Warning") return Sample(i, 1);
      if (health == "Critical") return Sample(i, 0);
      if (health.empty()) return Err(i, Problem::kMissing, "no Status.Health");
      return Err(i, Problem::kUnreadable, "Status.Health \"" + std::string(health) + "\"");
    }
    if (state == "Absent" || state == "UnavailableOffline" || state == "StandbyOffline")
      return Err(i, Problem::kMissing, "Status.State is " + std::string(state));
    if (m == Metric::kLeak) {
      const JsonValue* d = o.Find("DetectorState");
      if (!d || d->is_null()) return Err(i, Problem::kMissing, "no DetectorState");
      std::string_view s = d->is_string() ? std::string_view(d->text()) : std::string_view();
      if (s == "OK") return Sample(i, 0);
      if (s == "Warning" || s == "Critical") return Sample(i, 1);
      if (s == "Unavailable") return Err(i, Problem::kMissing, "DetectorState is Unavailable");
      return Err(i, Problem::kUnreadable, "DetectorState \"" + std::string(s) + "\"");
    }
    const JsonValue* r = o.Find("Reading");
    if (!r || r->is_null()) return Err(i, Problem::kMissing, r ? "Reading is null" : "no Reading");
    if (!r->is_number()) return Err(i, Problem::kUnreadable, "Reading is not a number");
    std::string_view units = o.StringAt("ReadingUnits");
    std::string_view want = m == Metric::kCoolantFlow ? "L/min" : "Cel";
    if (!units.empty() && units != want)
      return Err(i, Problem::kUnreadable, "ReadingUnits \"" + std::string(units) + "\", expected \"" + std::string(want) + "\"");
    Sample(i, r->number());
  }
};

std::string RedfishErrorText(const JsonValue& error) {
  std::string code(error.StringAt("code")), message(error.StringAt("message"));
  if (code.empty() && message.empty()) return "an error object without code or message";
  return code + (message.empty() ? "" : ": " + message);
}

}  // namespace

Observed ParseRedfish(int http_status, std::string_view body, const std::string& bmc,
                      const std::vector<RedfishPoint>& points) {
  RedfishReader reader{bmc, points, {}, {}};
  Observed& out = reader.out;
  auto doc = ParseJson(body);
  const JsonValue* error = doc.ok() ? doc->Find("error") : nullptr;
  if (http_status != 200) {
    std::string what = "HTTP " + std::to_string(http_status) + (error ? ": " + RedfishErrorText(*error) : "");
    Problem p = http_status >= 500 || http_status <= 0 ? Problem::kUnavailable : Problem::kToolError;
    for (const RedfishPoint& pt : points) out.Error(bmc, Source::kRedfish, p, pt.component, pt.uri + ": " + what);
    if (points.empty()) out.Error(bmc, Source::kRedfish, p, kNoComponent, what);
    return out;
  }
  if (!doc.ok()) {
    for (const RedfishPoint& pt : points)
      out.Error(bmc, Source::kRedfish, Problem::kUnreadable, pt.component, pt.uri + ": body is not JSON (" + doc.status().message() + ")");
    return out;
  }
  if (error) out.Error(bmc, Source::kRedfish, Problem::kToolError, kNoComponent, "error in a 200 answer: " + RedfishErrorText(*error));
  reader.Walk(*doc, 0);
  for (size_t i = 0; i < points.size(); ++i)
    if (!reader.done.count(i)) out.Error(bmc, Source::kRedfish, Problem::kMissing, points[i].component, points[i].uri + ": not in the answer");
  return out;
}

}  // namespace rackchaos::observe
