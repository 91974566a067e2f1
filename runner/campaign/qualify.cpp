#include "runner/campaign/qualify.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "reports/escape.h"
#include "reports/store.h"
#include "core/exit_code.h"
#include "runner/site/ledger.h"
#include "runner/plan/plan_loader.h"
#include "runner/engine/progress.h"
#include "runner/engine/real_run.h"
#include "runner/engine/run.h"
#include "runner/spec/safety.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {
namespace fs = std::filesystem;
namespace {

int Error(ExitCode code, const std::string& message) {
  std::fprintf(stderr, "rackchaos: %s\n", message.c_str());
  return ToInt(code);
}

std::vector<fs::path> Sorted(const fs::path& dir, bool dirs) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (dirs ? e.is_directory(ec) : e.is_regular_file(ec) && e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
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

// Whether `rack` is the serial of a component of the plan's cluster, as the run will store it
// (runner/engine/run.cpp: "SIM-<model>-<name>" on the simulator; real_run.cpp: the inventory's tray
// serial, or "<site>-<name>").
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
    const std::string prefix = !r.real ? "SIM-" + topo.model().name + "-"
                                       : (r.real->inventory.site.empty() ? std::string("SITE") : r.real->inventory.site) + "-";
    for (ComponentId rack : topo.racks()) (r.real ? site : sim).insert(prefix + topo.at(rack).name);
  }
  auto list = [](const std::set<std::string>& names) {
    std::string out;
    size_t n = 0;
    for (const std::string& name : names)
      if (n++ < 4) out += (out.empty() ? "" : ", ") + name;
    return n > 4 ? out + " and " + std::to_string(n - 4) + " more" : out;
  };
  std::string out;
  if (!sim.empty()) out = "its simulated racks are " + list(sim);
  if (!site.empty()) out += (out.empty() ? "" : "; ") + std::string("its site racks are ") + list(site) + " (trays: their inventory serials)";
  return out;
}

// "simulated", "on site S", or both with counts: what the record says the suite ran on.
std::string RanOn(const std::vector<Ready>& ready) {
  size_t sim = 0;
  std::string site;
  for (const Ready& r : ready) {
    if (!r.real) ++sim;
    else if (site.empty()) site = r.real->inventory.site.empty() ? r.real->inventory.path : r.real->inventory.site;
  }
  if (sim == ready.size()) return "simulated: no real rack was touched";
  if (sim == 0) return "on site " + site;
  return std::to_string(sim) + " plan(s) simulated, " + std::to_string(ready.size() - sim) + " on site " + site;
}

// Runs one plan; the verdict is the run row's status, so 'aborted' and 'failed' stay apart.
QualifiedPlan RunOne(const SuitePlan& sp, const Ready& ready, const QualifyArgs& args) {
  QualifiedPlan q{sp, std::nullopt, "error", ""};
  RunOutcome out;
  if (ready.real) {
    out = ExecuteRealRun(ready.plan, ready.spec, *ready.real, {args.db, "", args.command_line, false, nullptr});
  } else {
    RunOptions opt;
    opt.db_path = args.db;
    opt.command_line = args.command_line;
    ProgressLine line(ProgressWanted(args.progress, args.quiet));
    opt.progress = [&line](const RunProgress& p) { line.Run(p); };
    opt.on_stop = [&line](int open_faults) {
      line.Done();
      std::fprintf(stderr, "rackchaos: stopping: reverting %d fault(s), writing the report\n", open_faults);
    };
    out = ExecuteRun(ready.plan, ready.spec, opt);
  }
  if (out.run_id) q.run_id = out.run_id;
  if (out.code == ExitCode::kRuntimeError) {
    q.reason = out.error;
    return q;
  }
  auto store = reports::ReportStore::OpenForReading(args.db);
  auto row = store.ok() ? store->ReadRun(out.run_id) : Result<reports::RunRow>(store.status());
  if (!row.ok()) {
    q.reason = row.status().ToString();
    return q;
  }
  q.verdict = row->status;
  q.reason = row->failed_reason;
  return q;
}

