// rackchaos: the command line. Each subcommand reads as a list of stages.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/catalogue.h"
#include "cluster/failure_catalogue.h"
#include "core/huge_pages.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/user_file.h"
#include "healer/detector.h"
#include "healer/policy.h"
#include "injectors/injector.h"
#include "reports/escape.h"
#include "runner/cli/blast_cmd.h"
#include "runner/cli/catalogue_cmd.h"
#include "runner/cli/cli_exit.h"
#include "runner/cli/commit.h"
#include "runner/cli/dry_run.h"
#include "core/exit_code.h"
#include "runner/spec/expect.h"
#include "runner/cli/explain_cmd.h"
#include "runner/cli/init_cmd.h"
#include "runner/plan/plan_loader.h"
#include "runner/cli/qualify_cmd.h"
#include "runner/cli/real_run.h"
#include "runner/cli/recover_cmd.h"
#include "runner/cli/replay_cmd.h"
#include "runner/cli/report_cmd.h"
#include "runner/engine/run.h"
#include "runner/spec/safety.h"
#include "runner/cli/serve_cmd.h"
#include "runner/cli/sweep_cmd.h"
#include "runner/campaign/sweep.h"
#include "runner/serve/http_server.h"
#include "runner/spec/validate.h"

namespace rc = rackchaos;
using rackchaos::ExitCode;
using rackchaos::ToInt;
using rackchaos::runner::Fail;
using rackchaos::runner::PrintWarnings;

