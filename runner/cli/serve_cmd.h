// `rackchaos serve` and the /metrics endpoint that `run` and `sweep` start with --metrics-listen.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "reports/live_metrics.h"
#include "runner/serve/http_server.h"

namespace rackchaos::runner {

struct ServeArgs {
  std::vector<std::string> dbs;
  std::string listen = "127.0.0.1:8080";
  bool allow_remote = false;
  int threads = 4;
  bool quiet = false;
};

// Serves until SIGINT or SIGTERM: prints "rackchaos serve: URL" on stdout once listening. 0 after a
// signal; 2 for a bad --listen (malformed, or not loopback without --allow-remote) or no database; 3
// when the address cannot be bound.
int CmdServe(const ServeArgs& args);

// The --metrics-listen endpoint of run and sweep, serving `metrics` until the returned server is
// destroyed; prints "rackchaos: metrics at URL/metrics" on stderr. nullptr after printing the error (exit
// code in `code`) when it cannot start.
std::unique_ptr<serve::HttpServer> StartMetricsListen(const std::string& listen, bool allow_remote,
                                                      reports::LiveMetrics& metrics, int& code);

}  // namespace rackchaos::runner