Result<int64_t> Begin(reports::ReportStore& store, const QualifyArgs& args, const Suite& suite) {
  reports::Db& db = store.db();
  RC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("INSERT INTO qualifications(rack, suite, started_wall, verdict, command_line) "
                                            "VALUES (?1, ?2, ?3, 'running', ?4)", "recording the qualification"));
  stmt.Bind(1, std::string_view(args.rack));
  stmt.Bind(2, std::string_view(suite.name));
  const std::string now = LedgerWallNow();
  stmt.Bind(3, std::string_view(now));
  stmt.Bind(4, std::string_view(args.command_line));
  RC_RETURN_IF_ERROR(stmt.Run("recording the qualification"));
  return db.QueryInt("SELECT last_insert_rowid()", "recording the qualification");
}

Status Finish(reports::ReportStore& store, const Qualification& q, ExitCode code, const std::string& reason) {
  reports::Db& db = store.db();
  const std::string what = "recording the qualification's verdicts";
  RC_ASSIGN_OR_RETURN(auto tx, reports::Transaction::Begin(db, what));
  RC_ASSIGN_OR_RETURN(auto add, db.Prepare("INSERT INTO qualification_plans(qualification_id, seq, stage, plan_path, "
                                           "run_id, verdict, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", what));
  int64_t seq = 0;
  for (const QualifiedPlan& p : q.plans) {
    add.Bind(1, q.id);
    add.Bind(2, ++seq);
    add.Bind(3, std::string_view(p.plan.stage));
    add.Bind(4, std::string_view(p.plan.path));
    add.Bind(5, p.run_id);
    add.Bind(6, std::string_view(p.verdict));
    add.Bind(7, std::string_view(p.reason));
    RC_RETURN_IF_ERROR(add.Run(what));
  }
  RC_ASSIGN_OR_RETURN(auto fin, db.Prepare("UPDATE qualifications SET ended_wall = ?1, verdict = ?2, exit_code = ?3, "
                                           "reason = ?4 WHERE id = ?5", what));
  const std::string now = LedgerWallNow();
  fin.Bind(1, std::string_view(now));
  fin.Bind(2, std::string_view(q.verdict));
  fin.Bind(3, static_cast<int64_t>(ToInt(code)));
  fin.Bind(4, std::string_view(reason));
  fin.Bind(5, q.id);
  RC_RETURN_IF_ERROR(fin.Run(what));
  return tx.Commit(what);
}

}  // namespace

Result<Suite> LoadSuite(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": no such suite directory");
  Suite suite;
  suite.name = fs::path(dir).lexically_normal().filename().string();
  if (suite.name.empty()) suite.name = fs::path(dir).lexically_normal().parent_path().filename().string();
  for (const fs::path& stage : Sorted(dir, true)) {
    std::vector<fs::path> plans = Sorted(stage, false);
    if (plans.empty()) continue;
    suite.stages.push_back(stage.filename().string());
    for (const fs::path& p : plans) suite.plans.push_back({suite.stages.back(), p.string()});
  }
  if (suite.plans.empty())
    return Status::Invalid(dir + ": no stage with a plan; a suite is a directory of stage directories in run "
                                 "order (e.g. 1-tray/, 2-rack/, 3-multi-rack/), each holding plan files (*.yaml)");
  return suite;
}

