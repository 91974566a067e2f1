#include "runner/site/http_client.h"

#include "runner/ssh/asio.h"  // <utility> before any Asio header (Boost 1.74 with GCC 12)
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <exception>
#include <optional>
#include <thread>

namespace rackchaos::runner {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

bool IsRefusal(const error_code& ec) {
  return ec == asio::error::connection_refused || ec == asio::error::host_unreachable ||
         ec == asio::error::network_unreachable || ec == asio::error::host_not_found ||
         ec == asio::error::host_not_found_try_again || ec == asio::error::no_data;
}

// A reused connection the server closed while it was idle fails at once, with nothing read: send again.
bool IsStaleConnection(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::error::connection_aborted;
}

std::string Millis(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

const char* OutcomeName(HttpAnswer::Outcome outcome) {
  switch (outcome) {
    case HttpAnswer::Outcome::kAnswered: return "answered";
    case HttpAnswer::Outcome::kRefused: return "refused";
    case HttpAnswer::Outcome::kTimeout: return "timeout";
    case HttpAnswer::Outcome::kBroken: return "broken";
    case HttpAnswer::Outcome::kBusy: return "busy";
  }
  return "?";
}

// The loop and its thread; the connection lives on the loop's thread only.
struct HttpClient::Impl {
  HttpClientOptions options;
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{io.get_executor()};
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  std::optional<tcp::resolver> resolver;
  std::atomic<bool> busy{false}, stopped{false};
  std::thread thread;

  void Close() {
    if (stream) {
      error_code ignored;
      stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream->close();
    }
    stream.reset();
    buffer.clear();
  }

  // Resolves and connects within connect_timeout; "" when connected, else what failed (and `outcome`).
  asio::awaitable<std::string> Connect(HttpAnswer::Outcome& outcome) {
    Close();
    const auto& s = options.server;
    error_code ec;
    tcp::resolver::results_type endpoints;
    auto address = asio::ip::make_address(s.host, ec);
    if (!ec) {
      endpoints = tcp::resolver::results_type::create(tcp::endpoint(address, s.port), s.host, std::to_string(s.port));
    } else {
      resolver.emplace(io);
      asio::steady_timer limit(io);
      limit.expires_after(options.connect_timeout);
      bool timed_out = false;
      limit.async_wait([this, &timed_out](const error_code& e) {
        if (!e && resolver) {
          timed_out = true;
          resolver->cancel();
        }
      });
      ec = {};
      endpoints = co_await resolver->async_resolve(s.host, std::to_string(s.port), asio::redirect_error(asio::use_awaitable, ec));
      limit.cancel();
      resolver.reset();
      if (timed_out) {
        outcome = HttpAnswer::Outcome::kTimeout;
        co_return "resolving " + s.host + " took over " + Millis(options.connect_timeout);
      }
      if (ec) {
        outcome = HttpAnswer::Outcome::kRefused;
        co_return "cannot resolve " + s.host + ": " + ec.message();
      }
    }
    stream.emplace(io);
    stream->expires_after(options.connect_timeout);
    co_await stream->async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) co_return "";
    Close();
    if (ec == beast::error::timeout) {
      outcome = HttpAnswer::Outcome::kTimeout;
      co_return "no connection within " + Millis(options.connect_timeout);
    }
    outcome = IsRefusal(ec) ? HttpAnswer::Outcome::kRefused : HttpAnswer::Outcome::kBroken;
    co_return "cannot connect: " + ec.message();
  }

  // Never throws out of the loop's thread: whatever throws (an allocation, Beast on a malformed
  // answer) becomes a kBroken answer, and an exception from `done` is dropped.
  asio::awaitable<void> Exchange(std::string target, Callback done) {
    const auto start = std::chrono::steady_clock::now();
    HttpAnswer a;
    try {
      co_await Attempts(target, a);
    } catch (const std::exception& e) {
      Close();
      a = HttpAnswer{};
      a.error = std::string("client error: ") + e.what();
    }
    busy = false;
    if (stopped) co_return;  // dropped: Stop() promised no further callback
    a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    try {
      done(std::move(a));
    } catch (...) {
    }
  }

  asio::awaitable<void> Attempts(const std::string& target, HttpAnswer& a) {
    for (int attempt = 0; attempt < 2 && !stopped; ++attempt) {
      a = HttpAnswer{};
      a.reused = stream.has_value();
      if (!a.reused) {
        std::string failed = co_await Connect(a.outcome);
        if (stopped) break;
        if (!failed.empty()) {
          a.error = std::move(failed);
          break;
        }
      }
      http::request<http::empty_body> req{http::verb::get, target, 11};
      const auto& s = options.server;
      req.set(http::field::host, (s.host.find(':') != std::string::npos ? "[" + s.host + "]" : s.host) + ":" +
                                     std::to_string(s.port));
      req.set(http::field::user_agent, "rackchaos");
      req.set(http::field::accept, "application/json");
      req.keep_alive(true);
      error_code ec;
      stream->expires_after(options.timeout);
      co_await http::async_write(*stream, req, asio::redirect_error(asio::use_awaitable, ec));
      if (stopped) break;
      http::response_parser<http::string_body> parser;
      parser.body_limit(options.max_body);
      if (!ec) co_await http::async_read(*stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      if (stopped) break;
      if (ec) {
        const bool nothing_read = !parser.got_some();
        Close();
        if (a.reused && nothing_read && IsStaleConnection(ec)) continue;  // the server dropped an idle connection
        if (ec == beast::error::timeout) {
          a.outcome = HttpAnswer::Outcome::kTimeout;
          a.error = "no whole answer within " + Millis(options.timeout);
        } else if (ec == http::error::body_limit) {
          a.outcome = HttpAnswer::Outcome::kBroken;
          a.error = "answer larger than " + std::to_string(options.max_body) + " bytes";
        } else {
          a.outcome = IsRefusal(ec) ? HttpAnswer::Outcome::kRefused : HttpAnswer::Outcome::kBroken;
          a.error = std::string(nothing_read ? "connection closed before an answer: " : "answer broken off: ") + ec.message();
        }
        break;
      }
      auto res = parser.release();
      a.outcome = HttpAnswer::Outcome::kAnswered;
      a.code = res.result_int();
      a.body = std::move(res.body());
      if (!res.keep_alive()) Close();
      break;
    }
  }
};

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  impl_->options = options_;
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
}

HttpClient::~HttpClient() { Stop(); }

void HttpClient::Get(std::string target, Callback done) {
  if (impl_->stopped) return;
  if (impl_->busy.exchange(true)) {
    HttpAnswer a;
    a.outcome = HttpAnswer::Outcome::kBusy;
    a.error = "a request is still in flight";
    asio::post(impl_->io, [done = std::move(done), a = std::move(a)]() mutable { done(std::move(a)); });
    return;
  }
  asio::co_spawn(impl_->io, impl_->Exchange(options_.server.prefix + target, std::move(done)), asio::detached);
}

void HttpClient::Stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  // Closing the connection (and a resolve) on the loop's thread ends whatever is in flight; the loop
  // then runs out of work and its thread returns.
  asio::post(impl_->io, [impl = impl_.get()] {
    if (impl->resolver) impl->resolver->cancel();
    impl->Close();
    impl->work.reset();
  });
  if (impl_->thread.joinable() && impl_->thread.get_id() != std::this_thread::get_id()) impl_->thread.join();
}

}  // namespace rackchaos::runner
