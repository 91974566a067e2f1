// PrometheusSource against Debian's real prometheus (label `prometheus`): a python3 file server on
// loopback serves two dcgm-exporter-format scrape targets (tests/site/observe/samples/prometheus/
// tray07.prom and tray08.prom: tray07's GPU 2 hot, clocked down and thermally throttled, its GPU 3
// with NaN power and Xid 79), prometheus scrapes them every second, and the source's one query per
// period gives the mapped GPUs' observations. Then prometheus is killed (kUnavailable, no reading)
// and started again (the source recovers), and the targets vanish (their samples go stale).
// Every process is ended by its guard, also when a check fails (and by PR_SET_PDEATHSIG on a crash).
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster/catalogue.h"
#include "runner/site/prometheus_source.h"
#include "tests/site/loopback_services.h"
#include "tests/site/observe/samples.h"

namespace rr = rackchaos::runner;
namespace ob = rackchaos::observe;
namespace cl = rackchaos::cluster;
namespace rt = rackchaos::testing;
using ob::Problem;
using ob::testing::ErrorFor;
using ob::testing::SampleOf;

namespace {

namespace fs = std::filesystem;

// Asks until `good` holds for an answer or `limit` passes; the last answer.
template <typename Pred>
ob::Observed AskUntil(rr::ObservationSource& source, std::chrono::seconds limit, Pred good) {
  const auto end = std::chrono::steady_clock::now() + limit;
  ob::Observed last;
  while (std::chrono::steady_clock::now() < end) {
    source.Ask(rackchaos::Time{});
    for (int i = 0; i < 100; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      auto got = source.Take();
      if (got.empty()) continue;
      last = std::move(got.back());
      if (good(last)) return last;
      break;
    }
  }
  return last;
}

bool SiteError(const ob::Observed& o, const std::string& url, Problem p) {
  for (const ob::ObservationError& e : o.errors)
    if (e.host == url && e.problem == p && e.component == rackchaos::kNoComponent) return true;
  return false;
}

}  // namespace

