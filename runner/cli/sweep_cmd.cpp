#include "runner/cli/sweep_cmd.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "core/exit_code.h"
#include "runner/cli/cli_exit.h"
#include "runner/plan/plan_loader.h"
#include "runner/engine/progress.h"
#include "runner/engine/run.h"
#include "runner/spec/safety.h"
#include "runner/campaign/sweep.h"
#include "runner/campaign/sweep_render.h"
#include "runner/cli/serve_cmd.h"

namespace rackchaos::runner {
namespace {

// Writes `text` to `path` ("-" for stdout), whole or reported as failed.
Status WriteSweepFile(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    return std::cout ? Status::Ok() : Status::IoError("writing to stdout failed");
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return Status::IoError("cannot write '" + path + "'");
  return Status::Ok();
}

// The CSV and HTML files asked for; the first failure as an exit code (0 when all were written).
int WriteSweepOutputs(const SweepResult& result, const SweepOutputArgs& output) {
  if (!output.csv.empty())
    if (Status s = WriteSweepFile(output.csv, RenderSweepCsv(result, output.timing)); !s.ok())
      return Fail(ExitCode::kRuntimeError, "--csv: " + s.message());
  if (!output.html.empty())
    if (Status s = WriteSweepFile(output.html, RenderSweepHtml(result)); !s.ok())
      return Fail(ExitCode::kRuntimeError, "--html: " + s.message());
  return 0;
}

// kInvalidArgument when --csv and --html both ask for stdout (their texts would be interleaved).
Status CheckSweepOutputs(const SweepOutputArgs& output) {
  if (output.csv == "-" && output.html == "-")
    return Status::Invalid("--csv - and --html -: only one of them can go to stdout; name a file for the other");
  return Status::Ok();
}

}  // namespace

int CmdSweep(const SweepArgs& args) {
  // Stage 1: the command line and the plan; nothing runs on bad input.
  SweepOptions options;
  options.seeds = args.seeds;
  options.threads = args.threads;
  options.db_path = args.db;
  options.command_line = args.command_line;
  options.progress = ProgressWanted(args.progress, args.quiet);
  if (!args.shard.empty()) {
    auto shard = ParseShard(args.shard);
    if (!shard.ok()) return Fail(ExitCode::kBadInput, shard.status().message());
    std::tie(options.shard, options.shards) = *shard;
  }
  if (Status bounds = CheckSweepBounds(options); !bounds.ok()) return Fail(ExitCode::kBadInput, bounds.message());
  auto wanted = ParseSweepMetrics(args.output.metrics);
  if (!wanted.ok()) return Fail(ExitCode::kBadInput, wanted.status().message());
  if (Status outputs = CheckSweepOutputs(args.output); !outputs.ok())
    return Fail(ExitCode::kBadInput, outputs.message());
  options.metrics = *wanted;
  for (const std::string& g : args.grid) {
    auto axis = ParseGridAxis(g);
    if (!axis.ok()) return Fail(ExitCode::kBadInput, axis.status().message());
    options.grid.push_back(std::move(*axis));
  }
  auto plan = LoadPlan(args.plan);
  if (!plan.ok()) return Fail(ExitCode::kBadInput, plan.status().message());
  if (!plan->cluster.inventory.empty()) return Fail(ExitCode::kBadInput, args.plan + ": sweeps run simulated plans only");
  if (StopFileExists()) return Fail(ExitCode::kInterrupted, "stop file " + StopFilePath() + " exists; remove it to run");

  // Stage 2: the runs (watched through /metrics when asked). Stage 3: the aggregates as read back.
  reports::LiveMetrics metrics;
  std::unique_ptr<serve::HttpServer> endpoint;
  if (!args.metrics_listen.empty()) {
    int code = 0;
    endpoint = StartMetricsListen(args.metrics_listen, args.allow_remote, metrics, code);
    if (!endpoint) return code;
    options.live = &metrics;
  }
  InstallStopHandlers();
  auto result = RunSweep(*plan, options);
  if (!result.ok()) return Fail(CodeOf(result.status()), result.status().message());
  if (!result->threads_refused.empty())
    std::fprintf(stderr, "rackchaos: the system refused sweep thread %d of --threads %d (%s); the sweep ran on %d\n",
                 result->threads + 1, options.threads, result->threads_refused.c_str(), result->threads);
  // A stop is said even under --quiet, on stderr: the user needs to know what was kept.
  if (result->interrupted) {
    std::fprintf(stderr,
                 "rackchaos: sweep %s (shard %d/%d) interrupted: %lld run(s) stored and tagged in %s, %lld of them "
                 "cut short by the stop; the same command resumes it, `rackchaos report sweep %s --db %s` shows it\n",
                 result->sweep_id.c_str(), options.shard, options.shards, static_cast<long long>(result->stored),
                 args.db.c_str(), static_cast<long long>(result->stored_interrupted), result->sweep_id.c_str(),
                 args.db.c_str());
    return ToInt(ExitCode::kInterrupted);
  }
  if (int code = WriteSweepOutputs(*result, args.output); code != 0) return code;
  if (!args.quiet) {
    // When the CSV or the page goes to stdout, stdout is that file alone: no table, the last lines on stderr.
    const bool stdout_taken = args.output.csv == "-" || args.output.html == "-";
    std::ostream& text = stdout_taken ? std::cerr : std::cout;
    if (!stdout_taken && !result->stats.empty()) std::cout << RenderSweepTable(*result) << RenderSweepTiming(*result);
    if (result->skipped > 0)
      text << result->skipped << " run(s) of this sweep were already in " << args.db << " and were not run again\n";
    text << "Sweep " << result->sweep_id << " (shard " << options.shard << "/" << options.shards << "): "
              << result->stored << " run(s) stored in " << args.db << "; `rackchaos report sweep " << result->sweep_id
              << " --db " << args.db << "` shows it\n";
  }
  return ToInt(result->failed > 0 ? ExitCode::kExpectationFailed : ExitCode::kPass);
}

int CmdSweepReport(const std::string& db, const std::string& sweep_id, const SweepOutputArgs& output) {
  auto metrics = ParseSweepMetrics(output.metrics);
  if (!metrics.ok()) return Fail(ExitCode::kBadInput, metrics.status().message());
  if (Status outputs = CheckSweepOutputs(output); !outputs.ok()) return Fail(ExitCode::kBadInput, outputs.message());
  auto store = reports::SweepStore::OpenForReading(db);
  if (!store.ok()) return Fail(CodeOf(store.status()), store.status().message());
  auto result = ReadSweep(*store, sweep_id, *metrics);
  if (!result.ok()) return Fail(CodeOf(result.status()), result.status().message());
  if (int code = WriteSweepOutputs(*result, output); code != 0) return code;
  // The table goes to stdout unless a file asked for is stdout.
  if (output.csv != "-" && output.html != "-") {
    std::cout << RenderSweepTable(*result);
    if (output.timing) std::cout << RenderSweepTiming(*result);
  }
  return ToInt(ExitCode::kPass);
}

}  // namespace rackchaos::runner
