// A small HTTP/1.1 server on Boost.Beast for `rackchaos serve` and the `/metrics` endpoint of `run` and
// `sweep`: GET and HEAD only, one handler function, keep-alive, bounded in what it accepts.
//
// Limits (each answered with a 4xx and the connection closed, never a crash): a request line and headers
// over max_header_bytes -> 431; a target over max_target_bytes -> 414; a request with a body -> 413;
// another method -> 405; more than max_connections at once -> 503. A connection idle for idle_timeout is
// closed. Every response carries nosniff, no-referrer, frame-deny and the handler's headers.
//
// Long polls: a handler that has nothing new yet may answer with `poll_again` set; the server then waits
// that long on a timer (holding no thread) and calls the handler again with the same request, until it
// answers without it or until `poll_deadline` has passed (then the last answer is sent as it is).
//
// Threading: `threads` threads run the Asio event loop; the handler is called on any of them, at the same
// time for different connections, so it must be thread-safe. Requests wait for a thread in arrival order.
// One more thread only accepts connections, so a new client is taken in at once however busy the others
// are. Start() returns once the socket listens.
// The destructor stops and joins.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace rackchaos::serve {

struct HttpRequest {
  std::string method;  // "GET" or "HEAD"
  std::string target;  // as sent: "/db/0/runs?status=failed"
  int attempt = 0;     // 0, then 1, 2, ... for the calls of a long poll
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Long poll: ask again after this long (see the header comment), at most until poll_deadline after the
  // first call.
  std::optional<std::chrono::milliseconds> poll_again;
  std::chrono::milliseconds poll_deadline{0};
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // an address literal or "localhost"
  uint16_t port = 8080;            // 0: any free port (see port())
  int threads = 4;
  int max_connections = 256;
  size_t max_header_bytes = 8192;
  size_t max_target_bytes = 2048;
  std::chrono::seconds idle_timeout{30};
};

class HttpServer {
 public:
  // Binds and listens, then serves on its threads. kInvalidArgument for a host that is not an address;
  // kIoError when the address cannot be bound (in use, not local).
  static Result<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port it listens on (the one chosen when options.port was 0) and "http://HOST:PORT".
  uint16_t port() const;
  std::string url() const;

  // Stops accepting and serving, and joins the threads. Idempotent; thread-safe.
  void Stop();
  // Blocks until SIGINT or SIGTERM arrives (then stops) or Stop() is called from another thread.
  void WaitForSignal();

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A host is loopback when it is "localhost" or an address in 127.0.0.0/8 or ::1.
bool IsLoopbackHost(const std::string& host);

// "HOST:PORT" ("127.0.0.1:8080", "[::1]:9100", "localhost:0") -> host and port, the port 0 to 65535;
// kInvalidArgument naming `flag` (the option it came from; "" leaves it out), the text and what would be
// valid otherwise.
Result<std::pair<std::string, uint16_t>> ParseListen(const std::string& text, const std::string& flag = "--listen");

}  // namespace rackchaos::serve
