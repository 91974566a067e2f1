#include "runner/score.h"

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

}  // namespace rackchaos::runner
