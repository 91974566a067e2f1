#include "runner/cli/serve_cmd.h"

#include <cstdio>
#include <filesystem>

#include "core/exit_code.h"
#include "core/log.h"
#include "core/user_file.h"
#include "runner/cli/cli_exit.h"
#include "runner/serve/app.h"
#include "runner/serve/listen.h"

namespace rackchaos::runner {
int CmdServe(const ServeArgs& args) {
  // Stage 1: the databases; one that is absent or unreadable is served as a page that says so, so a
  // report being created later (or repaired) shows up without a restart.
  if (args.dbs.empty()) return Fail(ExitCode::kBadInput, "serve needs at least one --db");
  if (args.threads < 1 || args.threads > 64) return Fail(ExitCode::kBadInput, "--threads must be 1..64");
  std::error_code ec;
  for (const std::string& db : args.dbs) {
    // A directory, device, FIFO or socket will not become a report: refused now, not on every page.
    if (Status special = CheckNotSpecialFile(db, {"report database", 0}); !special.ok())
      return Fail(ExitCode::kBadInput, special.message());
    if (!std::filesystem::exists(db, ec)) spdlog::warn("report database {} does not exist (yet)", db);
  }
  // Stage 2: listen (loopback unless --allow-remote), then serve until a signal.
  reports::LiveMetrics metrics;
  serve::ServeApp app(args.dbs, metrics);
  auto server = serve::Listen({args.listen, args.allow_remote, args.threads},
                              [&app](const serve::HttpRequest& r) { return app.Handle(r); });
  if (!server.ok()) return Fail(CodeOf(server.status()), server.status().message());
  if (!args.quiet) {
    std::printf("rackchaos serve: %s/ (%zu database(s), read-only; Ctrl-C stops)\n", (*server)->url().c_str(),
                args.dbs.size());
    std::fflush(stdout);
  }
  (*server)->WaitForSignal();
  return ToInt(ExitCode::kPass);
}

std::unique_ptr<serve::HttpServer> StartMetricsListen(const std::string& listen, bool allow_remote,
                                                      reports::LiveMetrics& metrics, int& code) {
  auto server = serve::StartMetricsEndpoint({listen, allow_remote, 1}, metrics);
  if (!server.ok()) {
    code = Fail(CodeOf(server.status()), server.status().message());
    return nullptr;
  }
  std::fprintf(stderr, "rackchaos: metrics at %s/metrics\n", (*server)->url().c_str());
  std::fflush(stderr);
  return std::move(*server);
}

}  // namespace rackchaos::runner
