// RenderMarkdown: the summary as GitHub-flavoured Markdown tables, for tickets and PR comments.
#include <optional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "reports/escape.h"
#include "reports/fault_digest.h"
#include "reports/render.h"

namespace rackchaos::reports {
namespace {

std::string Row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const std::string& c : cells) out += " " + MarkdownCell(c) + " |";
  return out + "\n";
}

// Header row plus the separator; `right` marks right-aligned (numeric) columns.
std::string Head(const std::vector<std::string>& cells, const std::vector<bool>& right) {
  std::string sep = "|";
  for (size_t i = 0; i < cells.size(); ++i) sep += i < right.size() && right[i] ? " ---: |" : " --- |";
  return Row(cells) + sep + "\n";
}

std::string RunTable(const RunReport& r) {
  const RunRow& run = r.run;
  std::string status = run.status;
  if (run.exit_code) status += " (exit " + std::to_string(*run.exit_code) + ")";
  std::string out = "# rackchaos run " + std::to_string(run.id) + ": " + MarkdownCell(run.info.plan_name) + "\n\n";
  out += Head({"field", "value"}, {});
  out += Row({"status", status});
  out += Row({"seed", std::to_string(run.info.seed)});
  out += Row({"backend", run.info.backend});
  out += Row({"version", run.info.version});
  out += Row({"host", run.info.host});
  out += Row({"started", run.info.started_wall});
  out += Row({"ended", run.ended_wall.empty() ? "-" : run.ended_wall});
  out += Row({"plan", run.info.plan_path + " (hash " + run.info.plan_hash + ")"});
  out += Row({"events", std::to_string(r.events)});
  if (!run.failed_reason.empty()) out += Row({"reason", run.failed_reason});
  return out;
}

std::string NeverOr(const std::optional<Duration>& d) { return d ? FormatDurationShort(*d) : "never"; }

std::string GroupTable(const std::string& first, const std::vector<FaultGroup>& groups) {
  std::string out = Head({first, "faults", "detected", "isolated", "recovered", "TTD p50", "TTR p50", "TTR p95", "TTR max",
                          "GPU-h lost"},
                         {false, true, true, true, true, true, true, true, true, true});
  for (const FaultGroup& g : groups)
    out += Row({g.name, std::to_string(g.faults), std::to_string(g.detected), std::to_string(g.isolated),
                std::to_string(g.recovered), NeverOr(g.ttd_p50), NeverOr(g.ttr_p50), NeverOr(g.ttr_p95),
                NeverOr(g.ttr_max), Fixed(g.gpu_hours_lost, 2)});
  return out;
}

// Bounded like the text summary (kTextLimits): a merge request comment has a size limit too.
std::string FaultTable(const RunMetrics& m) {
  if (m.faults.empty()) return "## Faults\n\nNone.\n";
  const FaultDigest d = DigestFaults(m, kTextLimits);
  std::string out = "## Faults\n\n";
  if (d.cut()) out += Thousands(d.total) + " faults: " + CutFaultsSentence(d) + " below.\n\n";
  out += Head({"#", "kind", "target", "at", "detect", "isolate", "recover", "GPUs direct",
               "GPUs collateral", "jobs", "interrupted", "GPU-h lost", "rework", "isolated"},
              {true, false, false, true, true, true, true, true, true, true, true, true, true, false});
  for (const FaultMetrics* f : d.listed) {
    out += Row({std::to_string(f->fault), f->kind, f->target, FormatDurationShort(f->injected),
                ShortOrDash(f->time_to_detect), ShortOrDash(f->time_to_isolate), ShortOrDash(f->time_to_recover),
                std::to_string(f->gpus_direct), std::to_string(f->gpus_collateral),
                std::to_string(f->jobs_touched), std::to_string(f->jobs_interrupted),
                Fixed(f->gpu_hours_lost, 2), FormatDurationShort(f->rework),
                JoinCut(f->isolated, 20, "nothing")});
  }
  if (!d.cut()) return out;
  out += "\n### Faults by kind\n\n" + GroupTable("kind", d.by_kind);
  out += "\n### Faults by rack\n\n";
  if (d.by_rack.size() < d.racks)
    out += "The " + std::to_string(d.by_rack.size()) + " racks with the most faults; " + Thousands(d.faults_in_other_racks) +
           " more faults in " + Thousands(d.racks - d.by_rack.size()) + " more racks.\n\n";
  return out + GroupTable("rack", d.by_rack);
}

std::string JobTable(const RunMetrics& m) {
  if (m.jobs.empty()) return "## Jobs\n\nNone.\n";
  std::string out = "## Jobs\n\n";
  const std::vector<const JobMetrics*> listed = ListedJobs(m, kTextLimits);
  if (listed.size() < m.jobs.size())
    out += Thousands(m.jobs.size()) + " jobs: the " + std::to_string(listed.size()) + " with the lowest ETTR are listed.\n\n";
  out += Head({"job", "GPUs", "ETTR", "goodput", "interruptions", "kept steps"},
              {false, true, true, true, true, true});
  for (const JobMetrics* j : listed) {
    out += Row({j->name, std::to_string(j->gpus), Percent(j->ettr), Percent(j->goodput),
                std::to_string(j->interruptions), Fixed(j->steps, 0)});
  }
  return out;
}

std::string HealerTable(const RunMetrics& m) {
  std::string out = "## Healer\n\n" + Head({"measure", "value"}, {false, true});
  out += Row({"isolations", std::to_string(m.isolations) + " (" +
                                std::to_string(m.correct_isolations) + " correct)"});
  out += Row({"precision", Percent(m.precision)});
  out += Row({"recall", Percent(m.recall)});
  out += Row({"false isolations", JoinCut(m.false_isolations, kTextLimits.names, "none")});
  out += Row({"missed faults", JoinCut(m.missed_faults, kTextLimits.names, "none")});
  return out;
}

std::string GateTable(const std::vector<GateRow>& gates) {
  if (gates.empty()) return "## Expectations\n\nNone stored.\n";
  std::string out = "## Expectations\n\n" + Head({"result", "expectation", "detail"}, {});
  for (const GateRow& g : gates) out += Row({g.passed ? "pass" : "**FAIL**", g.text, g.message});
  return out;
}

}  // namespace

std::string RenderMarkdown(const RunReport& report) {
  return RunTable(report) + "\n" + FaultTable(report.metrics) + "\n" + JobTable(report.metrics) +
         "\n" + HealerTable(report.metrics) + "\n" + GateTable(report.gates);
}

}  // namespace rackchaos::reports
