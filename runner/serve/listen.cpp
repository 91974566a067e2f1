#include "runner/serve/listen.h"

#include "core/log.h"

namespace rackchaos::serve {

Result<std::unique_ptr<HttpServer>> Listen(const ListenSpec& spec, HttpHandler handler) {
  RC_ASSIGN_OR_RETURN(auto host_port, ParseListen(spec.listen));
  const bool loopback = IsLoopbackHost(host_port.first);
  if (!loopback && !spec.allow_remote)
    return Status::Invalid(spec.option + " " + spec.listen +
                           " is not a loopback address; reports would be readable from the network. Add "
                           "--allow-remote to mean it, or listen on 127.0.0.1");
  HttpServerOptions options;
  options.host = host_port.first;
  options.port = host_port.second;
  options.threads = spec.threads;
  RC_ASSIGN_OR_RETURN(auto server, HttpServer::Start(options, std::move(handler)));
  if (!loopback)
    spdlog::warn(
        "listening on non-loopback address {} (--allow-remote): anyone who can reach it can read what it serves",
        server->url());
  return server;
}

Result<std::unique_ptr<HttpServer>> StartMetricsEndpoint(const ListenSpec& spec, reports::LiveMetrics& metrics) {
  ListenSpec one = spec;
  one.threads = 1;
  one.option = "--metrics-listen";
  return Listen(one, [&metrics](const HttpRequest& request) {
    HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    const std::string path = request.target.substr(0, request.target.find('?'));
    if (path == "/metrics") {
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = metrics.Render();
    } else if (path == "/healthz") {
      r.body = "ok\n";
    } else {
      r.status = 404;
      r.body = "only /metrics here\n";
    }
    return r;
  });
}

}  // namespace rackchaos::serve