namespace {

struct Common {
  int verbose = 0;
  bool quiet = false;
  std::string db = "rackchaos.db";
  std::string ledger;              // real mode: fault ledger path (default <db>.ledger)
  bool accept_new_host_keys = false;
  bool progress = false;           // --progress: the progress line on stderr even when it is not a terminal
  std::string metrics_listen;      // --metrics-listen HOST:PORT (run, sweep): live /metrics
  bool allow_remote = false;       // --allow-remote: a non-loopback --listen / --metrics-listen
  double pace = 0;                 // --pace N (run, simulated): N simulated seconds per wall second
};

void SetupLogging(const Common& c) {
  auto level = spdlog::level::warn;
  if (c.quiet) level = spdlog::level::err;
  else if (c.verbose == 1) level = spdlog::level::info;
  else if (c.verbose >= 2) level = spdlog::level::debug;
  rc::InitLogging(level);
}

// Said the moment a stop (SIGINT/SIGTERM, the stop file) is seen, before the faults are reverted and the
// report written, which can take a while on a large cluster.
void SayStopping(int open_faults) {
  std::fprintf(stderr, "rackchaos: stopping: reverting %d fault(s), writing the report\n", open_faults);
}

// Load and validate: every problem is bad input (exit 2) with a file:line:column message. `inventory`
// (run's --inventory) puts the plan on that site before it is validated.
int LoadAndValidate(const std::string& path, const rc::runner::ValidateOptions& vopt, rc::runner::Plan& plan,
                    rc::runner::RunSpec& spec, const std::string& inventory = "") {
  auto loaded = rc::runner::LoadPlan(path);
  if (!loaded.ok()) return Fail(ExitCode::kBadInput, loaded.status().message());
  plan = std::move(*loaded);
  rc::runner::UseInventory(plan, inventory);
  auto validated = rc::runner::ValidatePlan(plan, vopt);
  if (!validated.ok()) return Fail(ExitCode::kBadInput, validated.status().message());
  spec = std::move(*validated);
  PrintWarnings(spec.warnings);
  return 0;
}

// Real mode: the plan's site inventory is checked once for every fault, then the faults run on its hosts.
int CmdRunReal(const Common& c, const rc::runner::Plan& plan, const rc::runner::RunSpec& spec,
               const std::string& command_line) {
  auto real = rc::runner::ValidateRealPlan(plan, spec);
  if (!real.ok()) return Fail(ExitCode::kBadInput, real.status().message());
  PrintWarnings(real->warnings);
  if (c.pace > 0) return Fail(ExitCode::kBadInput, "--pace slows simulated runs; a real run keeps the wall clock");
  rc::runner::RealRunOptions opt{c.db, c.ledger, command_line, c.accept_new_host_keys, SayStopping};
  rc::reports::LiveMetrics metrics;
  std::unique_ptr<rc::serve::HttpServer> endpoint;
  if (!c.metrics_listen.empty()) {
    int code = 0;
    if (!(endpoint = rc::runner::StartMetricsListen(c.metrics_listen, c.allow_remote, metrics, code))) return code;
    opt.live = &metrics;
  }
  rc::runner::RunOutcome out = rc::runner::ExecuteRealRun(plan, spec, *real, opt);
  if (!c.quiet && !out.summary.empty()) std::cout << out.summary;
  if (!out.error.empty()) Fail(out.code, out.error);
  if (!c.quiet && out.run_id) std::cout << "\nRun " << out.run_id << " (real, " << real->hosts.size() << " host(s)) stored in " << c.db << "\n";
  return ToInt(out.code);
}

int CmdRun(const Common& c, const std::string& path, std::optional<uint64_t> seed, const std::string& healer,
           const std::string& inventory, const std::string& command_line) {
  rc::runner::Plan plan;
  rc::runner::RunSpec spec;
  if (int rc_ = LoadAndValidate(path, {seed, healer}, plan, spec, inventory)) return rc_;
  if (rc::runner::StopFileExists())  // an operator halted every run on this machine
    return Fail(ExitCode::kInterrupted, "stop file " + rc::runner::StopFilePath() + " exists; remove it to run");
  rc::runner::InstallStopHandlers();
  // The composition root: a plan on a site runs on its hosts (SSH, wall clock), any other on the simulator.
  if (!plan.cluster.inventory.empty()) return CmdRunReal(c, plan, spec, command_line);
  rc::runner::RunOptions opt;
  opt.db_path = c.db;
  opt.command_line = command_line;
  // --metrics-listen: /metrics while the run goes (a Prometheus scrapes it); --pace slows it to be watched.
  rc::reports::LiveMetrics metrics;
  std::unique_ptr<rc::serve::HttpServer> endpoint;
  if (!c.metrics_listen.empty()) {
    int code = 0;
    if (!(endpoint = rc::runner::StartMetricsListen(c.metrics_listen, c.allow_remote, metrics, code))) return code;
    opt.live = &metrics;
  }
  opt.pace = c.pace;
  rc::runner::ProgressLine progress(rc::runner::ProgressWanted(c.progress, c.quiet));
  opt.progress = [&progress](const rc::runner::RunProgress& p) { progress.Run(p); };
  opt.on_stop = [&progress](int open_faults) {
    progress.Done();
    SayStopping(open_faults);
  };
  rc::runner::RunOutcome out = rc::runner::ExecuteRun(plan, spec, opt);
  progress.Done();
  if (out.code == ExitCode::kRuntimeError) return Fail(out.code, out.error);
  if (!c.quiet) {
    std::cout << out.summary;
    if (!out.gates.empty()) {
      std::cout << "\nExpectations\n";
      for (const auto& g : out.gates) std::cout << "  " << (g.passed ? "pass  " : "FAIL  ") << g.message << "\n";
    }
    std::cout << "\nRun " << out.run_id << " stored in " << c.db << " (seed " << spec.seed << "; replay with --seed "
              << spec.seed << ")\n";
  }
  return ToInt(out.code);
}

int CmdValidate(const std::string& path, std::optional<uint64_t> seed) {
  rc::runner::Plan plan;
  rc::runner::RunSpec spec;
  if (int rc_ = LoadAndValidate(path, {seed, ""}, plan, spec)) return rc_;
  if (!plan.cluster.inventory.empty()) {
    auto real = rc::runner::ValidateRealPlan(plan, spec);
    if (!real.ok()) return Fail(ExitCode::kBadInput, real.status().message());
    PrintWarnings(real->warnings);
    std::cout << path << ": site inventory " << real->inventory.path << " (" << real->hosts.size() << " host(s) used)\n";
  }
  std::cout << path << ": ok: " << spec.topology->model().name << " x" << spec.topology->racks().size() << " ("
            << spec.topology->gpus().size() << " GPUs), " << spec.jobs.size() << " job(s), " << spec.faults.size()
            << " fault(s), healer policy " << rc::reports::TerminalText(spec.policy.name) << ", horizon " << rc::FormatDuration(spec.horizon) << "\n";
  for (const auto& f : spec.faults)
    std::cout << "  #" << f.id << " at " << rc::FormatDuration(f.at) << ": " << f.injector->name() << " on "
              << spec.topology->TargetName(f.target)
              << (f.duration ? " for " + rc::FormatDuration(*f.duration) : std::string(" until the end")) << "\n";
  return 0;
}

// Name and description columns, the names padded to the longest: a long name never pushes its
// description out of line. Names and descriptions come from rackchaos's own tables.
void PrintColumns(const std::vector<std::pair<std::string, std::string>>& rows) {
  size_t width = 0;
  for (const auto& [name, desc] : rows) width = std::max(width, name.size());
  for (const auto& [name, desc] : rows) std::printf("%-*s  %s\n", static_cast<int>(width), name.c_str(), desc.c_str());
}

int CmdList(const std::string& what) {
  std::vector<std::pair<std::string, std::string>> rows;
  if (what == "models") {
    for (const auto& name : rc::cluster::CatalogueModelNames()) {
      auto m = rc::cluster::LoadRackModel(name);
      rows.emplace_back(name, m.ok() ? m->description : m.status().message());
    }
  } else if (what == "injectors") {
    for (const auto* i : rc::injectors::AllInjectors()) rows.emplace_back(std::string(i->name()), std::string(i->summary()));
  } else if (what == "detectors") {
    for (const auto& d : rc::healer::DetectorTable()) rows.emplace_back(d.name, d.summary);
  } else if (what == "policies") {
    for (const auto& name : rc::healer::ShippedPolicyNames()) {
      auto p = rc::healer::LoadPolicy(name);
      rows.emplace_back(name, p.ok() ? p->description : p.status().message());
    }
  } else if (what == "metrics") {
    for (const auto& [name, desc] : rc::runner::ExpectationMetrics()) rows.emplace_back(name, desc);
  } else if (what == "catalogues") {
    for (const auto& name : rc::cluster::FailureCatalogueNames()) {
      auto c = rc::cluster::LoadFailureCatalogue(name);
      rows.emplace_back(name, c.ok() ? c->source : c.status().message());
    }
  }
  PrintColumns(rows);
  return 0;
}

}  // namespace

