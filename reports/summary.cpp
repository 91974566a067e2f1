#include "reports/summary.h"

#include <optional>
#include <string>
#include <vector>

#include "core/units.h"
#include "reports/escape.h"
#include "reports/sqlite_db.h"
#include "reports/text_table.h"

namespace rackchaos::reports {
namespace {

std::string JoinOr(const std::vector<std::string>& items, const std::string& if_empty) {
  if (items.empty()) return if_empty;
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string Header(const RunRow& r) {
  std::string status = r.status;
  if (r.exit_code) status += " (exit " + std::to_string(*r.exit_code) + ")";
  std::string out = "Run " + std::to_string(r.id) + ": " + r.info.plan_name;
  if (!r.info.plan_path.empty()) out += " (" + r.info.plan_path + ")";
  out += "\n";
  out += "  status   " + status + "\n";
  out += "  seed     " + std::to_string(r.info.seed) + "   backend " + r.info.backend +
         "   version " + r.info.version + "\n";
  out += "  started  " + r.info.started_wall + "   ended " +
         (r.ended_wall.empty() ? "-" : r.ended_wall) + "   host " + r.info.host + "\n";
  out += "  plan     hash " + r.info.plan_hash + "\n";
  if (!r.failed_reason.empty()) out += "  reason   " + r.failed_reason + "\n";
  return out;
}

std::string FaultSection(const RunMetrics& m) {
  if (m.faults.empty()) return "Faults: none\n";
  TextTable table({"#", "kind", "target", "at", "detect", "isolate", "recover",
                   "GPUs(direct+collateral)", "jobs", "GPU-h lost", "rework"},
                  {Align::kRight, Align::kLeft, Align::kLeft, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight});
  std::string isolated;
  for (const FaultMetrics& f : m.faults) {
    std::string jobs = std::to_string(f.jobs_touched);
    if (f.jobs_interrupted > 0) jobs += " (" + std::to_string(f.jobs_interrupted) + " int)";
    table.AddRow({std::to_string(f.fault), f.kind, f.target, FormatDurationShort(f.injected),
                  ShortOrDash(f.time_to_detect), ShortOrDash(f.time_to_isolate), ShortOrDash(f.time_to_recover),
                  std::to_string(f.gpus_direct) + "+" + std::to_string(f.gpus_collateral), jobs,
                  Fixed(f.gpu_hours_lost, 2), FormatDurationShort(f.rework)});
    isolated += "  #" + std::to_string(f.fault) + " " + f.kind + " on " + f.target +
                ": isolated " + JoinOr(f.isolated, "nothing") + "\n";
  }
  return "Faults (" + std::to_string(m.faults.size()) + ")\n" + table.Render("  ") + "\n" + isolated;
}

std::string JobSection(const RunMetrics& m) {
  if (m.jobs.empty()) return "Jobs: none\n";
  TextTable table({"job", "GPUs", "ETTR", "goodput", "interruptions", "kept steps"},
                  {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight});
  for (const JobMetrics& j : m.jobs) {
    table.AddRow({j.name, std::to_string(j.gpus), Percent(j.ettr), Percent(j.goodput),
                  std::to_string(j.interruptions), Fixed(j.steps, 0)});
  }
  return "Jobs (" + std::to_string(m.jobs.size()) + ")\n" + table.Render("  ");
}

std::string HealerSection(const RunMetrics& m) {
  std::string out = "Healer\n";
  out += "  isolations        " + std::to_string(m.isolations) + " (" +
         std::to_string(m.correct_isolations) + " correct)\n";
  out += "  precision         " + Percent(m.precision) + "\n";
  out += "  recall            " + Percent(m.recall) + "\n";
  out += "  false isolations  " + JoinOr(m.false_isolations, "none") + "\n";
  out += "  missed faults     " + JoinOr(m.missed_faults, "none") + "\n";
  return out;
}

// Jobs the scheduler moved to spare racks (cluster.spares), from the stored `spare_rack` actions. No
// section when there were none, so the summaries of other runs do not change.
Result<std::string> SpareRackSection(const ReportStore& store, int64_t run) {
  RC_ASSIGN_OR_RETURN(std::vector<ActionRow> moves, store.ReadActions(run, "spare_rack"));
  std::string out;
  for (const ActionRow& a : moves) out += "  " + FormatDurationShort(a.at) + "  " + a.detail + "\n";
  return out.empty() ? out : "\nSpare racks\n" + out;
}

}  // namespace

Result<std::string> RenderSummary(const ReportStore& store, int64_t run) {
  RC_ASSIGN_OR_RETURN(RunRow row, store.ReadRun(run));
  RC_ASSIGN_OR_RETURN(RunMetrics metrics, store.ReadMetrics(run));
  RC_ASSIGN_OR_RETURN(std::string spare_racks, SpareRackSection(store, run));
  // Sections are separated by one blank line so the summary can be pasted into a ticket as-is.
  return Header(row) + "\n" + FaultSection(metrics) + "\n" + JobSection(metrics) + "\n" +
         HealerSection(metrics) + spare_racks;
}

}  // namespace rackchaos::reports
