// Redfish bodies (DMTF's published mockups and examples, a bmcweb 500 body) and the JSON reader.
#include <doctest/doctest.h>

#include "runner/site/observe/json.h"
#include "runner/site/observe/redfish_sensors.h"
#include "tests/site/observe/samples.h"

namespace ob = rackchaos::observe;
using ob::Problem;
using ob::testing::Count;
using ob::testing::ErrorFor;
using ob::testing::Sample;
using ob::testing::SampleOf;
using rackchaos::cluster::Metric;

TEST_CASE("redfish: sensors, leak detectors and PSUs from DMTF mockups") {
  std::vector<ob::RedfishPoint> temp{{"/redfish/v1/Chassis/1U/Sensors/CPU1Temp", 200, Metric::kSwitchTemperature}};
  ob::Observed t = ob::ParseRedfish(200, Sample("redfish/sensor_cpu1_temp.json"), "bmc07", temp);
  CHECK(t.errors.empty());
  CHECK(SampleOf(t, 200, Metric::kSwitchTemperature) == 37);

  std::vector<ob::RedfishPoint> flow{{"/redfish/v1/Chassis/CDU/Sensors/SecondaryFlow", 300, Metric::kCoolantFlow}};
  CHECK(SampleOf(ob::ParseRedfish(200, Sample("redfish/sensor_cdu_secondary_flow.json"), "cdu1", flow), 300,
                 Metric::kCoolantFlow) == doctest::Approx(79.6));
  // A temperature read as flow: the units say otherwise.
  ob::Observed wrong = ob::ParseRedfish(200, Sample("redfish/sensor_cpu1_temp.json"), "bmc07",
                                        {{"/redfish/v1/Chassis/1U/Sensors/CPU1Temp", 300, Metric::kCoolantFlow}});
  REQUIRE(ErrorFor(wrong, 300, Problem::kUnreadable));
  CHECK(ErrorFor(wrong, 300, Problem::kUnreadable)->ToString() ==
        "bmc07: redfish: unreadable: /redfish/v1/Chassis/1U/Sensors/CPU1Temp: ReadingUnits \"Cel\", expected \"L/min\"");

  // LeakDetection's excerpts name their detectors by DataSourceUri; the detector itself by @odata.id.
  std::vector<ob::RedfishPoint> leaks{{"/redfish/v1/Chassis/CDU/LeakDetectors/Moisture", 400, Metric::kLeak},
                                      {"/redfish/v1/Chassis/CDU/LeakDetectors/Overflow", 401, Metric::kLeak},
                                      {"/redfish/v1/Chassis/CDU/LeakDetectors/Rope", 402, Metric::kLeak}};
  ob::Observed l = ob::ParseRedfish(200, Sample("redfish/leak_detection.json"), "cdu1", leaks);
  CHECK(SampleOf(l, 400, Metric::kLeak) == 0);
  CHECK(SampleOf(l, 401, Metric::kLeak) == 0);
  REQUIRE(ErrorFor(l, 402, Problem::kMissing));  // not in this answer: missing, not dry
  CHECK(SampleOf(ob::ParseRedfish(200, Sample("redfish/leak_detector_moisture.json"), "rack1",
                                  {{"/redfish/v1/Chassis/Rack1/LeakDetectors/Moisture", 403, Metric::kLeak}}),
                 403, Metric::kLeak) == 0);
  std::string wet = Sample("redfish/leak_detector_moisture.json");
  wet.replace(wet.find("\"DetectorState\": \"OK\""), 21, "\"DetectorState\": \"Critical\"");
  CHECK(SampleOf(ob::ParseRedfish(200, wet, "rack1", {{"/redfish/v1/Chassis/Rack1/LeakDetectors/Moisture", 403, Metric::kLeak}}),
                 403, Metric::kLeak) == 1);

  // A PSU in Warning still delivers; Critical does not.
  std::vector<ob::RedfishPoint> psu{{"/redfish/v1/Chassis/1U/PowerSubsystem/PowerSupplies/Bay1", 500, Metric::kPsuOk}};
  CHECK(SampleOf(ob::ParseRedfish(200, Sample("redfish/psu_bay1_warning.json"), "shelf1", psu), 500, Metric::kPsuOk) == 1);
  std::string failed = Sample("redfish/psu_bay1_warning.json");
  failed.replace(failed.find("\"Warning\""), 9, "\"Critical\"");
  CHECK(SampleOf(ob::ParseRedfish(200, failed, "shelf1", psu), 500, Metric::kPsuOk) == 0);

  // ThermalMetrics' excerpts carry readings for the sensors they name.
  ob::Observed tm = ob::ParseRedfish(200, Sample("redfish/thermal_metrics.json"), "bmc07",
                                     {{"/redfish/v1/Chassis/1U/Sensors/ExhaustTemp", 201, Metric::kSwitchTemperature}});
  CHECK(SampleOf(tm, 201, Metric::kSwitchTemperature) == doctest::Approx(40.5));
  // A collection without $expand lists members only: their readings are missing, not zero.
  ob::Observed coll = ob::ParseRedfish(200, Sample("redfish/sensor_collection.json"), "bmc07", temp);
  REQUIRE(ErrorFor(coll, 200, Problem::kMissing));
  CHECK(coll.observations.empty());
}