// A seed is an integer from 0 to 2^64-1. CLI11 reads "-1" into a uint64_t as 2^64-1; a seed the user did
// not write would be replayed by nobody.
const CLI::Validator kSeedRange(
    [](const std::string& text) {
      uint64_t value = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec == std::errc() && end == text.data() + text.size()) return std::string();
      return "'" + text + "' is not an integer from 0 to 18446744073709551615";
    },
    "SEED", "seed");

// A whole number from `lo` to `hi`. CLI11 converts first and says only "Could not convert" for a number
// that does not fit the option's type (--seeds 99999999999): this says what would be valid instead.
CLI::Validator IntegerIn(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](const std::string& text) {
        int64_t value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc() && end == text.data() + text.size() && value >= lo && value <= hi) return std::string();
        return rc::Quote(text) + " is not an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
      },
      "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]", "integer range");
}

// A number from 0 up to `hi` (--pace): CLI11's own Range prints its bounds with six decimals.
CLI::Validator NumberUpTo(double hi, const std::string& hi_text) {
  return CLI::Validator(
      [hi, hi_text](const std::string& text) {
        double value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc() && end == text.data() + text.size() && value >= 0 && value <= hi) return std::string();
        return rc::Quote(text) + " is not a number from 0 to " + hi_text;
      },
      "NUMBER in [0 - " + hi_text + "]", "number range");
}

// A stored run's id: SQLite row ids start at 1 (CLI11 read 99999999999999999999 as INT64_MAX, -5 as -5).
const CLI::Validator kRunId = IntegerIn(1, INT64_MAX);

// HOST:PORT with a port from 0 to 65535 (rackchaos serve --listen, run/sweep --metrics-listen), checked
// while the command line is read: nothing starts on a bad address.
// CLI11 puts the option's name before the message.
CLI::Validator ListenAddress() {
  return CLI::Validator(
      [](const std::string& text) {
        auto parsed = rc::serve::ParseListen(text, "");
        return parsed.ok() ? std::string() : parsed.status().message();
      },
      "HOST:PORT", "listen address");
}

