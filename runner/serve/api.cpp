#include "runner/serve/api.h"

#include <optional>

#include "reports/json_writer.h"

namespace rackchaos::serve {
namespace {

using reports::JsonWriter;

void OptSeconds(JsonWriter& w, std::string_view key, const std::optional<double>& s) {
  w.Key(key);
  if (s)
    w.Number(*s);
  else
    w.Null();
}

void Overview(JsonWriter& w, const reports::DbOverview& o) {
  w.Field("runs", o.runs);
  w.Key("by_status");
  w.BeginObject();
  for (const auto& [status, n] : o.by_status) w.Field(status, n);
  w.EndObject();
  w.Field("sweeps", o.sweeps);
  w.Field("qualifications", o.qualifications);
  w.Key("latest_run");
  if (o.latest_run)
    w.Int(*o.latest_run);
  else
    w.Null();
}

void Qualification(JsonWriter& w, const reports::QualificationDetail& q) {
  w.BeginObject();
  w.Field("id", q.id);
  w.Field("rack", q.rack);
  w.Field("suite", q.suite);
  w.Field("started_wall", q.started_wall);
  w.Field("ended_wall", q.ended_wall);
  w.Field("verdict", q.verdict);
  w.Field("reason", q.reason);
  w.Key("plans");
  w.BeginArray();
  for (const reports::QualificationPlanRow& p : q.plans) {
    w.BeginObject();
    w.Field("seq", p.seq);
    w.Field("stage", p.stage);
    w.Field("plan", p.plan_path);
    w.Field("verdict", p.verdict);
    w.Field("reason", p.reason);
    w.Key("run");
    if (p.run_id)
      w.Int(*p.run_id);
    else
      w.Null();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace

std::string DbsJson(const std::vector<DbCard>& dbs) {
  JsonWriter w;
  w.BeginObject();
  w.Key("databases");
  w.BeginArray();
  for (const DbCard& d : dbs) {
    w.BeginObject();
    w.Field("index", d.index);
    w.Field("path", d.path);
    if (d.overview)
      Overview(w, *d.overview);
    else
      w.Field("error", d.error);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string RunsJson(const reports::RunListPage& page) {
  JsonWriter w;
  w.BeginObject();
  w.Field("matching", page.matching);
  w.Key("next_before");
  if (page.next_before)
    w.Int(*page.next_before);
  else
    w.Null();
  w.Key("runs");
  w.BeginArray();
  for (const reports::RunListRow& r : page.runs) {
    w.BeginObject();
    w.Field("id", r.id);
    w.Field("plan", r.plan_name);
    w.Field("status", r.status);
    w.Field("backend", r.backend);
    w.Field("host", r.host);
    w.Field("started_wall", r.started_wall);
    w.Field("ended_wall", r.ended_wall);
    w.Field("seed", r.seed);
    w.Field("faults", r.faults);
    w.Field("unrecovered", r.unrecovered);
    OptSeconds(w, "ttr_max_s", r.ttr_max_s);
    w.Field("reason", r.failed_reason);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string EventsJson(int64_t run, const std::string& status, int64_t after,
                       const std::vector<reports::EventLogRow>& events) {
  JsonWriter w;
  w.BeginObject();
  w.Field("run", run);
  w.Field("status", status);
  w.Field("after", after);
  w.Key("events");
  w.BeginArray();
  for (const reports::EventLogRow& e : events) {
    w.BeginObject();
    w.Field("seq", e.seq);
    w.Field("t_s", e.t_s);
    w.Field("type", e.type);
    w.Field("component", e.component);
    w.Field("job", e.job);
    w.Key("fault");
    if (e.fault)
      w.Int(*e.fault);
    else
      w.Null();
    w.Field("detail", e.detail);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string RackJson(const reports::RackPage& page) {
  JsonWriter w;
  w.BeginObject();
  w.Field("serial", page.serial);
  w.Field("runs_total", page.runs_total);
  w.Key("by_status");
  w.BeginObject();
  for (const auto& [status, n] : page.by_status) w.Field(status, n);
  w.EndObject();
  w.Key("runs");
  w.BeginArray();
  for (const reports::RackRunPoint& r : page.runs) {
    w.BeginObject();
    w.Field("run", r.run);
    w.Field("plan", r.plan_name);
    w.Field("started_wall", r.started_wall);
    w.Field("status", r.status);
    w.Field("faults", r.faults);
    w.Field("isolations", r.isolations);
    w.Field("unrecovered", r.unrecovered);
    OptSeconds(w, "ttd_max_s", r.ttd_max_s);
    OptSeconds(w, "tti_max_s", r.tti_max_s);
    OptSeconds(w, "ttr_max_s", r.ttr_max_s);
    w.EndObject();
  }
  w.EndArray();
  w.Key("isolated");
  w.BeginArray();
  for (const reports::IsolatedPart& p : page.isolated) {
    w.BeginObject();
    w.Field("name", p.name);
    w.Field("serial", p.serial);
    w.Field("isolations", p.isolations);
    w.Field("runs", p.runs);
    w.EndObject();
  }
  w.EndArray();
  w.Key("lemons");
  w.BeginArray();
  for (const reports::RepeatOffender& o : page.lemons) {
    w.BeginObject();
    w.Field("name", o.name);
    w.Field("serial", o.serial);
    w.Field("runs_count", static_cast<int64_t>(o.runs.size()));
    w.Key("runs");  // the newest 100, ascending
    w.BeginArray();
    for (size_t i = o.runs.size() > 100 ? o.runs.size() - 100 : 0; i < o.runs.size(); ++i) w.Int(o.runs[i]);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("qualifications");
  w.BeginArray();
  for (const reports::QualificationDetail& q : page.qualifications) Qualification(w, q);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string RacksJson(const std::vector<std::string>& serials) {
  JsonWriter w;
  w.BeginObject();
  w.StringArray("racks", serials);
  w.EndObject();
  return w.Take();
}

std::string SweepsJson(const std::vector<reports::SweepListRow>& sweeps) {
  JsonWriter w;
  w.BeginObject();
  w.Key("sweeps");
  w.BeginArray();
  for (const reports::SweepListRow& s : sweeps) {
    w.BeginObject();
    w.Field("id", s.id);
    w.Field("plan", s.plan_name);
    w.Field("runs", s.runs);
    w.Field("points", s.points);
    w.Field("not_passed", s.not_passed);
    w.Field("first_run", s.first_run);
    w.Field("last_run", s.last_run);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string SweepJson(const reports::SweepPage& page) {
  JsonWriter w;
  w.BeginObject();
  w.Field("id", page.id);
  w.Field("plan", page.plan_name);
  w.Field("runs", page.runs);
  w.Key("points");
  w.BeginArray();
  for (const reports::SweepPointRow& p : page.points) {
    w.BeginObject();
    w.Field("point", p.point);
    w.Field("runs", p.runs);
    w.Field("passed", p.passed);
    w.Key("metrics");
    w.BeginArray();
    for (const reports::SweepMetricStats& m : p.metrics) {
      w.BeginObject();
      w.Field("metric", m.metric);
      w.Field("n", m.n);
      for (auto [key, value] :
           {std::pair{"mean", m.mean}, {"p50", m.p50}, {"p95", m.p95}, {"min", m.min}, {"max", m.max}}) {
        w.Key(key);
        if (m.n > 0)
          w.Number(value);
        else
          w.Null();
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string QualificationsJson(const std::vector<reports::QualificationDetail>& records) {
  JsonWriter w;
  w.BeginObject();
  w.Key("qualifications");
  w.BeginArray();
  for (const reports::QualificationDetail& q : records) Qualification(w, q);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string CompareJson(const reports::Comparison& comparison) {
  JsonWriter w;
  w.BeginObject();
  w.Field("run_a", comparison.run_a);
  w.Field("run_b", comparison.run_b);
  w.Key("metrics");
  w.BeginArray();
  for (const reports::MetricChange& c : comparison.changes) {
    w.BeginObject();
    w.Field("metric", c.a.name);
    w.Field("is_time", c.a.is_time);
    w.Field("lower_is_better", c.a.lower_is_better);
    w.Field("a", c.a.value);  // null when infinite (never got there)
    w.Field("b", c.b.value);
    w.Field("verdict", c.verdict > 0 ? "better" : c.verdict < 0 ? "worse" : "same");
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string ErrorJson(int status, const std::string& message) {
  JsonWriter w;
  w.BeginObject();
  w.Key("error");
  w.BeginObject();
  w.Field("status", status);
  w.Field("message", message);
  w.EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace rackchaos::serve
