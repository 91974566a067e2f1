#include "runner/serve/http_server.h"

#include <charconv>

#include "core/strings.h"

// GCC 12 pairs the operator new of Asio 1.74's coroutine frames (awaitable_frame_base, a recycling
// allocator) with the wrong operator delete when it inlines them and warns; the pair is Asio's own and
// matched. Only this file compiles awaitables.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

// clang-format off
#include "runner/ssh/asio.h"  // <utility> before any Asio header (Boost 1.74 with GCC 12)
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

namespace rackchaos::serve {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpResponse Plain(int status, std::string text) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(text) + "\n";
  return r;
}

}  // namespace

// Members are destroyed bottom up: the acceptor before the loop it belongs to, and the loops (whose
// destructors destroy the sessions still waiting) before the counters and handler those sessions use.
//
// Accepting has its own loop and thread. Handlers are synchronous and run on the serving threads, so
// every completion on `io` waits behind the handlers queued before it; an accept loop there completed one
// accept per turn of that queue, and a burst of new connections waited turns that grew with each one
// accepted: with 50 clients at once on a loaded machine the last ones' first requests waited 20-30 s
// (bench/README.md) while no handler took over 1 s. On its own thread a connection is accepted at once and
// its first request waits in the same FIFO queue as everyone else's.
struct HttpServer::Impl {
  HttpServerOptions options;
  HttpHandler handler;
  std::atomic<int> connections{0};
  std::mutex stop_mu;
  bool stopped = false;
  std::vector<std::thread> threads;
  asio::io_context io;
  asio::io_context accept_io{1};
  tcp::acceptor acceptor{accept_io};
  // Keeps `io` running while no session is open (the accept loop that used to keep it busy lives on
  // accept_io now).
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;

  // The handler, guarded: an exception becomes a 500 instead of ending the server.
  HttpResponse Call(const HttpRequest& request) {
    try {
      return handler(request);
    } catch (const std::exception& e) {
      return Plain(500, std::string("internal error: ") + e.what());
    }
  }

  // What to answer a parsed request with; long polls wait on a timer between the handler's calls.
  asio::awaitable<HttpResponse> Answer(const http::request<http::empty_body>& req, bool over_limit) {
    if (over_limit) co_return Plain(503, "too many connections; try again");
    if (req.method() != http::verb::get && req.method() != http::verb::head)
      co_return Plain(405, "only GET and HEAD: this server is read-only");
    if (req.target().size() > options.max_target_bytes)
      co_return Plain(414, "request target longer than " + std::to_string(options.max_target_bytes) + " bytes");
    HttpRequest request{std::string(req.method_string()), std::string(req.target()), 0};
    const auto start = std::chrono::steady_clock::now();
    HttpResponse r = Call(request);
    asio::steady_timer timer(io);
    while (r.poll_again && std::chrono::steady_clock::now() - start < r.poll_deadline) {
      timer.expires_after(*r.poll_again);
      boost::system::error_code ec;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
      ++request.attempt;
      r = Call(request);
    }
    co_return r;
  }

