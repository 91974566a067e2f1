#include "reports/summary.h"

#include <optional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "core/units.h"
#include "reports/escape.h"
#include "reports/fault_digest.h"
#include "reports/sqlite_db.h"
#include "reports/text_table.h"

namespace rackchaos::reports {
namespace {

constexpr size_t kIsolatedNames = 20;    // names after "isolated" per listed fault
constexpr size_t kSpareRackMoves = 20;   // spare-rack moves listed

// Every stored string reaches the terminal through this (reports/escape.h).
std::string T(std::string_view s) { return TerminalText(s); }

std::vector<std::string> Escaped(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& s : items) out.push_back(T(s));
  return out;
}

std::string NeverOr(const std::optional<Duration>& d) { return d ? FormatDurationShort(*d) : "never"; }

std::string Header(const RunRow& r) {
  std::string status = r.status;
  if (r.exit_code) status += " (exit " + std::to_string(*r.exit_code) + ")";
  std::string out = "Run " + std::to_string(r.id) + ": " + T(r.info.plan_name);
  if (!r.info.plan_path.empty()) out += " (" + T(r.info.plan_path) + ")";
  out += "\n";
  out += "  status   " + T(status) + "\n";
  out += "  seed     " + std::to_string(r.info.seed) + "   backend " + T(r.info.backend) +
         "   version " + T(r.info.version) + "\n";
  out += "  started  " + T(r.info.started_wall) + "   ended " +
         (r.ended_wall.empty() ? "-" : T(r.ended_wall)) + "   host " + T(r.info.host) + "\n";
  out += "  plan     hash " + T(r.info.plan_hash) + "\n";
  if (!r.failed_reason.empty()) out += "  reason   " + T(r.failed_reason) + "\n";
  return out;
}

std::string FaultTable(const FaultDigest& d) {
  TextTable table({"#", "kind", "target", "at", "detect", "isolate", "recover",
                   "GPUs(direct+collateral)", "jobs", "GPU-h lost", "rework"},
                  {Align::kRight, Align::kLeft, Align::kLeft, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight});
  std::string isolated;
  for (const FaultMetrics* f : d.listed) {
    std::string jobs = std::to_string(f->jobs_touched);
    if (f->jobs_interrupted > 0) jobs += " (" + std::to_string(f->jobs_interrupted) + " int)";
    table.AddRow({std::to_string(f->fault), T(f->kind), T(f->target), FormatDurationShort(f->injected),
                  ShortOrDash(f->time_to_detect), ShortOrDash(f->time_to_isolate), ShortOrDash(f->time_to_recover),
                  std::to_string(f->gpus_direct) + "+" + std::to_string(f->gpus_collateral), jobs,
                  Fixed(f->gpu_hours_lost, 2), FormatDurationShort(f->rework)});
    isolated += "  #" + std::to_string(f->fault) + " " + T(f->kind) + " on " + T(f->target) +
                ": isolated " + JoinCut(Escaped(f->isolated), kIsolatedNames, "nothing") + "\n";
  }
  return table.Render("  ") + "\n" + isolated;
}

// One row per kind or rack: how many of its faults got detected, isolated and recovered, and how fast.
std::string GroupTable(const std::string& first, const std::vector<FaultGroup>& groups) {
  TextTable table({first, "faults", "detected", "isolated", "recovered", "TTD p50", "TTR p50", "TTR p95", "TTR max",
                   "GPU-h lost"},
                  {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight, Align::kRight});
  for (const FaultGroup& g : groups) {
    table.AddRow({T(g.name), std::to_string(g.faults), std::to_string(g.detected), std::to_string(g.isolated),
                  std::to_string(g.recovered), NeverOr(g.ttd_p50), NeverOr(g.ttr_p50), NeverOr(g.ttr_p95),
                  NeverOr(g.ttr_max), Fixed(g.gpu_hours_lost, 2)});
  }
  return table.Render("  ");
}

// Up to kTextLimits.faults faults get a row each; past that the summary says so and counts every fault
// by kind and by rack, so that a month of chaos prints pages, not megabytes.
std::string FaultSection(const RunMetrics& m) {
  if (m.faults.empty()) return "Faults: none\n";
  const FaultDigest d = DigestFaults(m, kTextLimits);
  if (!d.cut()) return "Faults (" + std::to_string(d.total) + ")\n" + FaultTable(d);
  std::string out = "Faults (" + Thousands(d.total) + "): " + CutFaultsSentence(d) + " below\n" + FaultTable(d) + "\n";
  out += "Faults by kind (" + std::to_string(d.by_kind.size()) + ")\n" + GroupTable("kind", d.by_kind) + "\n";
  out += "Faults by rack (" + Thousands(d.racks) + ")";
  if (d.by_rack.size() < d.racks)
    out += ": the " + std::to_string(d.by_rack.size()) + " with the most faults; " +
           Thousands(d.faults_in_other_racks) + " more faults in " + Thousands(d.racks - d.by_rack.size()) +
           " more racks";
  return out + "\n" + GroupTable("rack", d.by_rack);
}

std::string JobSection(const RunMetrics& m) {
  if (m.jobs.empty()) return "Jobs: none\n";
  TextTable table({"job", "GPUs", "ETTR", "goodput", "interruptions", "kept steps"},
                  {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight});
  const std::vector<const JobMetrics*> listed = ListedJobs(m, kTextLimits);
  for (const JobMetrics* j : listed) {
    table.AddRow({T(j->name), std::to_string(j->gpus), Percent(j->ettr), Percent(j->goodput),
                  std::to_string(j->interruptions), Fixed(j->steps, 0)});
  }
  std::string title = "Jobs (" + Thousands(m.jobs.size()) + ")";
  if (listed.size() < m.jobs.size()) {
    double sum = 0;
    for (const JobMetrics& j : m.jobs) sum += j.ettr;
    title += ": the " + std::to_string(listed.size()) + " with the lowest ETTR are listed; " +
             Thousands(m.jobs.size() - listed.size()) + " more, ETTR of all " + Percent(sum / static_cast<double>(m.jobs.size())) +
             " on average";
  }
  return title + "\n" + table.Render("  ");
}

std::string HealerSection(const RunMetrics& m) {
  std::string out = "Healer\n";
  out += "  isolations        " + std::to_string(m.isolations) + " (" +
         std::to_string(m.correct_isolations) + " correct)\n";
  out += "  precision         " + Percent(m.precision) + "\n";
  out += "  recall            " + Percent(m.recall) + "\n";
  out += "  false isolations  " + JoinCut(Escaped(m.false_isolations), kTextLimits.names, "none") + "\n";
  out += "  missed faults     " + JoinCut(Escaped(m.missed_faults), kTextLimits.names, "none") + "\n";
  return out;
}

// Jobs the scheduler moved to spare racks (cluster.spares), from the stored `spare_rack` actions. No
// section when there were none, so the summaries of other runs do not change.
Result<std::string> SpareRackSection(const ReportStore& store, int64_t run) {
  RC_ASSIGN_OR_RETURN(std::vector<ActionRow> moves, store.ReadActions(run, "spare_rack"));
  if (moves.empty()) return std::string();
  std::string out = "\nSpare racks\n";
  for (size_t i = 0; i < moves.size() && i < kSpareRackMoves; ++i)
    out += "  " + FormatDurationShort(moves[i].at) + "  " + T(moves[i].detail) + "\n";
  if (moves.size() > kSpareRackMoves) out += "  ... and " + Thousands(moves.size() - kSpareRackMoves) + " more moves\n";
  return out;
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
