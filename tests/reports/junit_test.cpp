// JUnit XML: a case per expectation and per fault recovery, counts that add up, escaped text.
// Schema validation with xmllint runs as the CTest test reports:junit-xsd (see CMakeLists.txt).
#include <doctest/doctest.h>

#include <string>

#include "reports/render.h"
#include "reports/store.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
using rackchaos::reports::testing::TempDir;
namespace t = rackchaos::reports::testing;

using rackchaos::reports::testing::Count;
using rackchaos::reports::testing::Has;

TEST_CASE("reports.junit: one case per expectation and per fault, failures counted and explained") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  int64_t run = t::WriteSampleRun(*store);
  auto xml = Render(*store, run, Format::kJunit);
  REQUIRE(xml.ok());
  CHECK(xml->rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ", 0) == 0);
  CHECK(Count(*xml, "<testsuite ") == 1);
  CHECK(Count(*xml, "<testcase ") == 3);  // two gates, one fault
  CHECK(Count(*xml, "<failure ") == 2);   // the failed gate and the unrecovered fault
  CHECK(Has(*xml, "tests=\"3\" failures=\"2\" errors=\"0\" skipped=\"0\""));
  CHECK(Has(*xml, "timestamp=\"2025-01-02T03:04:05\""));
  CHECK(Has(*xml, "<testcase classname=\"rackchaos.tray-pull.expectations\" name=\"ttd.max &lt; 30s\" time=\"0.000\"/>"));
  CHECK(Has(*xml, "name=\"fault #1 tray_pull r01.tray03 recovered\""));
  CHECK(Has(*xml, "<failure message=\"fault #1 tray_pull on r01.tray03 injected at 1m never recovered "
                  "(no time to recover)\" type=\"NotRecovered\">"));
  CHECK(Has(*xml, "actual none (never happened)"));
}

TEST_CASE("reports.junit: a recovered fault passes with its TTR as the case time - an errored run adds an error") {
  TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  RunInfo info = t::SampleRunInfo();
  info.plan_name = "a<b & \"c\"";
  auto run = store->BeginRun(info);
  REQUIRE(run.ok());
  RunMetrics m = t::SampleMetrics();
  m.faults[0].time_to_recover = Duration::Millis(93250);
  REQUIRE(store->AddMetrics(*run, m).ok());
  REQUIRE(store->FinishRun(*run, "error", 3, "2025-01-02T03:14:05Z", "backend lost").ok());
  auto xml = Render(*store, *run, Format::kJunit);
  REQUIRE(xml.ok());
  CHECK(Has(*xml, "recovered\" time=\"93.250\"/>"));
  CHECK(Has(*xml, "tests=\"2\" failures=\"0\" errors=\"1\""));
  CHECK(Has(*xml, "<error message=\"run 1 ended as &#39;error&#39;: backend lost\" type=\"error\">"));
  CHECK(Has(*xml, "classname=\"rackchaos.a&lt;b &amp; &quot;c&quot;.run\""));
  CHECK_FALSE(Has(*xml, "a<b"));
}
