// Where serve and the /metrics endpoints of `run` and `sweep` listen, and the rule that keeps them on
// loopback unless asked: a non-loopback --listen is refused without allow_remote (--allow-remote), and
// logged as a warning with it.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "reports/live_metrics.h"
#include "runner/serve/http_server.h"

namespace rackchaos::serve {

struct ListenSpec {
  std::string listen = "127.0.0.1:8080";  // HOST:PORT; port 0 picks a free one
  bool allow_remote = false;
  int threads = 4;
  std::string option = "--listen";  // how the user gave `listen`, for messages ("--metrics-listen")
};

// kInvalidArgument for a malformed address or a non-loopback one without allow_remote; the server's
// errors otherwise.
Result<std::unique_ptr<HttpServer>> Listen(const ListenSpec& spec, HttpHandler handler);

// A server with one thread that answers /metrics with `metrics` (which must outlive it), /healthz, and 404.
Result<std::unique_ptr<HttpServer>> StartMetricsEndpoint(const ListenSpec& spec, reports::LiveMetrics& metrics);

}  // namespace rackchaos::serve
