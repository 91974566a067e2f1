#include "reports/run_report.h"

namespace rackchaos::reports {

Result<RunReport> LoadRunReport(const ReportStore& store, int64_t run) {
  RunReport r;
  RC_ASSIGN_OR_RETURN(r.run, store.ReadRun(run));
  RC_ASSIGN_OR_RETURN(r.components, store.ReadComponents(run));
  RC_ASSIGN_OR_RETURN(r.jobs, store.ReadJobs(run));
  RC_ASSIGN_OR_RETURN(r.metrics, store.ReadMetrics(run));
  RC_ASSIGN_OR_RETURN(r.gates, store.ReadGates(run));
  RC_ASSIGN_OR_RETURN(r.events, store.CountEvents(run));
  RC_ASSIGN_OR_RETURN(r.spare_rack_moves, store.ReadActions(run, "spare_rack"));
  return r;
}

const JobRow* FindJob(const RunReport& report, JobId id) {
  for (const JobRow& j : report.jobs) {
    if (j.id == id) return &j;
  }
  return nullptr;
}

std::vector<JobImpact> ImpactsOf(const RunMetrics& metrics, FaultId fault) {
  std::vector<JobImpact> out;
  for (const JobImpact& i : metrics.impacts) {
    if (i.fault == fault) out.push_back(i);
  }
  return out;
}

int FailedGates(const RunReport& report) {
  int n = 0;
  for (const GateRow& g : report.gates) n += g.passed ? 0 : 1;
  return n;
}

int UnrecoveredFaults(const RunReport& report) {
  int n = 0;
  for (const FaultMetrics& f : report.metrics.faults) n += f.time_to_recover ? 0 : 1;
  return n;
}

}  // namespace rackchaos::reports