TEST_CASE("PrometheusSource reads dcgm-exporter's metrics through the real prometheus, and survives it going away") {
  const std::string prometheus = rt::FindProgram("prometheus");
  REQUIRE_MESSAGE(!prometheus.empty(), "prometheus is not installed (apt-get install prometheus)");
  const fs::path work = fs::path(RACKCHAOS_BINARY_DIR) / "tests/site/prometheus-source";
  fs::remove_all(work);
  fs::create_directories(work / "targets");
  for (const char* f : {"tray07.prom", "tray08.prom"})
    fs::copy_file(fs::path(RACKCHAOS_SOURCE_DIR) / "tests/site/observe/samples/prometheus" / f, work / "targets" / f);
  const int target_port = rt::FreeLoopbackPort(), prom_port = rt::FreeLoopbackPort();
  const std::string log = (work / "services.log").string();
  std::ofstream(work / "prometheus.yml") << rt::PrometheusConfig(target_port, {"/tray07.prom", "/tray08.prom"}, "1s");
  rt::ChildProcess targets, prom;
  rt::StartFileServer(targets, (work / "targets").string(), target_port, log);
  auto start_prometheus = [&] {
    rt::StartPrometheus(prom, (work / "prometheus.yml").string(), (work / "data").string(), prom_port, log);
    REQUIRE_MESSAGE(rt::WaitForPort(prom_port, std::chrono::seconds(30)), (std::string("prometheus did not listen; see ") + log));
  };
  REQUIRE_MESSAGE(rt::WaitForPort(target_port, std::chrono::seconds(10)), (std::string("the file server did not listen; see ") + log));
  start_prometheus();

  const std::string url = "http://127.0.0.1:" + std::to_string(prom_port);
  // tray07's GPUs by PCI bus id (as dcgm-exporter's pci_bus_id label has them), tray08's by index.
  auto inv = rr::ParseInventory(
      "site: lab\nmodel: gb200-nvl72\ndefaults: {user: root, agent: true}\n"
      "hosts:\n  - {name: tray07, address: 127.0.0.1}\n  - {name: tray08, address: 127.0.0.2}\n"
      "trays:\n"
      "  r01.tray07: {host: tray07, gpus: ['00000008:01:00.0', '00000009:01:00.0', '00000018:01:00.0', "
      "'00000019:01:00.0']}\n"
      "  r01.tray08: {host: tray08, gpus: [0, 1, 2, 3]}\n"
      "prometheus: {url: '" + url + "', period: 1s, max_age: 5s, timeout: 2s, max_sm_clock: 1965}\n",
      "lab.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().message());
  auto model = cl::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cl::Topology::Build(*model, 1, 0);
  REQUIRE(topo.ok());
  auto source = rr::MakePrometheusSource(*inv, *topo);
  REQUIRE(source);
  auto gpu = [&](int tray, int g) { return *topo->Find("r01.tray0" + std::to_string(tray) + ".gpu" + std::to_string(g)); };
  auto all_read = [&](const ob::Observed& o) {
    for (int t : {7, 8})
      for (int g = 0; g < 4; ++g)
        if (SampleOf(o, gpu(t, g), cl::Metric::kGpuTemperature) < 0) return false;
    return true;
  };

  // 1. Both targets scraped: every GPU's telemetry, as the samples say.
  ob::Observed o = AskUntil(*source, std::chrono::seconds(60), all_read);
  REQUIRE_MESSAGE(all_read(o), ob::testing::AllErrors(o));
  CHECK(SampleOf(o, gpu(7, 2), cl::Metric::kGpuTemperature) == 88);
  CHECK(SampleOf(o, gpu(7, 2), cl::Metric::kGpuPower) == doctest::Approx(420.0));
  CHECK(SampleOf(o, gpu(7, 2), cl::Metric::kGpuClockFraction) == doctest::Approx(1110.0 / 1965));
  CHECK(SampleOf(o, gpu(7, 2), cl::Metric::kThermalThrottle) == 1);  // reasons 64: hw_thermal
  CHECK(SampleOf(o, gpu(7, 0), cl::Metric::kGpuTemperature) == 41);
  CHECK(SampleOf(o, gpu(7, 0), cl::Metric::kGpuClockFraction) == doctest::Approx(1.0));
  CHECK(SampleOf(o, gpu(7, 0), cl::Metric::kThermalThrottle) == 0);
  // NaN power is missing data: no power sample for GPU 3, an error naming it, its other values read.
  CHECK(SampleOf(o, gpu(7, 3), cl::Metric::kGpuPower) == -1);
  const ob::ObservationError* nan = ErrorFor(o, gpu(7, 3), Problem::kMissing);
  REQUIRE(nan);
  CHECK(nan->host == "tray07");
  CHECK(nan->what.find("NaN") != std::string::npos);
  CHECK(SampleOf(o, gpu(7, 3), cl::Metric::kGpuTemperature) == 40);
  bool xid79 = false;
  for (const ob::XidGaugeSample& x : o.xid_gauges) xid79 = xid79 || (x.gpu == gpu(7, 3) && x.code == 79);
  CHECK(xid79);
  CHECK(ob::testing::Count(o, Problem::kUnavailable) == 0);
  CHECK(ob::testing::Count(o, Problem::kStale) == 0);

  // 2. Prometheus killed: one kUnavailable error for the site, no reading at all.
  prom.Kill();
  ob::Observed down = AskUntil(*source, std::chrono::seconds(20), [&](const ob::Observed& d) {
    return SiteError(d, url, Problem::kUnavailable);
  });
  CHECK_MESSAGE(SiteError(down, url, Problem::kUnavailable), ob::testing::AllErrors(down));
  CHECK(down.observations.empty());
  CHECK(down.xid_gauges.empty());

  // 3. Back: the same source reads every GPU again (after the new server's first scrapes).
  start_prometheus();
  ob::Observed back = AskUntil(*source, std::chrono::seconds(60), all_read);
  CHECK_MESSAGE(all_read(back), ob::testing::AllErrors(back));
  CHECK(SampleOf(back, gpu(8, 1), cl::Metric::kGpuTemperature) >= 0);

  // 4. The targets vanish: their last samples age past max_age (5s) and are stale, not readings, and
  // `up` is 0 for the target whose instance is tray07's address. (The two jobs are scraped at different
  // offsets, so at one instant tray07's last samples may still be fresh while tray08's are stale.)
  targets.Kill();
  auto target_down = [](const ob::Observed& s) {
    for (const ob::ObservationError& e : s.errors)
      if (e.host == "tray07" && e.problem == Problem::kUnavailable && e.what.find("(up == 0)") != std::string::npos)
        return true;
    return false;
  };
  ob::Observed stale = AskUntil(*source, std::chrono::seconds(30), [&](const ob::Observed& s) {
    return ErrorFor(s, gpu(8, 1), Problem::kStale) != nullptr && target_down(s);
  });
  REQUIRE_MESSAGE(ErrorFor(stale, gpu(8, 1), Problem::kStale), ob::testing::AllErrors(stale));
  CHECK_MESSAGE(target_down(stale), ob::testing::AllErrors(stale));
  CHECK(ErrorFor(stale, gpu(8, 1), Problem::kStale)->what.find("old (limit 5.0 s)") != std::string::npos);
  for (int g = 0; g < 4; ++g) {
    CHECK(SampleOf(stale, gpu(8, g), cl::Metric::kGpuTemperature) == -1);
    CHECK(ErrorFor(stale, gpu(8, g), Problem::kStale));
  }
  source->Stop();
}