namespace {

// The subcommands that simulate (a cluster's month can hold gigabytes): the first argument that is not an
// option names the subcommand (rackchaos has no global option that takes a value).
bool Simulates(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("-")) continue;
    return a == "run" || a == "sweep" || a == "qualify" || a == "replay";
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else: a million-GPU month spent a sixth of its CPU on page faults without huge pages.
  // Other subcommands are short: executing them twice would only cost.
  if (Simulates(argc, argv)) rc::UseHugePagesForHeap(argv);
  CLI::App app{"rackchaos: fault injection and self-healing tests for rack-scale GPU clusters.\n"
               "A YAML plan says what to break; the simulated rack breaks it, the healer recovers, and a SQLite\n"
               "report (rackchaos.db) says how far the damage spread and how long recovery took."};
  app.footer(std::string("\n") + rackchaos::kExitCodeHelp +
             "\nExamples:\n  rackchaos run scenarios/quickstart.yaml\n  rackchaos run scenarios/quickstart.yaml --seed 7 --healer aggressive\n"
             "  rackchaos validate scenarios/quickstart.yaml\n  rackchaos recover --db rackchaos.db\n  rackchaos report --db rackchaos.db\n"
             "  sqlite3 rackchaos.db 'select * from fault_summary'\n");
  app.set_version_flag("--version", std::string("rackchaos ") + RACKCHAOS_VERSION + " (commit " + RACKCHAOS_COMMIT + ")",
                       "Print the version and the git commit it was built from, and exit");
  app.require_subcommand(1);
  Common common;
  auto add_common = [&](CLI::App* sub, bool db) {
    sub->add_flag("-v,--verbose", common.verbose, "More log output (-v info, -vv debug); lines carry the run's time");
    sub->add_flag("-q,--quiet", common.quiet, "Only errors");
    if (sub->get_name() == "run" || sub->get_name() == "sweep" || sub->get_name() == "qualify")
      sub->add_flag("--progress", common.progress, "Progress line on stderr (default: only when stderr is a terminal)");
    if (db) sub->add_option("--db", common.db, "Report database (SQLite)")->capture_default_str();
    if (sub->get_name() == "run" || sub->get_name() == "sweep") {
      sub->add_option("--metrics-listen", common.metrics_listen,
                      "Serve live metrics in Prometheus' format at http://HOST:PORT/metrics while it runs, PORT 0 "
                      "to 65535 (docs/serve.md)")
          ->check(ListenAddress());
      sub->add_flag("--allow-remote", common.allow_remote, "Allow a --metrics-listen address that is not loopback");
    }
  };

  std::string plan_path, healer, list_what, inventory;
  std::optional<uint64_t> seed;

  auto* run = app.add_subcommand("run", "Run a plan on the simulated cluster and record the report");
  run->add_option("plan", plan_path, "Plan file (YAML)")->required();
  run->add_option("--seed", seed, "Override the plan's seed (the summary prints the seed used)")->check(kSeedRange);
  run->add_option("--healer", healer, "Healer policy: default, conservative, aggressive, or a policy YAML path");
  run->add_option("--inventory", inventory, "Run on real hosts: this site inventory instead of the plan's cluster.inventory");
  bool dry_run = false;
  run->add_flag("--dry-run", dry_run, "Print the resolved timeline (what would happen to which component) and exit; touches nothing");
  run->add_option("--ledger", common.ledger, "Real mode: fault ledger (default <db>.ledger)");
  run->add_flag("--accept-new-host-keys", common.accept_new_host_keys, "Real mode: add unknown SSH host keys to known_hosts (changed keys are always refused)");
  run->add_option("--pace", common.pace, "Simulated seconds per wall second (e.g. 60): a simulated run slowed to be watched or scraped; same results")
      ->check(NumberUpTo(1e12, "1e12"));
  add_common(run, true);