  asio::awaitable<void> Session(tcp::socket socket) {
    const bool over_limit = ++connections > options.max_connections;
    struct Leave {
      std::atomic<int>& n;
      ~Leave() { --n; }
    } leave{connections};
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::empty_body> parser;
      parser.header_limit(static_cast<uint32_t>(options.max_header_bytes));
      stream.expires_after(options.idle_timeout);
      boost::system::error_code ec;
      co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      HttpResponse r;
      bool keep_alive = false;
      if (ec == http::error::header_limit)
        r = Plain(431, "request headers too large");
      else if (ec == http::error::unexpected_body || ec == http::error::body_limit)
        r = Plain(413, "request bodies are not accepted");
      else if (ec == http::error::bad_target || ec == http::error::bad_method || ec == http::error::bad_version)
        r = Plain(400, "malformed request line");
      else if (ec)
        break;  // closed, timed out, reset, or too broken to answer
      else {
        const auto& req = parser.get();
        keep_alive = req.keep_alive() && !over_limit;
        r = co_await Answer(req, over_limit);
        if (req.method() == http::verb::head) r.body.clear();
      }
      http::response<http::string_body> res{static_cast<http::status>(r.status), 11};
      res.set(http::field::server, "rackchaos");
      res.set(http::field::content_type, r.content_type);
      res.set("X-Content-Type-Options", "nosniff");
      res.set("Referrer-Policy", "no-referrer");
      res.set("X-Frame-Options", "DENY");
      res.set(http::field::cache_control, "no-store");
      for (const auto& [name, value] : r.headers) res.set(name, value);
      res.body() = std::move(r.body);
      res.keep_alive(keep_alive);
      res.prepare_payload();
      stream.expires_after(options.idle_timeout);
      co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
      if (ec || !keep_alive) break;
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  asio::awaitable<void> Accept() {
    for (;;) {
      boost::system::error_code ec;
      // The socket is made on `io`, where its session runs; the accept itself completes on accept_io.
      auto socket = co_await acceptor.async_accept(io, asio::redirect_error(asio::use_awaitable, ec));
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      if (ec) continue;  // a connection that failed while being accepted (EMFILE, reset): the next one
      asio::co_spawn(io, Session(tcp::socket(std::move(socket))), asio::detached);
    }
  }
};

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options, HttpHandler handler) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->handler = std::move(handler);
  boost::system::error_code ec;
  const std::string host = options.host == "localhost" ? "127.0.0.1" : options.host;
  auto address = asio::ip::make_address(host, ec);
  if (ec) return Status::Invalid("listen address '" + options.host + "' is not an IP address or localhost");
  const tcp::endpoint endpoint(address, options.port);
  const std::string where = host + ":" + std::to_string(options.port);
  if (impl->acceptor.open(endpoint.protocol(), ec); ec)
    return Status::IoError("cannot listen on " + where + ": " + ec.message());
  impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (impl->acceptor.bind(endpoint, ec); ec) return Status::IoError("cannot listen on " + where + ": " + ec.message());
  if (impl->acceptor.listen(asio::socket_base::max_listen_connections, ec); ec)
    return Status::IoError("cannot listen on " + where + ": " + ec.message());
  asio::co_spawn(impl->accept_io, impl->Accept(), asio::detached);
  impl->threads.emplace_back([io = &impl->accept_io] { io->run(); });
  // Sessions come and go; the serving threads must not return while none is open.
  impl->work.emplace(impl->io.get_executor());
  for (int i = 0; i < std::max(1, options.threads); ++i) impl->threads.emplace_back([io = &impl->io] { io->run(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

uint16_t HttpServer::port() const {
  boost::system::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

std::string HttpServer::url() const {
  boost::system::error_code ec;
  const auto endpoint = impl_->acceptor.local_endpoint(ec);
  const std::string host = endpoint.address().to_string();
  return "http://" + (endpoint.address().is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(endpoint.port());
}

void HttpServer::Stop() {
  {
    std::lock_guard lock(impl_->stop_mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  asio::post(impl_->accept_io, [this] {
    boost::system::error_code ec;
    impl_->acceptor.close(ec);
  });
  impl_->accept_io.stop();
  impl_->io.stop();
  for (std::thread& t : impl_->threads)
    if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
}

void HttpServer::WaitForSignal() {
  asio::io_context waiter;
  asio::signal_set signals(waiter, SIGINT, SIGTERM);
  signals.async_wait([](const boost::system::error_code&, int) {});
  // The server's own loop keeps serving on its threads; this one only waits, checking for Stop().
  while (!waiter.stopped()) {
    waiter.run_for(std::chrono::milliseconds(200));
    std::lock_guard lock(impl_->stop_mu);
    if (impl_->stopped) return;
  }
  Stop();
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

Result<std::pair<std::string, uint16_t>> ParseListen(const std::string& text, const std::string& flag) {
  const std::string what = flag.empty() ? Quote(text) : flag + " " + Quote(text);
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size())
    return Status::Invalid(what + ": expected HOST:PORT, e.g. 127.0.0.1:8080");
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port_text = text.substr(colon + 1);
  unsigned long port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535)
    return Status::Invalid(what + ": the port " + Quote(port_text) +
                           " is out of range; expected an integer from 0 to 65535 (0 picks a free one)");
  boost::system::error_code bec;
  if (host != "localhost" && (asio::ip::make_address(host, bec), bec))
    return Status::Invalid(what + ": " + Quote(host) + " is not an IP address or localhost");
  return std::pair{host, static_cast<uint16_t>(port)};
}

}  // namespace rackchaos::serve
