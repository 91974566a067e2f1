#include "runner/cli/replay_cmd.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cluster/catalogue.h"
#include "reports/store.h"
#include "reports/text_table.h"
#include "core/exit_code.h"
#include "runner/incident/importer.h"
#include "runner/incident/log_line.h"
#include "runner/plan/plan_loader.h"
#include "runner/replay/replay.h"
#include "runner/engine/run.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {
namespace {

int Fail(ExitCode code, const std::string& message) {
  std::fprintf(stderr, "rackchaos: %s\n", message.c_str());
  return ToInt(code);
}

std::string Ascii(const std::string& s, size_t max = 60) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max) return out + "...";
    out += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
  }
  return out;
}

std::string Maybe(const std::optional<double>& s) { return s ? FormatDurationShort(Duration::Seconds(*s)) : "-"; }
std::string Maybe(const std::optional<Duration>& d) { return d ? FormatDurationShort(*d) : "-"; }

// The cluster side of a replay: from a plan (its cluster and jobs) or from a site inventory.
struct ClusterSource {
  ReplayPlanOptions plan;
  HostMap map;
};

Result<ClusterSource> LoadClusterSource(const ReplayArgs& args) {
  ClusterSource src;
  auto plan = LoadPlan(args.cluster);
  std::string inventory_path;
  if (plan.ok()) {
    src.plan.cluster = plan->cluster;
    src.plan.jobs = plan->jobs;
    src.plan.healer = plan->healer.policy;
    src.plan.seed = plan->seed;
    inventory_path = plan->cluster.inventory;
  } else {
    auto inv = LoadInventory(args.cluster);
    if (!inv.ok()) {
      if (inv.status().code() == StatusCode::kNotFound) return plan.status();
      return Status::Invalid("--cluster " + args.cluster + " is neither a plan (" + plan.status().message() +
                             ") nor a site inventory (" + inv.status().message() + ")");
    }
    src.plan.cluster.model = inv->model;
    src.plan.cluster.racks = inv->racks;
    src.map = HostMapFromInventory(*inv);
  }
  if (!inventory_path.empty()) {
    auto inv = LoadInventory(inventory_path);
    if (!inv.ok()) return inv.status();
    src.map = HostMapFromInventory(*inv);
  }
  src.plan.cluster.inventory.clear();  // the replay always runs on the simulator
  if (!args.gpu_map.empty()) {
    auto m = incident::LoadGpuMap(args.gpu_map);
    if (!m.ok()) return m.status();
    incident::MergeHostMap(src.map, *m);
  }
  if (!args.healer.empty()) src.plan.healer = args.healer;
  if (args.seed) src.plan.seed = *args.seed;
  return src;
}

void PrintImport(const incident::Incident& inc, const ReplayTimeline& t) {
  std::cout << "Incident: " << inc.files.size() << " file(s), " << inc.lines << " lines, " << inc.events.size()
            << " events, " << inc.not_understood << " lines not understood";
  if (inc.overlong_lines) std::cout << ", " << inc.overlong_lines << " overlong lines cut";
  if (inc.dropped_events) std::cout << ", " << inc.dropped_events << " events beyond the cap dropped";
  std::cout << "\n  " << t.faults.size() << " fault(s) replayed, " << t.follow_ups << " follow-up event(s) folded in, "
            << t.not_replayed_count << " event(s) not replayed, " << t.requeues << " job requeue(s); span "
            << FormatDurationShort(Duration::Seconds(t.span)) << "\n";
  auto top = incident::TopPatterns(inc, 5);
  if (!top.empty()) {
    std::cout << "\nNot understood (top " << top.size() << " of " << inc.patterns.size() << " patterns)\n";
    for (const auto& [pattern, c] : top)
      std::cout << "  " << c.count << "  " << Ascii(pattern, 70) << "  (first "
                << Ascii(std::filesystem::path(inc.files[static_cast<size_t>(c.file)]).filename().string(), 40) << ":"
                << c.first_line << ")\n";
  }
  if (!t.not_replayed.empty()) {
    std::cout << "\nNot replayed (" << t.not_replayed_count << ")\n";
    for (size_t i = 0; i < t.not_replayed.size() && i < 10; ++i)
      std::cout << "  " << Ascii(t.not_replayed[i].source, 70) << ": " << Ascii(t.not_replayed[i].why, 100) << "\n";
  }
}

void PrintSideBySide(const ReplayTimeline& t, const RunSpec& spec, const RunMetrics& m) {
  reports::TextTable table(
      {"#", "at", "fault", "target", "site drained", "site resumed", "healer detect", "isolate", "recover", "GPUs(d+c)",
       "jobs"},
      {reports::Align::kRight, reports::Align::kRight, reports::Align::kLeft, reports::Align::kLeft,
       reports::Align::kRight, reports::Align::kRight, reports::Align::kRight, reports::Align::kRight,
       reports::Align::kRight, reports::Align::kRight, reports::Align::kRight});
  for (size_t i = 0; i < t.faults.size(); ++i) {
    const ReplayFault& f = t.faults[i];
    const FaultMetrics* fm = nullptr;  // the spec keeps the plan's order, which is the timeline's
    for (const auto& candidate : m.faults) {
      if (i < spec.faults.size() && candidate.fault == spec.faults[i].id) fm = &candidate;
    }
    std::string fault = f.kind;
    for (const auto& [k, v] : f.params) fault += " " + k + "=" + v;
    table.AddRow({std::to_string(i + 1), FormatDurationShort(Duration::Seconds(f.at)), Ascii(fault, 30),
                  Ascii(f.target, 40), Maybe(f.drained_after), Maybe(f.resumed_after),
                  fm ? Maybe(fm->time_to_detect) : "-", fm ? Maybe(fm->time_to_isolate) : "-",
                  fm ? Maybe(fm->time_to_recover) : "-",
                  fm ? std::to_string(fm->gpus_direct) + "+" + std::to_string(fm->gpus_collateral) : "-",
                  fm ? std::to_string(fm->jobs_touched) + " (" + std::to_string(fm->jobs_interrupted) + " int)" : "-"});
  }
  std::cout << "\nIncident (site) vs healer policy '" << Ascii(spec.policy.name)
            << "' (times after each fault; 'at' from the first event)\n"
            << (t.faults.empty()
                    ? std::string("  no fault to replay: nothing in the logs maps to a fault (see above)\n")
                    : table.Render("  "));
}

}  // namespace

