// HttpClient: a small asynchronous HTTP/1.1 GET client on Boost.Beast, for the observation sources that
// read a service over HTTP (the site's Prometheus, issue 21).
//
// Plain http only: https needs a TLS-terminating reverse proxy in front of the client or is not done.
// One server per client, one request at a time on one kept-alive connection that later requests reuse
// (a reused connection the server has closed meanwhile is reopened once, transparently). Connecting
// (resolving included) is bounded by `connect_timeout`, sending the request and reading the whole
// answer by `timeout`; an answer body over `max_body` bytes is refused. Every outcome reaches the
// callback as an HttpAnswer, never as an exception.
//
// Threading: the client runs its own Asio event loop on its own thread; Get() may be called from any
// thread, and `done` runs on the client's thread. Stop() (and the destructor) closes the connection,
// drops a request in flight without calling its `done`, and joins the thread; after it returns no
// callback runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "runner/site/http_url.h"

namespace rackchaos::runner {

struct HttpClientOptions {
  HttpUrl server;
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds timeout{10000};
  size_t max_body = size_t{256} << 20;
};

struct HttpAnswer {
  enum class Outcome {
    kAnswered,   // an HTTP response arrived (any status code)
    kRefused,    // could not connect: refused, unreachable, name not resolved
    kTimeout,    // no connection within connect_timeout, or no whole answer within timeout
    kBroken,     // the connection failed mid-way, or the answer was not HTTP or too large
    kBusy,       // a request was already in flight; nothing sent
  };
  Outcome outcome = Outcome::kBroken;
  int code = 0;            // kAnswered: the status code
  std::string body;        // kAnswered: the body
  std::string error;       // otherwise: what went wrong, for messages
  double seconds = 0;      // from Get() to the callback
  bool reused = false;     // the request went over a connection opened by an earlier one
};
const char* OutcomeName(HttpAnswer::Outcome outcome);  // "answered", "refused", ...

class HttpClient {
 public:
  using Callback = std::function<void(HttpAnswer)>;

  explicit HttpClient(HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // GET `target` ("/api/v1/query?query=...", the URL's prefix is put in front). Never blocks.
  void Get(std::string target, Callback done);
  void Stop();
  const HttpClientOptions& options() const { return options_; }

 private:
  struct Impl;
  HttpClientOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rackchaos::runner