  auto* recover = app.add_subcommand("recover", "Revert every fault a crashed or killed real run left applied (from the fault ledger)");
  recover->add_option("--ledger", common.ledger, "Fault ledger (default <db>.ledger)");
  recover->add_flag("--accept-new-host-keys", common.accept_new_host_keys, "Add unknown SSH host keys to known_hosts");
  rc::runner::RecoverOptions recover_options;
  recover->add_flag("--list", recover_options.list_only, "Print the open ledger entries (with their ids) and touch nothing");
  recover->add_option("--forget", recover_options.forget,
                      "Ledger entry ids to close without reverting: the host is gone for good or was fixed by hand")
      ->delimiter(',');
  recover->add_option("--reason", recover_options.forget_reason, "Why the --forget entries are given up (kept in the ledger)");
  add_common(recover, true);

  auto* validate = app.add_subcommand("validate", "Check a plan without running it (exit 0 ok, 2 with the error)");
  validate->add_option("plan", plan_path, "Plan file (YAML)")->required();
  validate->add_option("--seed", seed, "Seed for target picks")->check(kSeedRange);
  add_common(validate, false);

  rc::runner::ReportArgs report_args;
  auto* report = app.add_subcommand("report", "Render a stored run (default: the latest) as text, JSON, Markdown, JUnit, Prometheus or HTML");
  report->add_option("run", report_args.run, "Run id (see `sqlite3 rackchaos.db 'select id, plan_name from runs'`)")
      ->check(kRunId);
  report->add_option("-f,--format", report_args.format, "text | json | markdown | junit | prometheus | html")->capture_default_str();
  report->add_option("-o,--output", report_args.output, "Write to this file instead of stdout");
  report->add_option("--lemon-runs", report_args.lemon_runs,
                     "Text: flag parts this run isolated that were really faulty in at least N stored runs")
      ->check(CLI::Range(1, 1000000))->capture_default_str();
  report->footer(std::string("\n") + rc::runner::kReportExitHelp);
  add_common(report, true);
  std::vector<std::string> merge_inputs;
  std::string merge_output;
  auto* merge = report->add_subcommand("merge", "Copy every run of several report databases into one, skipping runs it already has");
  merge->add_option("inputs", merge_inputs, "Report databases (shards) to merge")->required();
  merge->add_option("-o,--output", merge_output, "Destination database (created if absent)")->required();

  std::string sweep_id;
  auto* report_sweep = report->add_subcommand("sweep", "Aggregates of a stored sweep (default: the latest), also after merging its shards");
  report_sweep->add_option("sweep", sweep_id, "Sweep id (printed by `rackchaos sweep`)");
  report_sweep->add_option("--db", common.db, "Report database (SQLite)");
  rc::runner::SweepOutputArgs sweep_output;
  auto add_sweep_output = [&](CLI::App* cmd) {
    cmd->add_option("--metrics", sweep_output.metrics, "Metrics to aggregate, comma-separated (any expectation metric; default ttr.p50,ttr.p95,ettr.min,ettr.mean,gpu_hours_lost.total,drained.gpus,drained.gpu_hours,healer.precision,healer.recall)");
    cmd->add_option("--csv", sweep_output.csv, "Also write the aggregates as CSV to FILE (- for stdout), one row per grid point and metric");
    cmd->add_option("--html", sweep_output.html, "Also write an HTML page to FILE: per metric, the mean with 95% CI bars against the grid values, and its table");
    cmd->add_flag("--timing", sweep_output.timing, "Show the runs' wall and CPU milliseconds per grid point (this machine's; with --csv, as rows run.wall_ms and run.cpu_ms)");
  };
  add_sweep_output(report_sweep);

  rc::runner::SweepArgs sweep_args;
  auto* sweep = app.add_subcommand("sweep", "Run a plan for seeds 1..N (and a grid of parameters); store every run and print aggregates");
  sweep->add_option("plan", sweep_args.plan, "Plan file (YAML)")->required();
  sweep->add_option("--seeds", sweep_args.seeds, "Seeds 1..N, N at most 2147483647 (each made as its run starts)")
      ->check(IntegerIn(1, rc::runner::kMaxSweepSeeds))
      ->capture_default_str();
  sweep->add_option("--grid", sweep_args.grid, "key=v1,v2; keys: healer, chaos.scale, spares, checkpoint.interval, healer.missed_beats, healer.straggler_window, healer.mad_threshold, healer.temperature_c, healer.correlation_window, healer.recheck, healer.burn_in; repeat for more axes");
  sweep->add_option("--threads", sweep_args.threads, "Runs at once, 1 to 1024 (each run is single-threaded)")
      ->check(IntegerIn(1, rc::runner::kMaxSweepThreads))
      ->capture_default_str();
  sweep->add_option("--shard", sweep_args.shard, "K/N, 1 <= K <= N <= --seeds: run only seeds s with (s-1) % N == K-1; merge shards with `report merge`");
  sweep->add_option("-o", common.db, "Report database (same as --db)");
  add_sweep_output(sweep);
  add_common(sweep, true);

