// serve's HTTP layer over a real loopback socket: limits answered with 4xx, keep-alive, long polls; and
// the request-target parser and the listen rules.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "reports/live_metrics.h"
#include "runner/serve/http_server.h"
#include "runner/serve/listen.h"
#include "runner/serve/url.h"

namespace rackchaos::serve {
namespace {

// A connection to 127.0.0.1:port (5 s receive timeout).
int Connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// Sends `request` to 127.0.0.1:port and returns everything the server sends until it closes (or 5 s).
std::string Exchange(uint16_t port, const std::string& request) {
  const int fd = Connect(port);
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early on an oversized request
    sent += static_cast<size_t>(n);
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

int Status(const std::string& response) { return response.size() > 12 ? std::stoi(response.substr(9, 3)) : 0; }

TEST_CASE("http: GET and HEAD only, bounded targets and headers, no bodies, keep-alive") {
  std::atomic<int> calls{0};
  HttpServerOptions options;
  options.port = 0;
  options.threads = 2;
  auto server = HttpServer::Start(options, [&](const HttpRequest& r) {
    ++calls;
    HttpResponse out;
    out.body = "hello " + r.target;
    return out;
  });
  REQUIRE(server.ok());
  const uint16_t port = (*server)->port();
  CHECK(port != 0);
  std::string r = Exchange(port, "GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  CHECK(Status(r) == 200);
  CHECK(r.find("hello /x") != std::string::npos);
  CHECK(r.find("X-Content-Type-Options: nosniff") != std::string::npos);
  CHECK(Status(Exchange(port, "HEAD /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")) == 200);
  CHECK(Status(Exchange(port, "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")) == 405);
  CHECK(Status(Exchange(port, "DELETE /db/0 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")) == 405);
  CHECK(Status(Exchange(port, "GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")) == 413);
  CHECK(Status(Exchange(port, "GET /" + std::string(3000, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n")) == 414);
  CHECK(Status(Exchange(port, "GET /x HTTP/1.1\r\nHost: a\r\nX-Big: " + std::string(20000, 'b') + "\r\n\r\n")) == 431);
  CHECK(Status(Exchange(port, "GARBAGE\r\n\r\n")) == 400);
  const int before = calls.load();
  // Two requests on one connection, both answered.
  r = Exchange(port, "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  CHECK(r.find("hello /a") != std::string::npos);
  CHECK(r.find("hello /b") != std::string::npos);
  CHECK(calls.load() == before + 2);
  (*server)->Stop();
}

// Reads one response (headers and a Content-Length body) from fd; its status, 0 on a short read.
int ReadResponse(int fd) {
  std::string in;
  char buf[4096];
  size_t need = std::string::npos;
  while (need == std::string::npos || in.size() < need) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return 0;
    in.append(buf, static_cast<size_t>(n));
    const size_t end = in.find("\r\n\r\n");
    const size_t cl = in.find("Content-Length: ");
    if (need == std::string::npos && end != std::string::npos && cl != std::string::npos && cl < end)
      need = end + 4 + std::stoul(in.substr(cl + 16));
  }
  return Status(in);
}

TEST_CASE("http: new connections are taken in at once while the serving thread is busy") {
  // One serving thread kept busy by keep-alive clients that ask again as soon as answered; then a burst
  // of new connections. Each is answered within a few turns of the busy clients (FIFO): counted in the
  // busy clients' requests answered meanwhile, not in time, so a loaded machine cannot make it flaky.
  // Accepting on the serving thread took one connection per turn, so the burst's last waited a turn for
  // every connection before it (here about kNew turns, kBusy requests each).
  constexpr int kBusy = 4, kNew = 20;
  std::atomic<int> busy_calls{0};
  HttpServerOptions options;
  options.port = 0;
  options.threads = 1;
  auto server = HttpServer::Start(options, [&](const HttpRequest& r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (r.target == "/busy") ++busy_calls;
    HttpResponse out;
    out.body = "ok";
    return out;
  });
  REQUIRE(server.ok());
  const uint16_t port = (*server)->port();
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int i = 0; i < kBusy; ++i)
    busy.emplace_back([&] {
      int fd = Connect(port);
      const std::string get = "GET /busy HTTP/1.1\r\nHost: a\r\n\r\n";
      while (!stop && send(fd, get.data(), get.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(get.size()) &&
             ReadResponse(fd) == 200) {
      }
      close(fd);
    });
  while (busy_calls < 10 * kBusy) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int before = busy_calls;
  std::vector<int> fds;
  const std::string get = "GET /new HTTP/1.1\r\nHost: a\r\n\r\n";
  for (int i = 0; i < kNew; ++i) {
    fds.push_back(Connect(port));
    CHECK(send(fds.back(), get.data(), get.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(get.size()));
  }
  for (int fd : fds) CHECK(ReadResponse(fd) == 200);
  const int waited = busy_calls - before;
  stop = true;
  for (auto& t : busy) t.join();
  for (int fd : fds) close(fd);
  INFO("busy requests answered while the burst of " << kNew << " new connections waited: " << waited);
  CHECK(waited <= 5 * kBusy);
  (*server)->Stop();
}

TEST_CASE("http: a long poll is asked again on a timer until it has an answer") {
  HttpServerOptions options;
  options.port = 0;
  auto server = HttpServer::Start(options, [](const HttpRequest& r) {
    HttpResponse out;
    out.body = "attempt " + std::to_string(r.attempt);
    if (r.attempt < 3) {
      out.poll_again = std::chrono::milliseconds(10);
      out.poll_deadline = std::chrono::seconds(5);
    }
    return out;
  });
  REQUIRE(server.ok());
  CHECK(Exchange((*server)->port(), "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").find("attempt 3") !=
        std::string::npos);
}

TEST_CASE("listen: loopback by default, another address only with allow_remote") {
  CHECK(IsLoopbackHost("127.0.0.1"));
  CHECK(IsLoopbackHost("127.3.4.5"));
  CHECK(IsLoopbackHost("::1"));
  CHECK(IsLoopbackHost("localhost"));
  CHECK_FALSE(IsLoopbackHost("0.0.0.0"));
  CHECK_FALSE(IsLoopbackHost("10.0.0.1"));
  CHECK(ParseListen("[::1]:9100")->first == "::1");
  CHECK(ParseListen("127.0.0.1:8080")->second == 8080);
  CHECK_FALSE(ParseListen("127.0.0.1").ok());
  CHECK_FALSE(ParseListen("127.0.0.1:99999").ok());
  CHECK_FALSE(ParseListen("example.com:80").ok());
  auto refused = Listen({"0.0.0.0:0", false, 1}, [](const HttpRequest&) { return HttpResponse{}; });
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("--allow-remote") != std::string::npos);
  CHECK(refused.status().message().rfind("--listen 0.0.0.0:0 ", 0) == 0);
  // /metrics of run and sweep: the refusal names the option the user gave.
  reports::LiveMetrics metrics;
  auto metrics_refused = StartMetricsEndpoint({"0.0.0.0:0", false, 1}, metrics);
  REQUIRE_FALSE(metrics_refused.ok());
  CHECK(metrics_refused.status().message().rfind("--metrics-listen 0.0.0.0:0 ", 0) == 0);
  auto allowed = Listen({"0.0.0.0:0", true, 1}, [](const HttpRequest&) { return HttpResponse{}; });
  CHECK(allowed.ok());
}

TEST_CASE("url: segments and parameters decoded, traversal and oversized parameters refused") {
  auto t = ParseTarget("/db/0/racks/SN%2001%3Cx%3E?plan=a+b&status=failed&x");
  REQUIRE(t.ok());
  REQUIRE(t->path.size() == 4);
  CHECK(t->path[3] == "SN 01<x>");
  CHECK(t->Param("plan") == "a b");
  CHECK(t->Param("x").empty());
  CHECK(t->Param("absent").empty());
  CHECK(ParseTarget("//db///0/")->path.size() == 2);
  for (const char* bad :
       {"/..", "/a/%2e%2E/b", "/a/%2fetc", "/a%5cb", "/a/%00", "/%", "/%4", "/a?x=%g1", "/a?x=1&x=2", "nope"})
    CHECK_MESSAGE(!ParseTarget(bad).ok(), bad);
  CHECK_FALSE(ParseTarget("/a?v=" + std::string(513, 'x')).ok());
  std::string many = "/a?";
  for (int i = 0; i < 40; ++i) many += "k" + std::to_string(i) + "=1&";
  CHECK_FALSE(ParseTarget(many).ok());
  CHECK(UrlEncode("a b/<c>~") == "a%20b%2F%3Cc%3E~");
  CHECK_FALSE(ParseTarget("/r/" + UrlEncode("x/../y")).ok());
}

}  // namespace
}  // namespace rackchaos::serve
