// ReportStore::AddMetrics and ReadMetrics: RunMetrics <-> fault_metrics, job_impacts, job_metrics,
// run_metrics and run_metric_items. Rows keep their vector position in `ord`, so reading gives back
// exactly the vectors that were written.
#include <string>
#include <vector>

#include "core/strings.h"
#include "reports/store.h"
#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

// Component names never contain commas, so a comma list stays readable in plain sqlite3 and splits
// back unambiguously.
std::vector<std::string> SplitNames(std::string_view text) {
  std::vector<std::string> out;
  if (!text.empty())
    for (std::string_view name : Split(text, ',')) out.emplace_back(name);
  return out;
}

Status WriteFaultMetrics(ReportStore::State& st, int64_t run, const RunMetrics& m,
                         const std::string& what) {
  RC_ASSIGN_OR_RETURN(Stmt* s, st.Cached(
      "INSERT INTO fault_metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", what));
  for (size_t i = 0; i < m.faults.size(); ++i) {
    const FaultMetrics& f = m.faults[i];
    s->Bind(1, run);
    s->Bind(2, static_cast<int64_t>(i));
    s->Bind(3, static_cast<int64_t>(f.fault));
    s->Bind(4, f.kind);
    s->Bind(5, f.target);
    s->Bind(6, f.injected.us);
    s->Bind(7, OptUs(f.reverted));
    s->Bind(8, OptUs(f.time_to_detect));
    s->Bind(9, OptUs(f.time_to_isolate));
    s->Bind(10, OptUs(f.time_to_recover));
    s->Bind(11, static_cast<int64_t>(f.gpus_direct));
    s->Bind(12, static_cast<int64_t>(f.gpus_collateral));
    s->Bind(13, static_cast<int64_t>(f.jobs_touched));
    s->Bind(14, static_cast<int64_t>(f.jobs_interrupted));
    s->Bind(15, f.gpu_hours_lost);
    s->Bind(16, f.rework.us);
    s->Bind(17, Join(f.isolated, ","));
    RC_RETURN_IF_ERROR(s->Run(what));
  }
  return Status::Ok();
}

Status WriteJobRows(ReportStore::State& st, int64_t run, const RunMetrics& m,
                    const std::string& what) {
  RC_ASSIGN_OR_RETURN(Stmt* imp, st.Cached(
      "INSERT INTO job_impacts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", what));
  for (size_t i = 0; i < m.impacts.size(); ++i) {
    const JobImpact& j = m.impacts[i];
    imp->Bind(1, run);
    imp->Bind(2, static_cast<int64_t>(i));
    imp->Bind(3, static_cast<int64_t>(j.fault));
    BindId(*imp, 4, j.job, kNoJob);
    imp->Bind(5, j.job_name);
    imp->Bind(6, static_cast<int64_t>(j.interrupted ? 1 : 0));
    imp->Bind(7, j.stalled.us);
    imp->Bind(8, j.rework.us);
    imp->Bind(9, j.slowdown_hours);
    imp->Bind(10, j.gpu_hours_lost);
    RC_RETURN_IF_ERROR(imp->Run(what));
  }
  RC_ASSIGN_OR_RETURN(Stmt* jm, st.Cached(
      "INSERT INTO job_metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", what));
  for (size_t i = 0; i < m.jobs.size(); ++i) {
    const JobMetrics& j = m.jobs[i];
    jm->Bind(1, run);
    jm->Bind(2, static_cast<int64_t>(i));
    BindId(*jm, 3, j.job, kNoJob);
    jm->Bind(4, j.name);
    jm->Bind(5, static_cast<int64_t>(j.gpus));
    jm->Bind(6, j.wall.us);
    jm->Bind(7, j.productive.us);
    jm->Bind(8, j.ettr);
    jm->Bind(9, j.goodput);
    jm->Bind(10, static_cast<int64_t>(j.interruptions));
    jm->Bind(11, j.steps);
    jm->Bind(12, j.up.us);
    jm->Bind(13, static_cast<int64_t>(j.failures));
    RC_RETURN_IF_ERROR(jm->Run(what));
  }
  return Status::Ok();
}