  rc::runner::CompareArgs compare_args;
  auto* compare = app.add_subcommand("compare", "What got better or worse from run A to run B; exit 1 when a --fail-on threshold regresses");
  compare->add_option("run_a", compare_args.run_a, "Baseline run id")->required()->check(kRunId);
  compare->add_option("run_b", compare_args.run_b, "Run id to judge")->required()->check(kRunId);
  compare->add_option("--db-b", compare_args.db_b, "Database of run B, when not --db");
  compare->add_option("--fail-on", compare_args.fail_on, "Allowed worsening, e.g. ttr.p95=+10%,ttr.max=+30s,precision=-0.05");
  add_common(compare, true);

  rc::runner::QualifyArgs qualify_args;
  auto* qualify = app.add_subcommand("qualify", "Qualify a rack: run a suite's stages of plans in order, each only if the one before passed; one record per rack");
  qualify->add_option("suite", qualify_args.suite, "Suite directory: stage directories (1-tray/, 2-rack/, ...) of plans")->required();
  qualify->add_option("--rack", qualify_args.rack, "The rack's serial number, recorded with the verdicts")->required();
  qualify->add_option("--junit", qualify_args.junit, "Also write the verdicts as JUnit XML to this file");
  qualify->add_option("--ledger", common.ledger, "Real plans: fault ledger (default <db>.ledger)");
  qualify->add_flag("--accept-new-host-keys", common.accept_new_host_keys, "Real plans: add unknown SSH host keys to known_hosts (changed keys are always refused)");
  add_common(qualify, true);

  std::string rack_serial;
  int history_lemon_runs = 2;
  auto* history = app.add_subcommand("history", "Every stored run that touched a rack: verdicts, trend, lemons");
  history->add_option("--rack", rack_serial, "Rack (or tray) serial, e.g. SIM-gb200-nvl72-r01")->required();
  history->add_option("--lemon-runs", history_lemon_runs, "A lemon: isolated as really faulty in at least N runs")
      ->check(CLI::Range(1, 1000000))->capture_default_str();
  add_common(history, true);

  rc::runner::ReplayArgs replay_args;
  auto* replay = app.add_subcommand("replay", "Rebuild an incident from its logs, run it with a healer policy, compare (docs/replay.md)");
  replay->add_option("incidents", replay_args.incidents, "Kernel logs, Slurm logs/tables, JSON/CSV timelines")->required();
  replay->add_option("--cluster", replay_args.cluster, "Plan (cluster + workload) or site inventory")->required();
  replay->add_option("--healer", replay_args.healer, "Healer policy: default, conservative, aggressive, or a policy YAML path");
  replay->add_option("--gpu-map", replay_args.gpu_map, "Lines 'HOST TRAY' and 'HOST ADDRESS TARGET' (PCI id or interface)");
  replay->add_option("--export", replay_args.export_path, "Write the replay plan here (rerun with `rackchaos run`)");
  replay->add_option("--year", replay_args.year, "Year of log stamps that print none (journalctl, syslog)")
      ->check(CLI::Range(1970, 9999));
  replay->add_option("--boot-time", replay_args.boot_time, "ISO time plain dmesg uptimes count from (aligns them with Slurm and journal times)");
  replay->add_option("--tz", replay_args.tz,
                     "Zone of log stamps that print none (Slurm logs, sacctmgr, dmesg -T, syslog, journalctl short): UTC "
                     "(default), an offset such as +02:00, or a zone name such as America/Chicago")
      ->capture_default_str();
  replay->add_option("--host", replay_args.hosts,
                     "Host of log lines that print none (plain dmesg, dmesg -T): NODE, or FILE=NODE per file");
  replay->add_option("--seed", replay_args.seed, "Seed of the simulated run")->check(kSeedRange);
  add_common(replay, true);
  rc::runner::BlastArgs blast_args;
  auto* blast = app.add_subcommand("blast", "GPUs, trays and jobs that lose service or bandwidth if a component fails or is taken out");
  blast->add_option("component", blast_args.component, "Component or NVLink port, e.g. r01.switch1, r01.cdu, r01.tray03.gpu2.nvlink5")->required();
  auto* spof = app.add_subcommand("spof", "Components whose loss takes out a whole NVLink domain or more than N GPUs, or cuts more than N GPUs off a link, ranked");
  spof->add_option("--threshold", blast_args.threshold, "GPUs (N)")->check(CLI::Range(0, 10000000))->capture_default_str();
  for (auto* sub : {blast, spof}) sub->add_option("--plan", blast_args.plan, "Plan file (YAML)")->required();

