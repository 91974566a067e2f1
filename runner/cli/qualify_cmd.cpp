#include "runner/cli/qualify_cmd.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <vector>

#include "core/exit_code.h"
#include "core/strings.h"
#include "reports/escape.h"
#include "runner/campaign/qualify.h"
#include "runner/cli/cli_exit.h"
#include "runner/cli/real_run.h"
#include "runner/engine/progress.h"
#include "runner/engine/run.h"
#include "runner/plan/plan_loader.h"
#include "runner/spec/safety.h"

namespace rackchaos::runner {
namespace {

namespace fs = std::filesystem;

int QualifyError(ExitCode code, const std::string& message) {
  std::fprintf(stderr, "rackchaos: %s\n", message.c_str());
  return ToInt(code);
}

// A plan validated before the qualification starts.
struct Ready {
  Plan plan;
  RunSpec spec;
  std::optional<RealSpec> real;  // for plans with a site inventory
};

Result<Ready> Prepare(const std::string& path) {
  RC_ASSIGN_OR_RETURN(Plan plan, LoadPlan(path));
  RC_ASSIGN_OR_RETURN(RunSpec spec, ValidatePlan(plan, {}));
  Ready r{std::move(plan), std::move(spec), std::nullopt};
  if (!r.plan.cluster.inventory.empty()) {
    RC_ASSIGN_OR_RETURN(RealSpec real, ValidateRealPlan(r.plan, r.spec));
    r.real = std::move(real);
  }
  return r;
}

// Whether `rack` is the serial of a component of the plan's cluster, as the run will store it (the
// backend's serials: "SIM-<model>-<name>" on the simulator; on a site the inventory's tray serial, or
// "<site>-<name>").
bool NamesComponent(const Ready& r, const std::string& rack) {
  const cluster::Topology& topo = r.spec.topology;
  auto named = [&](const std::string& prefix) {
    return rack.size() > prefix.size() && rack.compare(0, prefix.size(), prefix) == 0 &&
           topo.Find(std::string_view(rack).substr(prefix.size())).has_value();
  };
  if (!r.real) return named("SIM-" + topo.model().name + "-");
  for (const auto& [tray, mapping] : r.real->inventory.trays)
    if (mapping.serial == rack) return true;
  return named((r.real->inventory.site.empty() ? std::string("SITE") : r.real->inventory.site) + "-");
}

// The rack serials a --rack could have named, for the refusal: "simulated racks A, B; site racks C".
std::string RackExamples(const std::vector<Ready>& ready) {
  std::set<std::string> sim, site;
  for (const Ready& r : ready) {
    const cluster::Topology& topo = r.spec.topology;
    const std::string prefix =
        !r.real ? "SIM-" + topo.model().name + "-"
                : (r.real->inventory.site.empty() ? std::string("SITE") : r.real->inventory.site) + "-";
    for (ComponentId rack : topo.racks()) (r.real ? site : sim).insert(prefix + topo.at(rack).name);
  }
  auto list = [](const std::set<std::string>& names) {
    return JoinCut(std::vector<std::string>(names.begin(), names.end()), 4, "");
  };
  std::string out;
  if (!sim.empty()) out = "its simulated racks are " + list(sim);
  if (!site.empty())
    out += (out.empty() ? "" : "; ") + std::string("its site racks are ") + list(site) +
           " (trays: their inventory serials)";
  return out;
}

// "simulated", "on site S", or both with counts: what the record says the suite ran on.
std::string RanOn(const std::vector<Ready>& ready) {
  size_t sim = 0;
  std::string site;
  for (const Ready& r : ready) {
    if (!r.real)
      ++sim;
    else if (site.empty())
      site = r.real->inventory.site.empty() ? r.real->inventory.path : r.real->inventory.site;
  }
  if (sim == ready.size()) return "simulated: no real rack was touched";
  if (sim == 0) return "on site " + site;
  return std::to_string(sim) + " plan(s) simulated, " + std::to_string(ready.size() - sim) + " on site " + site;
}

// Said the moment a stop is seen, before the faults are reverted and the report written.
void SayStopping(int open_faults) {
  std::fprintf(stderr, "rackchaos: stopping: reverting %d fault(s), writing the report\n", open_faults);
}

// The composition root for each plan: its site's hosts when it names an inventory, else the simulator.
RunOutcome RunOne(const Ready& ready, const QualifyArgs& args) {
  if (ready.real)
    return ExecuteRealRun(ready.plan, ready.spec, *ready.real,
                          {args.db, args.ledger, args.command_line, args.accept_new_host_keys, SayStopping});
  RunOptions opt;
  opt.db_path = args.db;
  opt.command_line = args.command_line;
  ProgressLine line(ProgressWanted(args.progress, args.quiet));
  opt.progress = [&line](const RunProgress& p) { line.Run(p); };
  opt.on_stop = [&line](int open_faults) {
    line.Done();
    SayStopping(open_faults);
  };
  return ExecuteRun(ready.plan, ready.spec, opt);
}

}  // namespace

int CmdQualify(const QualifyArgs& args) {
  // Stage 1: the suite and every plan in it, validated before anything runs.
  auto suite = LoadSuite(args.suite);
  if (!suite.ok()) return QualifyError(ExitCode::kBadInput, suite.status().message());
  if (args.rack.empty()) return QualifyError(ExitCode::kBadInput, "--rack: the rack's serial number is required");
  std::vector<Ready> ready;
  for (const SuitePlan& sp : suite->plans) {
    auto r = Prepare(sp.path);
    if (!r.ok()) return QualifyError(ExitCode::kBadInput, r.status().message());
    PrintWarnings(r->spec.warnings);  // as `run` and `validate` print them, before anything runs
    if (r->real) PrintWarnings(r->real->warnings);
    ready.push_back(std::move(*r));
  }
  // The record is the rack's: a serial no plan's cluster has would file the verdicts under nothing.
  if (std::none_of(ready.begin(), ready.end(), [&](const Ready& r) { return NamesComponent(r, args.rack); }))
    return QualifyError(ExitCode::kBadInput, "--rack '" + reports::TerminalText(args.rack) +
                                                 "' names no component of the suite's clusters (" +
                                                 RackExamples(ready) + "); name the rack's serial as its runs store it");
  const std::string ran_on = RanOn(ready);
  if (StopFileExists())
    return QualifyError(ExitCode::kInterrupted, "stop file " + StopFilePath() + " exists; remove it to run");
  InstallStopHandlers();

  // Stage 2: the stages in order, each plan printed as it is decided.
  auto print = [&args](const QualifiedPlan& p) {
    if (args.quiet) return;
    std::printf("  %-14s %-36s %-11s%s\n", p.plan.stage.c_str(), fs::path(p.plan.path).filename().c_str(),
                p.verdict.c_str(), p.run_id ? (" run " + std::to_string(*p.run_id)).c_str() : "");
  };
  auto q = Qualify(
      *suite, {args.rack, args.db, args.command_line}, [&](size_t i) { return RunOne(ready[i], args); }, print);
  if (!q.ok()) return QualifyError(ExitCode::kRuntimeError, q.status().ToString());

  // Stage 3: the verdict, as JUnit when asked.
  if (!args.junit.empty()) {
    std::ofstream out(args.junit, std::ios::binary);
    if (!(out << QualificationJUnit(*q)) || !out.flush())
      return QualifyError(ExitCode::kRuntimeError, args.junit + ": cannot write");
  }
  if (!args.quiet)
    std::printf(
        "Qualification %lld of rack %s (suite %s, %s): %s%s\nStored in %s (tables qualifications, "
        "qualification_plans)\n",
        static_cast<long long>(q->id), reports::TerminalText(q->rack).c_str(), reports::TerminalText(q->suite).c_str(),
        ran_on.c_str(), q->verdict.c_str(), q->reason.empty() ? "" : (" - " + reports::TerminalText(q->reason)).c_str(),
        args.db.c_str());
  return ToInt(q->code);
}

}  // namespace rackchaos::runner