Status WriteRunLevel(ReportStore::State& st, int64_t run, const RunMetrics& m,
                     const std::string& what) {
  RC_ASSIGN_OR_RETURN(Stmt* s, st.Cached("INSERT INTO run_metrics VALUES (?, ?, ?)", what));
  const std::pair<const char*, double> values[] = {
      {"isolations", m.isolations},
      {"correct_isolations", m.correct_isolations},
      {"precision", m.precision},
      {"gpus_drained", static_cast<double>(m.gpus_drained)},
      {"drained_gpu_hours", m.drained_gpu_hours},
      {"recall", m.recall},
      {"false_isolations", static_cast<double>(m.false_isolations.size())},
      {"missed_faults", static_cast<double>(m.missed_faults.size())},
  };
  for (const auto& [name, value] : values) {
    s->Bind(1, run);
    s->Bind(2, std::string_view(name));
    s->Bind(3, value);
    RC_RETURN_IF_ERROR(s->Run(what));
  }
  RC_ASSIGN_OR_RETURN(Stmt* items, st.Cached("INSERT INTO run_metric_items VALUES (?, ?, ?, ?)", what));
  for (const auto& [list, names] : {std::pair{"false_isolation", &m.false_isolations},
                                    std::pair{"missed_fault", &m.missed_faults}}) {
    for (size_t i = 0; i < names->size(); ++i) {
      items->Bind(1, run);
      items->Bind(2, std::string_view(list));
      items->Bind(3, static_cast<int64_t>(i));
      items->Bind(4, (*names)[i]);
      RC_RETURN_IF_ERROR(items->Run(what));
    }
  }
  RC_ASSIGN_OR_RETURN(Stmt* faulty, st.Cached("INSERT INTO faulty_isolations VALUES (?, ?, ?)", what));
  for (size_t i = 0; i < m.faulty_isolations.size(); ++i) {
    faulty->Bind(1, run);
    faulty->Bind(2, static_cast<int64_t>(i));
    faulty->Bind(3, m.faulty_isolations[i]);
    RC_RETURN_IF_ERROR(faulty->Run(what));
  }
  return Status::Ok();
}

Status ReadFaultMetrics(Db& db, int64_t run, const std::string& what, RunMetrics& m) {
  return ForEachRow(db,
      "SELECT fault_id, kind, target, injected_us, reverted_us, ttd_us, tti_us, ttr_us, gpus_direct, "
      "gpus_collateral, jobs_touched, jobs_interrupted, gpu_hours_lost, rework_us, isolated "
      "FROM fault_metrics WHERE run_id = ? ORDER BY ord", run, what, [&](const Stmt& s) {
        m.faults.push_back({static_cast<FaultId>(s.Int(0)), s.Text(1), s.Text(2),
                            Duration::Micros(s.Int(3)), OptDuration(s, 4), OptDuration(s, 5),
                            OptDuration(s, 6), OptDuration(s, 7), static_cast<int>(s.Int(8)),
                            static_cast<int>(s.Int(9)), static_cast<int>(s.Int(10)),
                            static_cast<int>(s.Int(11)), s.Double(12), Duration::Micros(s.Int(13)),
                            SplitNames(s.Text(14))});
      });
}

