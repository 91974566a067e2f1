// RenderJson: the run as one JSON document for scripts and dashboards.
#include <string>

#include "reports/json_writer.h"
#include "reports/render.h"

namespace rackchaos::reports {
namespace {

void RunObject(JsonWriter& w, const RunRow& r) {
  w.Key("run");
  w.BeginObject();
  w.Field("id", r.id);
  w.Field("plan_name", r.info.plan_name);
  w.Field("plan_path", r.info.plan_path);
  w.Field("plan_hash", r.info.plan_hash);
  // A string: a uint64 seed may not survive a JavaScript double.
  w.Field("seed", std::to_string(r.info.seed));
  w.Field("version", r.info.version);
  w.Field("host", r.info.host);
  w.Field("backend", r.info.backend);
  w.Field("command_line", r.info.command_line);
  w.Field("started_wall", r.info.started_wall);
  w.Key("ended_wall");
  if (r.ended_wall.empty()) w.Null();
  else w.String(r.ended_wall);
  w.Field("status", r.status);
  w.Key("exit_code");
  if (r.exit_code) w.Int(*r.exit_code);
  else w.Null();
  w.Field("failed_reason", r.failed_reason);
  w.EndObject();
}

void ImpactArray(JsonWriter& w, const RunMetrics& m, FaultId fault) {
  w.Key("job_impacts");
  w.BeginArray();
  for (const JobImpact& i : ImpactsOf(m, fault)) {
    w.BeginObject();
    w.Field("job", i.job_name);
    w.Field("interrupted", i.interrupted);
    w.Field("stalled_s", i.stalled);
    w.Field("rework_s", i.rework);
    w.Field("slowdown_hours", i.slowdown_hours);
    w.Field("gpu_hours_lost", i.gpu_hours_lost);
    w.EndObject();
  }
  w.EndArray();
}

void FaultArray(JsonWriter& w, const RunMetrics& m) {
  w.Key("faults");
  w.BeginArray();
  for (const FaultMetrics& f : m.faults) {
    w.BeginObject();
    w.Field("fault", f.fault);
    w.Field("kind", f.kind);
    w.Field("target", f.target);
    w.Field("injected_s", f.injected);
    w.Field("reverted_s", f.reverted);
    w.Field("ttd_s", f.time_to_detect);
    w.Field("tti_s", f.time_to_isolate);
    w.Field("ttr_s", f.time_to_recover);
    w.Field("recovered", f.time_to_recover.has_value());
    w.Field("gpus_direct", f.gpus_direct);
    w.Field("gpus_collateral", f.gpus_collateral);
    w.Field("jobs_touched", f.jobs_touched);
    w.Field("jobs_interrupted", f.jobs_interrupted);
    w.Field("gpu_hours_lost", f.gpu_hours_lost);
    w.Field("rework_s", f.rework);
    w.StringArray("isolated", f.isolated);
    ImpactArray(w, m, f.fault);
    w.EndObject();
  }
  w.EndArray();
}

void JobArray(JsonWriter& w, const RunReport& r) {
  w.Key("jobs");
  w.BeginArray();
  for (const JobMetrics& j : r.metrics.jobs) {
    const JobRow* row = FindJob(r, j.job);
    w.BeginObject();
    w.Field("name", j.name);
    w.Field("gpus", j.gpus);
    w.Field("nominal_step_s", row ? row->nominal_step_s : 0.0);
    w.Field("wall_s", j.wall);
    w.Field("productive_s", j.productive);
    w.Field("ettr", j.ettr);
    w.Field("goodput", j.goodput);
    w.Field("interruptions", j.interruptions);
    w.Field("steps", j.steps);
    w.EndObject();
  }
  w.EndArray();
}

void HealerObject(JsonWriter& w, const RunMetrics& m) {
  w.Key("healer");
  w.BeginObject();
  w.Field("isolations", m.isolations);
  w.Field("correct_isolations", m.correct_isolations);
  w.Field("precision", m.precision);
  w.Field("recall", m.recall);
  w.StringArray("false_isolations", m.false_isolations);
  w.StringArray("missed_faults", m.missed_faults);
  w.EndObject();
}

void GateArray(JsonWriter& w, const std::vector<GateRow>& gates) {
  w.Key("expectations");
  w.BeginArray();
  for (const GateRow& g : gates) {
    w.BeginObject();
    w.Field("text", g.text);
    w.Field("metric", g.metric);
    w.Field("op", g.op);
    w.Field("value", g.value);
    w.Field("actual", g.actual);  // null when the metric had no value (infinitely late)
    w.Field("passed", g.passed);
    w.Field("message", g.message);
    w.EndObject();
  }
  w.EndArray();
}

// Only when the scheduler moved a job to a spare rack, as the text summary's section.
void SpareRackArray(JsonWriter& w, const std::vector<ActionRow>& moves) {
  if (moves.empty()) return;
  w.Key("spare_rack_moves");
  w.BeginArray();
  for (const ActionRow& a : moves) {
    w.BeginObject();
    w.Field("t_s", a.at);
    w.Field("detail", a.detail);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string RenderJson(const RunReport& report) {
  JsonWriter w;
  w.BeginObject();
  w.Field("schema", "rackchaos.report.v1");
  RunObject(w, report.run);
  w.Field("events", report.events);
  FaultArray(w, report.metrics);
  JobArray(w, report);
  HealerObject(w, report.metrics);
  SpareRackArray(w, report.spare_rack_moves);
  GateArray(w, report.gates);
  w.Key("verdict");
  w.BeginObject();
  w.Field("status", report.run.status);
  w.Field("expectations_failed", FailedGates(report));
  w.Field("faults_unrecovered", UnrecoveredFaults(report));
  w.EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace rackchaos::reports