int CmdReplay(const ReplayArgs& args) {
  // Stage 1: the cluster the incident happened on, and where its host names and addresses point.
  auto src = LoadClusterSource(args);
  if (!src.ok()) return Fail(ExitCode::kBadInput, src.status().message());
  auto model = cluster::LoadRackModel(src->plan.cluster.model);
  if (!model.ok()) return Fail(ExitCode::kBadInput, args.cluster + ": " + model.status().message());
  if (Status s = ApplyNvlinkMode(src->plan.cluster, *model); !s.ok()) return Fail(ExitCode::kBadInput, s.message());
  auto topo = cluster::Topology::Build(*model, src->plan.cluster.racks, src->plan.cluster.spare_trays,
                                       RegionSpecs(src->plan.cluster));
  if (!topo.ok()) return Fail(ExitCode::kBadInput, args.cluster + ": " + topo.status().message());
  if (src->plan.jobs.empty()) src->plan.jobs.push_back(DefaultReplayJob(*topo));

  // Stage 2: the logs, streamed; only events are kept.
  auto zone = incident::WallZone::Parse(args.tz);
  if (!zone.ok()) return Fail(ExitCode::kBadInput, "--tz: " + zone.status().message());
  incident::ImportOptions import_options{args.year, std::nullopt, *zone};
  if (!args.boot_time.empty()) {
    bool zoned = false;
    import_options.boot_time = incident::ParseIsoTime(args.boot_time, &zoned);
    if (!import_options.boot_time)
      return Fail(ExitCode::kBadInput,
                  "--boot-time '" + Ascii(args.boot_time) + "': expected an ISO time such as 2026-11-30T00:00:00Z");
    if (!zoned) import_options.boot_time = zone->ToUtc(*import_options.boot_time);
  }
  incident::IncidentImporter importer(import_options);
  for (const auto& path : args.incidents) {
    Status s = importer.ImportFile(path);
    if (!s.ok()) return Fail(ExitCode::kBadInput, s.message());
  }
  incident::Incident inc = importer.Finish();

  // Stage 3: events -> faults at their offsets -> plan text, checked like any plan.
  ReplayTimeline timeline = BuildReplayTimeline(inc, *topo, src->map);
  src->plan.name = "replay";
  src->plan.description = "replay of " + std::to_string(args.incidents.size()) + " incident log(s)";
  src->plan.comments.push_back("Written by rackchaos replay from:");
  for (const auto& p : args.incidents) src->plan.comments.push_back("  " + p);
  src->plan.comments.push_back(
      "Fault times are the incident's offsets plus a 10-minute lead; rerun with `rackchaos run`.");
  const std::string text = ReplayPlanYaml(timeline, src->plan);
  const std::string plan_name = args.export_path.empty() ? "<replay plan>" : args.export_path;
  auto plan = ParsePlan(text, plan_name);
  if (!plan.ok()) return Fail(ExitCode::kBadInput, "replay plan: " + plan.status().message());
  auto spec = ValidatePlan(*plan, {std::nullopt, ""});
  if (!spec.ok()) return Fail(ExitCode::kBadInput, "replay plan: " + spec.status().message());
  if (!args.export_path.empty()) {
    std::ofstream out(args.export_path, std::ios::binary);
    out << text;
    if (!out.flush()) {
      const std::string why = std::strerror(errno);
      return Fail(ExitCode::kBadInput, "cannot write --export " + args.export_path + ": " + why +
                                           " (the directory must exist and be writable)");
    }
  }

  // Stage 4: the faults on the simulator with the chosen policy.
  RunOptions opt;
  opt.db_path = args.db;
  opt.command_line = args.command_line;
  RunOutcome out = ExecuteRun(*plan, *spec, opt);
  if (out.code == ExitCode::kRuntimeError) return Fail(out.code, out.error);
  auto store = reports::ReportStore::OpenForReading(args.db);
  if (!store.ok()) return Fail(ExitCode::kRuntimeError, store.status().message());
  auto metrics = store->ReadMetrics(out.run_id);
  if (!metrics.ok()) return Fail(ExitCode::kRuntimeError, metrics.status().message());

  // Stage 5: the incident next to what the policy did.
  if (!args.quiet) {
    PrintImport(inc, timeline);
    PrintSideBySide(timeline, *spec, *metrics);
    std::cout << "\nRun " << out.run_id << " stored in " << args.db;
    if (!args.export_path.empty()) std::cout << "; plan written to " << args.export_path;
    std::cout << "\n";
  }
  return ToInt(out.code);
}

}  // namespace rackchaos::runner