  rc::runner::ServeArgs serve_args;
  auto* serve = app.add_subcommand("serve", "Read-only web UI and JSON API over report databases, with /metrics (docs/serve.md)");
  serve->add_option("--db", serve_args.dbs, "Report database(s) to serve (repeat or list several)")->expected(1, -1);
  serve->add_option("--listen", serve_args.listen, "HOST:PORT to listen on, PORT 0 to 65535 (loopback unless --allow-remote; port 0 picks one)")
      ->check(ListenAddress())
      ->capture_default_str();
  serve->add_flag("--allow-remote", serve_args.allow_remote, "Allow a --listen address that is not loopback (it is logged)");
  serve->add_option("--threads", serve_args.threads, "Threads answering requests")->check(CLI::Range(1, 64))->capture_default_str();
  add_common(serve, false);

  auto* list = app.add_subcommand("list", "List what rackchaos knows: models, injectors, detectors, policies, metrics, catalogues");
  list->add_option("what", list_what, "models | injectors | detectors | policies | metrics | catalogues")
      ->required()
      ->check(CLI::IsMember({"models", "injectors", "detectors", "policies", "metrics", "catalogues"}));

  rc::runner::CatalogueFitArgs fit_args;
  auto* catalogue = app.add_subcommand("catalogue", "Failure catalogues from a site's own history (docs/catalogue.md)");
  catalogue->require_subcommand(1);
  auto* fit = catalogue->add_subcommand(
      "fit", "A failure catalogue from incident logs (kernel Xids, NIC links, Slurm drains, sacctmgr events) over the "
             "cluster's component-days, each rate with its 95% interval");
  fit->add_option("logs", fit_args.logs, "Incident log files (kernel, Slurm, sacctmgr, sinfo -R; '-' = stdin)")->required();
  fit->add_option("--cluster", fit_args.cluster, "A plan or site inventory: the components exposed")->required();
  fit->add_option("--since", fit_args.since, "Start of the window, an ISO time such as 2026-01-01T00:00:00Z")->required();
  fit->add_option("--until", fit_args.until, "End of the window (exclusive), an ISO time")->required();
  fit->add_option("-o,--output", fit_args.output, "Write the catalogue here (default: YAML on stdout, summary on stderr)");
  fit->add_option("--name", fit_args.name, "The catalogue's name")->capture_default_str();
  fit->add_option("--tz", fit_args.tz, "Zone of stamps that print none (UTC, +02:00, Europe/Berlin)")->capture_default_str();
  fit->add_option("--year", fit_args.year, "Year of log stamps that print none (journalctl, syslog)")
      ->check(IntegerIn(1970, 9999));
  fit->add_option("--boot-time", fit_args.boot_time, "ISO time plain dmesg uptimes count from");

