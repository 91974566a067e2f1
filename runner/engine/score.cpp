#include "runner/engine/score.h"

namespace rackchaos::runner {

Result<std::string> ScoreRun(reports::ReportStore& store, int64_t run, const RunSpec& spec,
                             const std::vector<Event>& events, const std::vector<healer::JobInfo>& jobs, Time end,
                             std::vector<GateResult>& gates) {
  RunMetrics metrics = healer::ComputeMetrics(events, spec.topology, jobs, end);
  RC_RETURN_IF_ERROR(store.AddMetrics(run, metrics));
  std::string failed;
  std::vector<reports::GateRow> rows;
  for (const Gate& g : spec.gates) {
    GateResult r = EvaluateGate(g, metrics);
    if (!r.passed && failed.empty()) failed = r.message;
    rows.push_back({r.gate.text, r.gate.metric, r.gate.op, r.gate.value, r.actual, r.passed, r.message});
    gates.push_back(std::move(r));
  }
  RC_RETURN_IF_ERROR(store.AddGates(run, rows));
  return failed;
}

RunVerdict Verdict(const RunEnd& end) {
  if (!end.error.empty()) return {"error", ExitCode::kRuntimeError, end.error};
  if (end.interrupted) return {"interrupted", ExitCode::kInterrupted, end.stop_reason};
  if (!end.host_error.empty()) return {"error", ExitCode::kRuntimeError, end.host_error};
  if (end.aborted) return {"aborted", ExitCode::kExpectationFailed, end.abort_reason};
  if (!end.failed_gate.empty()) return {"failed", ExitCode::kExpectationFailed, end.failed_gate};
  return {"passed", ExitCode::kPass, ""};
}

}  // namespace rackchaos::runner