int CmdQualify(const QualifyArgs& args) {
  // Stage 1: the suite and every plan in it, validated before anything runs.
  auto suite = LoadSuite(args.suite);
  if (!suite.ok()) return Error(ExitCode::kBadInput, suite.status().message());
  if (args.rack.empty()) return Error(ExitCode::kBadInput, "--rack: the rack's serial number is required");
  std::vector<Ready> ready;
  for (const SuitePlan& sp : suite->plans) {
    auto r = Prepare(sp.path);
    if (!r.ok()) return Error(ExitCode::kBadInput, r.status().message());
    ready.push_back(std::move(*r));
  }
  // The record is the rack's: a serial no plan's cluster has would file the verdicts under nothing.
  if (std::none_of(ready.begin(), ready.end(), [&](const Ready& r) { return NamesComponent(r, args.rack); }))
    return Error(ExitCode::kBadInput, "--rack '" + reports::TerminalText(args.rack) + "' names no component of the suite's clusters (" +
                                          RackExamples(ready) + "); name the rack's serial as its runs store it");
  const std::string ran_on = RanOn(ready);
  if (StopFileExists()) return Error(ExitCode::kInterrupted, "stop file " + StopFilePath() + " exists; remove it to run");
  InstallStopHandlers();

  // Stage 2: the record, then the stages in order; a stage that is not reached is recorded as skipped.
  auto store = reports::ReportStore::Open(args.db);
  if (!store.ok()) return Error(ExitCode::kRuntimeError, store.status().ToString());
  auto id = Begin(*store, args, *suite);
  if (!id.ok()) return Error(ExitCode::kRuntimeError, id.status().ToString());
  Qualification q{*id, args.rack, suite->name, "passed", {}};
  std::string blocked;  // why later plans are skipped
  for (size_t i = 0; i < suite->plans.size(); ++i) {
    const SuitePlan& sp = suite->plans[i];
    const bool new_stage = i == 0 || suite->plans[i - 1].stage != sp.stage;
    if (new_stage && blocked.empty() && q.verdict != "passed") blocked = "an earlier stage did not pass";
    QualifiedPlan p = blocked.empty() ? RunOne(sp, ready[i], args) : QualifiedPlan{sp, std::nullopt, "skipped", blocked};
    if (p.verdict == "interrupted" || StopRequested()) blocked = "the qualification was interrupted";
    if (p.verdict == "error" && q.verdict != "interrupted") q.verdict = "error";
    else if (p.verdict == "interrupted") q.verdict = "interrupted";
    else if ((p.verdict == "failed" || p.verdict == "aborted") && q.verdict == "passed") q.verdict = "failed";
    if (!args.quiet)
      std::printf("  %-14s %-36s %-11s%s\n", sp.stage.c_str(), fs::path(sp.path).filename().c_str(), p.verdict.c_str(),
                  p.run_id ? (" run " + std::to_string(*p.run_id)).c_str() : "");
    q.plans.push_back(std::move(p));
  }

  // Stage 3: the verdict, stored, and as JUnit when asked.
  const ExitCode code = q.verdict == "passed" ? ExitCode::kPass : q.verdict == "failed" ? ExitCode::kExpectationFailed
                        : q.verdict == "interrupted" ? ExitCode::kInterrupted : ExitCode::kRuntimeError;
  std::string reason;
  for (const QualifiedPlan& p : q.plans)
    if (reason.empty() && p.verdict != "passed" && p.verdict != "skipped")
      reason = fs::path(p.plan.path).filename().string() + " " + p.verdict + (p.reason.empty() ? "" : ": " + p.reason);
  Status s = Finish(*store, q, code, reason);
  if (!s.ok()) return Error(ExitCode::kRuntimeError, s.ToString());
  if (!args.junit.empty()) {
    std::ofstream out(args.junit, std::ios::binary);
    if (!(out << QualificationJUnit(q)) || !out.flush()) return Error(ExitCode::kRuntimeError, args.junit + ": cannot write");
  }
  if (!args.quiet)
    std::printf("Qualification %lld of rack %s (suite %s, %s): %s%s\nStored in %s (tables qualifications, qualification_plans)\n",
                static_cast<long long>(q.id), reports::TerminalText(q.rack).c_str(), reports::TerminalText(q.suite).c_str(),
                ran_on.c_str(), q.verdict.c_str(), reason.empty() ? "" : (" - " + reports::TerminalText(reason)).c_str(),
                args.db.c_str());
  return ToInt(code);
}

}  // namespace rackchaos::runner