  std::string explain_name, init_model = "gb200-nvl72", init_dir = ".";
  int init_racks = 1;
  auto* explain = app.add_subcommand("explain", "Parameters, units, defaults, simulator and real-mode behaviour of one injector, detector, model, policy, metric or failure catalogue");
  explain->add_option("name", explain_name, "A name from `rackchaos list ...` or a catalogue file, e.g. link_down, gb200-nvl72, ttr, llama3")->required();
  auto* init = app.add_subcommand("init", "Write a commented plan (plan.yaml) and site inventory (site.yaml) for a rack model");
  init->add_option("--model", init_model, "Catalogue model (`rackchaos list models`)")->capture_default_str();
  init->add_option("--racks", init_racks, "Racks of the model, 1 to 1000")->check(IntegerIn(1, 1000))->capture_default_str();
  init->add_option("--dir", init_dir, "Directory to write into (created if absent)")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // One line, like every other refusal, so scripts can show it as it is.
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "rackchaos: %s (see %s --help)\n", what.c_str(), argv[0]);
    return ToInt(ExitCode::kBadInput);
  }
  SetupLogging(common);
  if (rc::HeapOnHugePages()) spdlog::info("heap on transparent huge pages (RACKCHAOS_HUGE_PAGES=0 turns them off)");
  // The report database and the fault ledger are opened by SQLite, which would wait on a FIFO and read a
  // device: a path that names one (or a directory or socket) is bad input, refused before any command runs.
  if (*run || *recover || *sweep || *qualify || *report || *compare || *history || *replay) {
    for (const auto& [path, what] : {std::pair{common.db, "report database"}, {common.ledger, "fault ledger"}}) {
      rc::Status special = rc::CheckNotSpecialFile(path, {what, 0});
      if (!special.ok()) return Fail(ExitCode::kBadInput, special.message());
    }
  }
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  if (*run && dry_run) return rc::runner::CmdDryRun(plan_path, {seed, healer}, inventory);
  if (*run) return CmdRun(common, plan_path, seed, healer, inventory, command_line);
  if (*validate) return CmdValidate(plan_path, seed);
  if (*recover) {
    recover_options.accept_new_host_keys = common.accept_new_host_keys;
    return rc::runner::CmdRecover(common.db, common.ledger, recover_options, common.quiet);
  }
  if (*serve) {
    if (serve_args.dbs.empty()) serve_args.dbs.push_back(common.db);
    serve_args.quiet = common.quiet;
    return rc::runner::CmdServe(serve_args);
  }
  if (*sweep) {
    sweep_args.metrics_listen = common.metrics_listen;
    sweep_args.allow_remote = common.allow_remote;
    sweep_args.db = common.db;
    sweep_args.output = sweep_output;
    sweep_args.command_line = command_line;
    sweep_args.quiet = common.quiet;
    sweep_args.progress = common.progress;
    return rc::runner::CmdSweep(sweep_args);
  }
  if (*qualify) {
    qualify_args.db = common.db;
    qualify_args.command_line = command_line;
    qualify_args.quiet = common.quiet;
    qualify_args.progress = common.progress;
    qualify_args.ledger = common.ledger;
    qualify_args.accept_new_host_keys = common.accept_new_host_keys;
    return rc::runner::CmdQualify(qualify_args);
  }
  if (*report_sweep) return rc::runner::CmdSweepReport(common.db, sweep_id, sweep_output);
  if (*merge) return rc::runner::CmdReportMerge(merge_inputs, merge_output);
  if (*compare) {
    compare_args.db = common.db;
    return rc::runner::CmdCompare(compare_args);
  }
  if (*history) return rc::runner::CmdHistory(common.db, rack_serial, history_lemon_runs);
  if (*report) {
    report_args.db = common.db;
    report_args.quiet = common.quiet;
    return rc::runner::CmdReportRender(report_args);
  }
  if (*list) return CmdList(list_what);
  if (*explain) return rc::runner::CmdExplain(explain_name);
  if (*init) return rc::runner::CmdInit(init_model, init_racks, init_dir);
  if (*replay) {
    replay_args.db = common.db;
    replay_args.command_line = command_line;
    replay_args.quiet = common.quiet;
    replay_args.verbose = common.verbose > 0;
    return rc::runner::CmdReplay(replay_args);
  }
  if (*fit) return rc::runner::CmdCatalogueFit(fit_args);
  if (*blast) return rc::runner::CmdBlast(blast_args);
  if (*spof) return rc::runner::CmdSpof(blast_args);
  return ToInt(ExitCode::kBadInput);
}
