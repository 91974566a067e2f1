// Instant-query answers of a real Prometheus 2.42 (Debian's) scraping dcgm-exporter-format targets
// (samples/prometheus: the exposition files, prom.yml and the answers), and the Xid gauge.
#include <doctest/doctest.h>

#include "runner/site/observe/prometheus_query.h"
#include "runner/site/observe/xid_gauge.h"
#include "tests/site/observe/samples.h"

namespace ob = rackchaos::observe;
using ob::Problem;
using ob::testing::Count;
using ob::testing::ErrorFor;
using ob::testing::Sample;
using ob::testing::SampleOf;
using rackchaos::cluster::Metric;

namespace {

// tray07 and tray08 as the samples' targets export them: 4 GB200 GPUs each, buses 0008/0009/0018/0019.
std::vector<ob::HostMap> Site() {
  std::vector<ob::HostMap> hosts;
  const char* pcis[] = {"0008:01:00", "0009:01:00", "0018:01:00", "0019:01:00"};
  for (int t = 0; t < 2; ++t) {
    ob::HostMap h;
    h.host = t == 0 ? "tray07" : "tray08";
    h.aliases = {t == 0 ? "127.0.0.1:19400" : "127.0.0.1:19401"};
    h.node = t == 0 ? 7 : 8;
    for (int g = 0; g < 4; ++g) {
      ob::GpuAddress a;
      a.gpu = static_cast<rackchaos::ComponentId>(100 * (t + 1) + g);
      a.index = g;
      a.pci = pcis[g];
      a.max_sm_mhz = 1965;
      h.gpus.push_back(a);
    }
    hosts.push_back(h);
  }
  return hosts;
}

ob::PromQuery Query(double now) {
  ob::PromQuery q;
  q.server = "prom1";
  q.now_s = now;
  q.max_age_s = 5;
  return q;
}

}  // namespace

TEST_CASE("prometheus: a vector answer over dcgm-exporter's metrics, NaN missing") {
  ob::Observed o = ob::ParsePrometheusQuery(Sample("prometheus/dcgm_vector.json"), Site(), Query(1796158705));
  CHECK(SampleOf(o, 100, Metric::kGpuTemperature) == 41);
  CHECK(SampleOf(o, 100, Metric::kGpuPower) == 612.5);
  CHECK(SampleOf(o, 102, Metric::kThermalThrottle) == 1);  // 64: HW thermal slowdown
  CHECK(SampleOf(o, 102, Metric::kGpuClockFraction) == doctest::Approx(1110.0 / 1965));
  CHECK(SampleOf(o, 200, Metric::kThermalThrottle) == 0);  // 4: SW power cap only
  CHECK(SampleOf(o, 200, Metric::kPowerCapped) == 1);
  CHECK(SampleOf(o, 102, Metric::kPowerCapped) == 0);
  CHECK(SampleOf(o, 200, Metric::kGpuClockFraction) == doctest::Approx(1200.0 / 1965));
  // GPU 3 of tray07 exports NaN power: missing, not zero.
  CHECK(SampleOf(o, 103, Metric::kGpuPower) == -1);
  REQUIRE(ErrorFor(o, 103, Problem::kMissing));
  CHECK(ErrorFor(o, 103, Problem::kMissing)->ToString() ==
        "tray07: prometheus: missing: GPU 3 (0019:01:00) DCGM_FI_DEV_POWER_USAGE: NaN");
  // The third target (127.0.0.1:19402) is down: same address as tray07's exporter, other port. An
  // exporter of the host that does not answer is reported, whatever its port.
  CHECK(ErrorFor(o, 7, Problem::kUnavailable));
  CHECK(o.errors.size() == 2);
  CHECK(o.xid_gauges.size() == 8);
}

TEST_CASE("prometheus: a target that went down leaves partial data, reported per GPU") {
  ob::Observed o = ob::ParsePrometheusQuery(Sample("prometheus/dcgm_vector_target_down.json"), Site(), Query(1796158716));
  REQUIRE(ErrorFor(o, 8, Problem::kUnavailable));
  CHECK(ErrorFor(o, 8, Problem::kUnavailable)->ToString() ==
        "tray08: prometheus: unavailable: scrape target 127.0.0.1:19401 is down (up == 0)");
  for (rackchaos::ComponentId g = 200; g < 204; ++g) {
    CHECK(SampleOf(o, g, Metric::kGpuTemperature) == -1);
    REQUIRE(ErrorFor(o, g, Problem::kMissing));
  }
  CHECK(ErrorFor(o, 200, Problem::kMissing)->what == "GPU 0 (0008:01:00) DCGM_FI_DEV_GPU_TEMP: no series");
  CHECK(SampleOf(o, 100, Metric::kGpuTemperature) == 41);  // tray07 still answers
}