TEST_CASE("redfish: a 500, a timeout, broken JSON and a null reading are observation errors") {
  std::vector<ob::RedfishPoint> pts{{"/redfish/v1/Chassis/1U/Sensors/CPU1Temp", 200, Metric::kGpuTemperature},
                                    {"/redfish/v1/Chassis/1U/Sensors/IntakeTemp", 201, Metric::kGpuTemperature}};
  ob::Observed e = ob::ParseRedfish(500, Sample("redfish/error_500_internal.json"), "bmc07", pts);
  CHECK(Count(e, Problem::kUnavailable) == 2);
  CHECK(e.errors[0].ToString() ==
        "bmc07: redfish: unavailable: /redfish/v1/Chassis/1U/Sensors/CPU1Temp: HTTP 500: Base.1.8.1.InternalError: The "
        "request failed due to an internal service error.  The service is still operational.");
  CHECK(Count(ob::ParseRedfish(0, "", "bmc07", pts), Problem::kUnavailable) == 2);  // no answer (timeout)
  CHECK(Count(ob::ParseRedfish(404, "", "bmc07", pts), Problem::kToolError) == 2);
  CHECK(Count(ob::ParseRedfish(200, "{\"Reading\": 4", "bmc07", pts), Problem::kUnreadable) == 2);
  ob::Observed null = ob::ParseRedfish(
      200, R"({"@odata.id": "/redfish/v1/Chassis/1U/Sensors/CPU1Temp", "Reading": null, "ReadingUnits": "Cel"})", "bmc07", pts);
  CHECK(ErrorFor(null, 200, Problem::kMissing)->what == "/redfish/v1/Chassis/1U/Sensors/CPU1Temp: Reading is null");
  CHECK(ErrorFor(null, 201, Problem::kMissing));
  ob::Observed absent = ob::ParseRedfish(
      200, R"({"@odata.id": "/redfish/v1/Chassis/1U/Sensors/CPU1Temp", "Reading": 30, "Status": {"State": "Absent"}})",
      "bmc07", pts);
  CHECK(ErrorFor(absent, 200, Problem::kMissing));
}

TEST_CASE("json: the grammar, escapes and limits") {
  auto v = ob::ParseJson(R"( {"a": [1, -2.5e3, true, null, "x\u00e9\ud83d\ude00\n"], "b": {}} )");
  REQUIRE(v.ok());
  const ob::JsonValue* a = v->Find("a");
  REQUIRE(a);
  REQUIRE(a->items().size() == 5);
  CHECK(a->items()[1].number() == -2500);
  CHECK(a->items()[2].boolean());
  CHECK(a->items()[3].is_null());
  CHECK(a->items()[4].text() == "x\xc3\xa9\xf0\x9f\x98\x80\n");
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "\"\\ud800\"", "tru", "1 2", "\"a\nb\""})
    CHECK_MESSAGE(!ob::ParseJson(bad).ok(), bad);
  CHECK(ob::ParseJson("[1,]").status().message() == "byte 3: expected a value");
  CHECK(!ob::ParseJson(std::string(100, '[') + std::string(100, ']')).ok());  // deeper than the limit
  CHECK(ob::ParseJson(std::string(60, '[') + std::string(60, ']')).ok());
}
