#include "runner/cli/replay_cmd.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cluster/catalogue.h"
#include "reports/incident_store.h"
#include "reports/store.h"
#include "reports/text_table.h"
#include "core/exit_code.h"
#include "runner/cli/cli_exit.h"
#include "runner/incident/importer.h"
#include "runner/incident/log_line.h"
#include "runner/cli/replay_output.h"
#include "runner/plan/plan_loader.h"
#include "runner/replay/replay.h"
#include "runner/engine/run.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {
namespace {

// The cluster side of a replay: from a plan (its cluster and jobs) or from a site inventory.
struct ClusterSource {
  ReplayPlanOptions plan;
  HostMap map;
};

Result<ClusterSource> LoadClusterSource(const ReplayArgs& args) {
  ClusterSource src;
  // Read once (a FIFO could not be read twice), then tried as a plan and as an inventory.
  auto text = ReadUserFile(args.cluster, {"plan or site inventory", kMaxPlanBytes});
  if (!text.ok()) return text.status();
  auto plan = ParsePlan(*text, args.cluster);
  std::string inventory_path;
  if (plan.ok()) {
    src.plan.cluster = plan->cluster;
    src.plan.jobs = plan->jobs;
    src.plan.healer = plan->healer.policy;
    src.plan.seed = plan->seed;
    inventory_path = plan->cluster.inventory;
  } else {
    auto inv = ParseInventory(*text, args.cluster);
    if (!inv.ok()) {
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

// --host values into the importer's options: one "NODE" for every file, "FILE=NODE" per file.
Status ApplyHosts(const ReplayArgs& args, incident::ImportOptions& options) {
  for (const std::string& h : args.hosts) {
    size_t eq = h.rfind('=');
    if (eq == std::string::npos) {
      if (!options.host.empty())
        return Status::Invalid("--host " + Ascii(h) + ": a second host for every file (already " +
                               Ascii(options.host) + "); give one per file as --host FILE=NODE");
      options.host = h;
      continue;
    }
    const std::string file = h.substr(0, eq), node = h.substr(eq + 1);
    if (std::find(args.incidents.begin(), args.incidents.end(), file) == args.incidents.end() || node.empty())
      return Status::Invalid("--host " + Ascii(h) + ": FILE=NODE needs FILE as given among the incident files");
    options.host_by_file[file] = node;
  }
  return Status::Ok();
}

reports::IncidentRecord ToRecord(const incident::Incident& inc) {
  reports::IncidentRecord r;
  r.files = inc.files;
  r.lines = inc.lines;
  r.bytes = inc.bytes;
  r.understood = inc.understood;
  r.not_understood = inc.not_understood;
  r.dropped_events = inc.dropped_events;
  r.overlong_lines = inc.overlong_lines;
  r.events.reserve(inc.events.size());
  auto opt = [](const std::optional<int>& v) { return v ? std::optional<int64_t>(*v) : std::nullopt; };
  for (const incident::IncidentEvent& e : inc.events) {
    reports::IncidentEventRow x;
    x.file = e.file;
    x.line = e.line;
    x.axis = e.time.axis == incident::TimeAxis::kWall       ? "wall"
             : e.time.axis == incident::TimeAxis::kRelative ? "relative"
                                                            : "none";
    if (e.time.axis != incident::TimeAxis::kNone) x.time_s = e.time.seconds;
    x.kind = incident::EventKindName(e.kind);
    x.host = e.host;
    x.address = e.address;
    x.iface = e.iface;
    const bool has_code = e.kind == incident::EventKind::kXid || e.kind == incident::EventKind::kSxid || e.code != 0;
    if (has_code) x.code = e.code;
    x.link = opt(e.link);
    x.recovery_action = opt(e.recovery_action);
    x.rank = opt(e.rank);
    x.device = opt(e.device);
    x.severity = incident::SeverityName(e.severity);
    x.action = e.action;
    x.job = e.job;
    if (e.caused_by >= 0) x.caused_by = e.caused_by;
    x.detail = e.detail;
    r.events.push_back(std::move(x));
  }
  for (const auto& [pattern, c] : incident::TopPatterns(inc, SIZE_MAX))
    r.patterns.push_back({pattern, c.count, c.file, c.first_line});
  return r;
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
  incident::ImportOptions import_options{args.year, std::nullopt, *zone, {}, {}};
  if (Status s = ApplyHosts(args, import_options); !s.ok()) return Fail(ExitCode::kBadInput, s.message());
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
  if (timeline.faults.empty()) {  // an empty run would pass and say nothing: say why instead
    if (!args.quiet) PrintImport(std::cout, inc, timeline, args.verbose);
    std::cout.flush();
    return Fail(ExitCode::kBadInput, NothingToReplay(inc, timeline));
  }
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
  auto store = reports::ReportStore::Open(args.db);
  if (!store.ok()) return Fail(ExitCode::kRuntimeError, store.status().message());
  if (Status s = reports::StoreIncident(*store, out.run_id, ToRecord(inc)); !s.ok())
    return Fail(ExitCode::kRuntimeError, s.message());
  auto metrics = store->ReadMetrics(out.run_id);
  if (!metrics.ok()) return Fail(ExitCode::kRuntimeError, metrics.status().message());

  // Stage 5: the incident next to what the policy did.
  if (!args.quiet) {
    PrintImport(std::cout, inc, timeline, args.verbose);
    PrintSideBySide(std::cout, timeline, *spec, *metrics);
    PrintJobSide(std::cout, timeline, args.verbose);
    std::cout << "\nRun " << out.run_id << " stored in " << args.db << " with the " << inc.events.size()
              << " imported events";
    if (!args.export_path.empty()) std::cout << "; plan written to " << args.export_path;
    std::cout << "\n";
  }
  return ToInt(out.code);
}

}  // namespace rackchaos::runner