TEST_CASE("prometheus: a range query shows the stale samples of the target that stopped") {
  ob::Observed o = ob::ParsePrometheusQuery(Sample("prometheus/dcgm_matrix_10s_stale.json"), Site(), Query(1796158716));
  CHECK(SampleOf(o, 100, Metric::kGpuTemperature) == 41);  // 0.6 s old
  REQUIRE(ErrorFor(o, 200, Problem::kStale));
  CHECK(ErrorFor(o, 200, Problem::kStale)->what.find("DCGM_FI_DEV_GPU_TEMP: newest sample is 6.1 s old (limit 5.0 s)") !=
        std::string::npos);
  CHECK(SampleOf(o, 200, Metric::kGpuTemperature) == -1);
  // With a wider limit the same samples are fresh enough.
  ob::PromQuery wide = Query(1796158716);
  wide.max_age_s = 30;
  CHECK(SampleOf(ob::ParsePrometheusQuery(Sample("prometheus/dcgm_matrix_10s_stale.json"), Site(), wide), 200,
                 Metric::kGpuTemperature) == 39);
}

TEST_CASE("prometheus: status error, broken answers, unknown hosts") {
  ob::Observed e = ob::ParsePrometheusQuery(Sample("prometheus/error_bad_data.json"), Site(), Query(1796158716));
  REQUIRE(e.errors.size() == 1);
  CHECK(e.errors[0].ToString() ==
        "prom1: prometheus: tool_error: bad_data: invalid parameter \"query\": 1:22: parse error: unexpected end of input "
        "inside braces");
  CHECK(Count(ob::ParsePrometheusQuery("<html>502 Bad Gateway</html>", Site(), Query(0)), Problem::kUnreadable) == 1);
  CHECK(Count(ob::ParsePrometheusQuery(R"({"status":"success","data":{"resultType":"scalar","result":[1,"1"]}})", Site(), Query(0)),
              Problem::kUnreadable) == 1);
  ob::Observed u = ob::ParsePrometheusQuery(
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","Hostname":"tray99","gpu":"0"},"value":[10,"40"]},{"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","hostname":"tray07","gpu":"0","pci_bus_id":"00000008:01:00.0"},"value":[10,"+Inf"]}]}})",
      Site(), Query(10));
  CHECK(Count(u, Problem::kUnmapped) == 1);
  CHECK(ErrorFor(u, 100, Problem::kUnreadable));  // +Inf is no temperature
}

TEST_CASE("prometheus: a GPU the inventory names by index takes its PCI address from the exporter's label") {
  std::vector<ob::HostMap> site = Site();
  for (ob::GpuAddress& g : site[0].gpus) g.pci = "";  // tray07: `gpus: [0, 1, 2, 3]`
  ob::PromQuery q = Query(10);
  q.expect.xid = true;
  const std::string answer =
      R"({"status":"success","data":{"resultType":"vector","result":[)"
      R"({"metric":{"__name__":"DCGM_FI_DEV_XID_ERRORS","Hostname":"tray07","gpu":"1","pci_bus_id":"00000009:01:00.0"},"value":[10,"48"]},)"
      R"({"metric":{"__name__":"DCGM_FI_DEV_XID_ERRORS","Hostname":"tray07","gpu":"2"},"value":[10,"0"]}]}})";
  ob::Observed o = ob::ParsePrometheusQuery(answer, site, q);
  const ob::XidGaugeSample* one = nullptr;
  const ob::XidGaugeSample* two = nullptr;
  for (const ob::XidGaugeSample& s : o.xid_gauges) {
    if (s.gpu == 101) one = &s;
    if (s.gpu == 102) two = &s;
  }
  REQUIRE(one);
  CHECK(one->pci == "0009:01:00");
  CHECK(one->code == 48);
  REQUIRE(two);
  CHECK(two->pci.empty());  // no label, no address: its Xid would be an observation error (below)
}

TEST_CASE("xid gauge: a change to a non-zero code becomes one driver-format line") {
  ob::XidGauge gauge;
  ob::XidGaugeSample s{"tray07", ob::Source::kPrometheus, 103, 7, "0019:01:00", 0};
  CHECK(gauge.Update({s}).observations.empty());  // baseline
  s.code = 79;
  ob::Observed o = gauge.Update({s});
  REQUIRE(o.observations.size() == 1);
  const auto& line = std::get<rackchaos::cluster::KernelLogLine>(o.observations[0]);
  CHECK(line.node == 7);
  CHECK(line.line.rfind("NVRM: Xid (PCI:0019:01:00): 79,", 0) == 0);
  CHECK(gauge.Update({s}).observations.empty());  // the gauge still says 79: not a new Xid
  s.pci = "";
  s.code = 48;
  CHECK(Count(gauge.Update({s}), Problem::kMissing) == 1);
  // A baseline that already holds a code is history.
  ob::XidGauge other;
  CHECK(other.Update({s}).observations.empty());
}