Status ReadJobRows(Db& db, int64_t run, const std::string& what, RunMetrics& m) {
  RC_RETURN_IF_ERROR(ForEachRow(db,
      "SELECT fault_id, job_id, job_name, interrupted, stalled_us, rework_us, slowdown_hours, "
      "gpu_hours_lost FROM job_impacts WHERE run_id = ? ORDER BY ord", run, what, [&](const Stmt& s) {
        m.impacts.push_back({static_cast<FaultId>(s.Int(0)), IdOr(s, 1, kNoJob), s.Text(2),
                             s.Int(3) != 0, Duration::Micros(s.Int(4)), Duration::Micros(s.Int(5)),
                             s.Double(6), s.Double(7)});
      }));
  return ForEachRow(db,
      "SELECT job_id, name, gpus, wall_us, productive_us, ettr, goodput, interruptions, steps, up_us, failures "
      "FROM job_metrics WHERE run_id = ? ORDER BY ord", run, what, [&](const Stmt& s) {
        m.jobs.push_back({IdOr(s, 0, kNoJob), s.Text(1), static_cast<int>(s.Int(2)),
                          Duration::Micros(s.Int(3)), Duration::Micros(s.Int(4)), s.Double(5),
                          s.Double(6), static_cast<int>(s.Int(7)), s.Double(8), Duration::Micros(s.Int(9)),
                          static_cast<int>(s.Int(10))});
      });
}

// Absent rows keep RunMetrics' defaults (precision and recall 1), matching "no metrics written".
Status ReadRunLevel(Db& db, int64_t run, const std::string& what, RunMetrics& m) {
  RC_RETURN_IF_ERROR(ForEachRow(db, "SELECT name, value FROM run_metrics WHERE run_id = ?", run,
      what, [&](const Stmt& s) {
        std::string name = s.Text(0);
        if (name == "isolations") m.isolations = static_cast<int>(s.Int(1));
        else if (name == "correct_isolations") m.correct_isolations = static_cast<int>(s.Int(1));
        else if (name == "precision") m.precision = s.Double(1);
        else if (name == "recall") m.recall = s.Double(1);
        else if (name == "gpus_drained") m.gpus_drained = static_cast<int>(s.Int(1));
        else if (name == "drained_gpu_hours") m.drained_gpu_hours = s.Double(1);
      }));
  RC_RETURN_IF_ERROR(ForEachRow(db,
      "SELECT list, item FROM run_metric_items WHERE run_id = ? ORDER BY list, ord", run, what,
      [&](const Stmt& s) {
        (s.Text(0) == "missed_fault" ? m.missed_faults : m.false_isolations).push_back(s.Text(1));
      }));
  return ForEachRow(db, "SELECT component FROM faulty_isolations WHERE run_id = ? ORDER BY ord", run, what,
                    [&](const Stmt& s) { m.faulty_isolations.push_back(s.Text(0)); });
}

}  // namespace

Status ReportStore::AddMetrics(int64_t run, const RunMetrics& metrics) {
  const std::string what = ForRun("storing metrics of", run);
  RC_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(state_->db, what));
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  // Replacing rather than appending makes a re-run of the metrics step idempotent.
  for (const char* table :
       {"fault_metrics", "job_impacts", "job_metrics", "run_metrics", "run_metric_items", "faulty_isolations"}) {
    RC_RETURN_IF_ERROR(state_->db.Exec(
        "DELETE FROM " + std::string(table) + " WHERE run_id = " + std::to_string(run), what));
  }
  RC_RETURN_IF_ERROR(WriteFaultMetrics(*state_, run, metrics, what));
  RC_RETURN_IF_ERROR(WriteJobRows(*state_, run, metrics, what));
  RC_RETURN_IF_ERROR(WriteRunLevel(*state_, run, metrics, what));
  return txn.Commit(what);
}

Result<RunMetrics> ReportStore::ReadMetrics(int64_t run) const {
  const std::string what = ForRun("reading metrics of", run);
  RC_RETURN_IF_ERROR(state_->RequireRun(run, what));
  RunMetrics m;
  RC_RETURN_IF_ERROR(ReadFaultMetrics(state_->db, run, what, m));
  RC_RETURN_IF_ERROR(ReadJobRows(state_->db, run, what, m));
  RC_RETURN_IF_ERROR(ReadRunLevel(state_->db, run, what, m));
  return m;
}

}  // namespace rackchaos::reports
