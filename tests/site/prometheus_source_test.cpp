// PrometheusSource and its HTTP client without Prometheus: the inventory's `prometheus:` section, the
// query it asks, the host maps, and every way the server can fail (refused, 5xx, too slow, not JSON),
// against rackchaos' own HTTP server on loopback playing Prometheus. The real Prometheus: the
// `prometheus`-labelled prometheus_source_real_test.cpp.
#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <chrono>
#include <mutex>
#include <thread>

#include "cluster/catalogue.h"
#include "runner/serve/http_server.h"
#include "runner/site/host_maps.h"
#include "runner/site/http_client.h"
#include "runner/site/prometheus_source.h"
#include "tests/site/loopback_services.h"
#include "tests/site/observe/samples.h"

namespace rr = rackchaos::runner;
namespace ob = rackchaos::observe;
namespace cl = rackchaos::cluster;
using ob::Problem;
using rackchaos::Duration;

namespace {

std::string Inventory(const std::string& prometheus) {
  return "site: lab\nmodel: gb200-nvl72\n"
         "defaults: {user: root, agent: true}\n"
         "hosts:\n  - {name: tray07, address: 127.0.0.1}\n  - {name: tray08, address: 127.0.0.2}\n"
         "trays:\n"
         "  r01.tray07: {host: tray07, gpus: ['00000008:01:00.0', '00000009:01:00.0', '00000018:01:00.0', "
         "'00000019:01:00.0'], nics: [ibp3s0, ibp4s0, ibp5s0, ibp6s0]}\n"
         "  r01.tray08: {host: tray08}\n" +
         prometheus;
}

cl::Topology Rack() {
  auto model = cl::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cl::Topology::Build(*model, 1, 0);
  REQUIRE(topo.ok());
  return std::move(*topo);
}

// Asks and waits (up to 10 s) for the answer.
ob::Observed AskOnce(rr::ObservationSource& source) {
  source.Ask(rackchaos::Time{});
  for (int i = 0; i < 1000; ++i) {
    auto got = source.Take();
    if (!got.empty()) {
      REQUIRE(got.size() == 1);
      return std::move(got[0]);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("no answer within 10 s");
  return {};
}

// rackchaos' HTTP server playing Prometheus: answers what `answer` says, counting requests.
struct FakePrometheus {
  std::mutex mu;
  std::function<rackchaos::serve::HttpResponse(const std::string&)> answer;
  std::vector<std::string> targets;
  std::unique_ptr<rackchaos::serve::HttpServer> server;

  FakePrometheus() {
    rackchaos::serve::HttpServerOptions o;
    o.port = 0;
    o.threads = 2;
    auto s = rackchaos::serve::HttpServer::Start(o, [this](const rackchaos::serve::HttpRequest& r) {
      std::function<rackchaos::serve::HttpResponse(const std::string&)> a;
      {
        std::lock_guard lock(mu);
        targets.push_back(r.target);
        a = answer;
      }
      return a(r.target);
    });
    REQUIRE(s.ok());
    server = std::move(*s);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server->port()); }
};

rackchaos::serve::HttpResponse Json(int status, std::string body) {
  rackchaos::serve::HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

}  // namespace

TEST_CASE("ParseHttpUrl: plain http only, with a port and a path prefix") {
  auto u = rr::ParseHttpUrl("http://prom.example:9090/prometheus/");
  REQUIRE(u.ok());
  CHECK(u->host == "prom.example");
  CHECK(u->port == 9090);
  CHECK(u->prefix == "/prometheus");
  auto plain = rr::ParseHttpUrl("http://10.0.0.5");
  REQUIRE(plain.ok());
  CHECK(plain->port == 80);
  CHECK(plain->prefix.empty());
  auto v6 = rr::ParseHttpUrl("http://[::1]:9090");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK(v6->ToString() == "http://[::1]:9090");
  auto tls = rr::ParseHttpUrl("https://prom.example:9090");
  REQUIRE_FALSE(tls.ok());
  CHECK(tls.status().message().find("reverse proxy") != std::string::npos);
  for (const char* bad : {"prom.example:9090", "http://:9090", "http://h:0", "http://h:70000", "http://h:x",
                          "http://u@h:9090", "http://h:9090/api?x=1", "http://h :9090"})
    CHECK_MESSAGE(!rr::ParseHttpUrl(bad).ok(), bad);
  CHECK(rr::UrlEncode("{__name__=~\"a|b\"}[60s]") == "%7B__name__%3D~%22a%7Cb%22%7D%5B60s%5D");
}

TEST_CASE("inventory: the prometheus section, its defaults, and what it refuses") {
  auto inv = rr::ParseInventory(Inventory("prometheus:\n  url: http://127.0.0.1:9090\n"), "site.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().message());
  REQUIRE(inv->prometheus);
  CHECK(inv->prometheus->period == Duration::Seconds(10));
  CHECK(inv->prometheus->max_age == Duration::Seconds(30));
  CHECK(inv->prometheus->provides == std::vector<std::string>{"gpu_telemetry", "xid"});
  auto none = rr::ParseInventory(Inventory(""), "site.yaml");
  REQUIRE(none.ok());
  CHECK_FALSE(none->prometheus);
  CHECK(rr::MakePrometheusSource(*none, Rack()) == nullptr);

  auto full = rr::ParseInventory(Inventory("prometheus: {url: 'http://127.0.0.1:9090/p', period: 2s, max_age: 5s, "
                                           "timeout: 1s, connect_timeout: 500ms, max_sm_clock: 1965, "
                                           "provides: [nic_links, gpu_telemetry]}\n"),
                                 "site.yaml");
  REQUIRE_MESSAGE(full.ok(), full.status().message());
  CHECK(full->prometheus->period == Duration::Seconds(2));
  CHECK(full->prometheus->max_age == Duration::Seconds(5));
  CHECK(full->prometheus->timeout == Duration::Seconds(1));
  CHECK(full->prometheus->connect_timeout == Duration::Millis(500));
  CHECK(full->prometheus->max_sm_clock_mhz == 1965);
  CHECK(full->prometheus->provides == std::vector<std::string>{"gpu_telemetry", "nic_links"});

  const std::pair<const char*, const char*> bad[] = {
      {"prometheus: {url: 'https://p:9090'}\n", "reverse proxy"},
      {"prometheus: {period: 5s}\n", "needs a url"},
      {"prometheus: {url: 'http://p:9090', provides: [gpu_temp]}\n", "expected one of: gpu_telemetry, xid, nic_links"},
      {"prometheus: {url: 'http://p:9090', provides: []}\n", "lists nothing"},
      {"prometheus: {url: 'http://p:9090', period: 10ms}\n", "out of range"},
      {"prometheus: {url: 'http://p:9090', scrape: 1s}\n", "scrape"},
  };
  for (const auto& [text, why] : bad) {
    auto r = rr::ParseInventory(Inventory(text), "site.yaml");
    REQUIRE_MESSAGE(!r.ok(), text);
    CHECK_MESSAGE(r.status().message().find(why) != std::string::npos, r.status().message());
    CHECK_MESSAGE(r.status().message().find("site.yaml:") == 0, r.status().message());
  }
}

TEST_CASE("inventory: each observation from one source, Prometheus or the others") {
  const std::pair<const char*, const char*> refused[] = {
      {"observe: {gpu: {}}\nprometheus: {url: 'http://p:9090'}\n",
       "site.yaml:11:13: prometheus provides gpu_telemetry (by default) and observe.gpu gives GPU telemetry too"},
      {"observe: {kernel_log: {}}\nprometheus: {url: 'http://p:9090', provides: [xid]}\n",
       "site.yaml:11:46: prometheus provides xid and observe.kernel_log gives Xid errors too"},
      {"healer: {observe_links: {apply: links, run_on: tray07}}\nprometheus: {url: 'http://p:9090', provides: "
       "[gpu_telemetry, nic_links]}\n",
       "prometheus provides nic_links and healer.observe_links gives NIC link state too"},
  };
  for (const auto& [text, why] : refused) {
    auto r = rr::ParseInventory(Inventory(text), "site.yaml");
    REQUIRE_MESSAGE(!r.ok(), text);
    CHECK_MESSAGE(r.status().message().find(why) != std::string::npos, r.status().message());
  }
  // Split between them: GPU telemetry over SSH, Xid from DCGM through Prometheus.
  auto split = rr::ParseInventory(Inventory("observe: {gpu: {}}\nprometheus: {url: 'http://p:9090', provides: [xid]}\n"),
                                  "site.yaml");
  CHECK_MESSAGE(split.ok(), split.status().message());
}

TEST_CASE("the query follows `provides`, and reads twice max_age back") {
  rr::PrometheusConfig c;
  c.max_age = Duration::Seconds(30);
  CHECK(rr::PrometheusQueryText(c) ==
        "{__name__=~\"DCGM_FI_DEV_GPU_TEMP|DCGM_FI_DEV_POWER_USAGE|DCGM_FI_DEV_SM_CLOCK|"
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS|DCGM_FI_DEV_CLOCKS_EVENT_REASONS|DCGM_FI_DEV_MAX_SM_CLOCK|"
        "DCGM_FI_DEV_XID_ERRORS|up\"}[60s]");
  c.provides = {"nic_links"};
  c.max_age = Duration::Millis(1500);
  CHECK(rr::PrometheusQueryText(c) == "{__name__=~\"node_network_carrier|up\"}[3s]");
}

// What the source's series are matched against (BuildHostMaps, runner/site/host_maps.h): the host's
// address as an alias (a scrape target's `instance`), GPUs by bus id or index, NICs by name.
TEST_CASE("the host maps the Prometheus source reads through: the address as an alias, GPUs by bus id or index") {
  auto inv = rr::ParseInventory(Inventory(""), "site.yaml");
  REQUIRE(inv.ok());
  cl::Topology topo = Rack();
  auto maps = rr::BuildHostMaps(*inv, topo);
  REQUIRE(maps.size() == 2);
  const ob::HostMap& t7 = maps[0].host == "tray07" ? maps[0] : maps[1];
  const ob::HostMap& t8 = maps[0].host == "tray07" ? maps[1] : maps[0];
  CHECK(t7.node == *topo.Find("r01.tray07"));
  CHECK(t7.aliases == std::vector<std::string>{"127.0.0.1"});
  REQUIRE(t7.gpus.size() == 4);
  CHECK(t7.gpus[2].pci == "0018:01:00");
  CHECK(t7.gpus[2].gpu == *topo.Find("r01.tray07.gpu2"));
  REQUIRE(t7.nics.size() == 4);
  CHECK(t7.nics[1].device == "ibp4s0");
  CHECK(t7.nics[1].nic == *topo.Find("r01.tray07.nic1"));
  REQUIRE(t8.gpus.size() == 4);  // no gpus list: by position
  CHECK(t8.gpus[3].index == 3);
  CHECK(t8.gpus[3].pci.empty());
  CHECK(t8.nics.empty());
}

TEST_CASE("HttpClient: keep-alive reuse, the prefix, and each failure as an outcome") {
  FakePrometheus fake;
  fake.answer = [](const std::string&) { return Json(200, "{}"); };
  auto url = rr::ParseHttpUrl(fake.url() + "/prom");
  REQUIRE(url.ok());
  rr::HttpClientOptions o;
  o.server = *url;
  o.timeout = std::chrono::milliseconds(500);
  rr::HttpClient client(o);
  auto get = [&](const std::string& target) {
    std::promise<rr::HttpAnswer> p;
    auto f = p.get_future();
    client.Get(target, [&p](rr::HttpAnswer a) { p.set_value(std::move(a)); });
    REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    return f.get();
  };
  rr::HttpAnswer first = get("/api/v1/query?query=up");
  CHECK(first.outcome == rr::HttpAnswer::Outcome::kAnswered);
  CHECK(first.code == 200);
  CHECK(first.body == "{}");
  CHECK_FALSE(first.reused);
  rr::HttpAnswer second = get("/api/v1/query?query=up");
  CHECK(second.outcome == rr::HttpAnswer::Outcome::kAnswered);
  CHECK(second.reused);
  {
    std::lock_guard lock(fake.mu);
    CHECK(fake.targets.back() == "/prom/api/v1/query?query=up");
  }
  // Too slow: the read timeout ends it; the next request gets a new connection and its answer.
  fake.answer = [](const std::string& t) {
    if (t.find("slow") != std::string::npos) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return Json(200, "{}");
  };
  rr::HttpAnswer slow = get("/slow");
  CHECK(slow.outcome == rr::HttpAnswer::Outcome::kTimeout);
  CHECK(slow.error.find("500 ms") != std::string::npos);
  rr::HttpAnswer after = get("/fast");
  CHECK(after.outcome == rr::HttpAnswer::Outcome::kAnswered);
  CHECK_FALSE(after.reused);
  // The server stops without closing the kept connection (its loop just ends): no answer in time.
  fake.server->Stop();
  rr::HttpAnswer hung = get("/api/v1/query?query=up");
  CHECK(hung.outcome == rr::HttpAnswer::Outcome::kTimeout);
  // Nobody listens: refused.
  rr::HttpClientOptions closed;
  closed.server.host = "127.0.0.1";
  closed.server.port = static_cast<uint16_t>(rackchaos::testing::FreeLoopbackPort());
  rr::HttpClient nobody(closed);
  std::promise<rr::HttpAnswer> p;
  nobody.Get("/", [&p](rr::HttpAnswer a) { p.set_value(std::move(a)); });
  auto f = p.get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  rr::HttpAnswer gone = f.get();
  CHECK(gone.outcome == rr::HttpAnswer::Outcome::kRefused);
  CHECK(gone.error.find("cannot connect") == 0);
}

TEST_CASE("PrometheusSource: down, 5xx, too slow, not JSON and status error are observation errors") {
  FakePrometheus fake;
  std::string body = ob::testing::Sample("prometheus/dcgm_vector.json");
  fake.answer = [&body](const std::string&) { return Json(200, body); };
  auto inv = rr::ParseInventory(
      Inventory("prometheus: {url: '" + fake.url() + "', timeout: 300ms, max_age: 1h, provides: [gpu_telemetry, xid, nic_links]}\n"),
      "site.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().message());
  cl::Topology topo = Rack();
  auto source = rr::MakePrometheusSource(*inv, topo);
  REQUIRE(source);
  CHECK(source->Name() == "prometheus " + fake.url());
  CHECK(source->Period() == Duration::Seconds(10));

  // A real answer of Prometheus 2.42 over the tray07/tray08 samples, recorded hours before this test
  // runs: asked now, every sample is older than max_age (1h), so each GPU value is stale, mapped to its
  // GPU through the inventory, and none is a reading.
  ob::Observed o = AskOnce(*source);
  {
    std::lock_guard lock(fake.mu);
    REQUIRE(!fake.targets.empty());
    CHECK(fake.targets.back().find("/api/v1/query?query=%7B__name__%3D~%22DCGM_FI_DEV_GPU_TEMP%7C") == 0);
    CHECK(fake.targets.back().find("&time=") != std::string::npos);
  }
  CHECK(ob::testing::Count(o, Problem::kUnmapped) == 0);
  const auto gpu2 = *topo.Find("r01.tray07.gpu2");
  CHECK(ob::testing::SampleOf(o, gpu2, cl::Metric::kGpuTemperature) == -1);
  REQUIRE(ob::testing::ErrorFor(o, gpu2, Problem::kStale));
  CHECK(ob::testing::ErrorFor(o, gpu2, Problem::kStale)->host == "tray07");
  // nic_links: the samples have no node_network_carrier, so every mapped NIC is missing, by name.
  const auto nic1 = *topo.Find("r01.tray07.nic1");
  const ob::ObservationError* nic = ob::testing::ErrorFor(o, nic1, Problem::kMissing);
  REQUIRE(nic);
  CHECK(nic->what == "node_network_carrier of ibp4s0: no series");

  const std::string url = fake.url();  // 0 as the port once stopped
  auto site_error = [&](const ob::Observed& got) -> const ob::ObservationError* {
    CHECK(got.observations.empty());
    REQUIRE(got.errors.size() == 1);
    CHECK(got.errors[0].host == url);
    CHECK(got.errors[0].source == ob::Source::kPrometheus);
    return &got.errors[0];
  };
  fake.answer = [](const std::string&) { return Json(503, "{\"status\":\"error\",\"error\":\"query queue full\"}"); };
  ob::Observed busy = AskOnce(*source);
  CHECK(site_error(busy)->problem == Problem::kUnavailable);
  CHECK(busy.errors[0].what.find("HTTP 503") != std::string::npos);

  fake.answer = [](const std::string&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    return Json(200, "{}");
  };
  ob::Observed slow = AskOnce(*source);
  CHECK(site_error(slow)->problem == Problem::kUnavailable);
  CHECK(slow.errors[0].what.find("timeout") == 0);

  fake.answer = [](const std::string&) { return Json(200, "<html>a login page</html>"); };
  ob::Observed html = AskOnce(*source);
  CHECK(site_error(html)->problem == Problem::kUnreadable);

  fake.answer = [](const std::string&) {
    return Json(400, "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}");
  };
  ob::Observed bad = AskOnce(*source);
  CHECK(site_error(bad)->problem == Problem::kToolError);
  CHECK(bad.errors[0].what == "bad_data: parse error");

  fake.answer = [](const std::string&) { return Json(404, "not found"); };
  ob::Observed missing = AskOnce(*source);
  CHECK(site_error(missing)->problem == Problem::kToolError);

  fake.server->Stop();  // its kept connection stays open, unanswered
  ob::Observed hung = AskOnce(*source);
  CHECK(site_error(hung)->problem == Problem::kUnavailable);
  CHECK(hung.errors[0].what.find("timeout") == 0);
  source->Stop();
  // Nobody listening at the URL: refused, the same kind of error.
  const std::string closed = "http://127.0.0.1:" + std::to_string(rackchaos::testing::FreeLoopbackPort());
  auto closed_inv = rr::ParseInventory(Inventory("prometheus: {url: '" + closed + "'}\n"), "site.yaml");
  REQUIRE(closed_inv.ok());
  auto refused_source = rr::MakePrometheusSource(*closed_inv, topo);
  ob::Observed down = AskOnce(*refused_source);
  REQUIRE(down.errors.size() == 1);
  CHECK(down.errors[0].problem == Problem::kUnavailable);
  CHECK(down.errors[0].host == closed);
  CHECK(down.errors[0].what.find("refused: cannot connect") == 0);
  source->Ask(rackchaos::Time{});  // stopped: no poll, nothing arrives
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(source->Take().empty());
}

TEST_CASE("PrometheusSource: one poll in flight at a time; Stop drops it") {
  FakePrometheus fake;
  std::atomic<int> asked{0};
  fake.answer = [&asked](const std::string&) {
    ++asked;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return Json(200, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}");
  };
  auto inv = rr::ParseInventory(Inventory("prometheus: {url: '" + fake.url() + "', timeout: 5s}\n"), "site.yaml");
  REQUIRE(inv.ok());
  auto source = rr::MakePrometheusSource(*inv, Rack());
  for (int i = 0; i < 5; ++i) source->Ask(rackchaos::Time{});
  ob::Observed o = AskOnce(*source);  // this Ask, too, finds the first still in flight
  CHECK(asked == 1);
  // An empty answer: every GPU of both trays is missing, none read as healthy.
  CHECK(o.observations.empty());
  CHECK(ob::testing::Count(o, Problem::kMissing) >= 8 * 4);
  source->Ask(rackchaos::Time{});
  source->Stop();  // the answer in flight is dropped
  CHECK(source->Take().empty());
}
