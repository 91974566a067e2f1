// cluster.regions in plans: loading, validation errors with file:line:column, region=NAME selectors and
// the checkpoint copy over the link between regions.
#include <doctest/doctest.h>

#include <string>

#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"

using namespace rackchaos;

namespace {

const char* kPlan = R"(name: t
cluster:
  model: gb200-nvl72
  regions:
    - {name: east, racks: 2}
    - {name: west, racks: 3, spares: {racks: 1}}
  region_link_gbytes_per_s: 40
workload:
  jobs:
    - {name: j, gpus: 72, checkpoint: {size_gb: 6000}}
faults:
  - {at: 10m, kind: KIND, target: TARGET, pick: all}
)";

std::string With(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

Result<runner::RunSpec> Validate(const std::string& text) {
  auto plan = runner::ParsePlan(text, "t.yaml");
  if (!plan.ok()) return plan.status();
  return runner::ValidatePlan(*plan, {});
}

Result<runner::RunSpec> Fault(const std::string& kind, const std::string& target) {
  return Validate(With(With(kPlan, "KIND", kind), "TARGET", target));
}

}  // namespace

TEST_CASE("regions: a plan's regions build the topology, spares per region, copy time from the size") {
  auto spec = Fault("region_outage", "east");
  REQUIRE_MESSAGE(spec.ok(), spec.status().message());
  CHECK(spec->topology->racks().size() == 5);
  REQUIRE(spec->topology->regions().size() == 2);
  CHECK(spec->topology->at(spec->topology->regions()[1].id).name == "west");
  CHECK(spec->region_spare_racks == std::vector<int>{0, 1});
  CHECK(spec->spare_racks == 1);
  CHECK(spec->jobs[0].checkpoint_copy == Duration::Seconds(150));  // 6000 GB at 40 GB/s
  CHECK(spec->jobs[0].checkpoint_size_gb == 6000);                 // shares the link with other copies
  CHECK(spec->region_link_gbytes_per_s == 40);
  CHECK(spec->object_store_gbytes_per_s == 1000);                  // the [guess] default
  auto small = Validate(With(With(With(kPlan, "region_link_gbytes_per_s: 40", "object_store_gbytes_per_s: 25"), "KIND",
                                  "region_outage"), "TARGET", "east"));
  REQUIRE_MESSAGE(small.ok(), small.status().message());
  CHECK(small->object_store_gbytes_per_s == 25);
  REQUIRE(spec->faults.size() == 1);
  CHECK(spec->faults[0].target.component == spec->topology->regions()[0].id);
  CHECK(spec->jobs[0].region == -1);
  auto west = Validate(With(With(With(kPlan, "{name: j,", "{name: j, region: west,"), "KIND", "tray_pull"), "TARGET", "r01.tray01"));
  REQUIRE_MESSAGE(west.ok(), west.status().message());
  CHECK(west->jobs[0].region == 1);
}

TEST_CASE("regions: region=NAME picks the region's parts that the fault kind takes") {
  auto trays = Fault("tray_pull", "region=west");
  REQUIRE_MESSAGE(trays.ok(), trays.status().message());
  CHECK(trays->faults.size() == 54);  // r03-r05, 18 trays each
  for (const auto& f : trays->faults) CHECK(trays->topology->RegionOf(f.target.component) == 1);
  auto store = Fault("object_store_fail", "region=east");
  REQUIRE(store.ok());
  REQUIRE(store->faults.size() == 1);
  CHECK(store->topology->at(store->faults[0].target.component).name == "east.objstore");
}

TEST_CASE("regions: bad region input names file:line:column and what would be valid") {
  auto check = [](const std::string& text, const std::string& want) {
    auto spec = Validate(text);
    REQUIRE_FALSE(spec.ok());
    CHECK(spec.status().message() == want);
  };
  check(With(kPlan, "{name: west, racks: 3,", "{name: east, racks: 3,"),
        "t.yaml:6:14: duplicate region name 'east' (first at t.yaml:5:14); region names must be unique");
  check(With(kPlan, "{name: east, racks: 2}", "{name: east, racks: 0}"),
        "t.yaml:5:27: racks: '0' is out of range; expected an integer from 1 to 100000 (e.g. racks: 600)");
  check(With(kPlan, "{name: east,", "{name: r7,"),
        "t.yaml:5:14: cluster.regions[0].name 'r7' is not a region name; use a lowercase word of letters, digits, "
        "'-' or '_' that is not a rack name (e.g. east, eu-west)");
  check(With(kPlan, "  regions:", "  racks: 4\n  regions:"),
        "t.yaml:4:10: racks is 4 but the regions hold 5; leave racks out or make it their sum");
  check(With(kPlan, "{racks: 1}", "{racks: 3}"),
        "t.yaml:6:46: spares.racks 3 leaves region 'west' no regular rack of its 3; use at most 2");
  check(With(kPlan, "gpus: 72,", "gpus: 216,"),
        "t.yaml:10:7: job 'j' asks for 216 GPUs but a job runs inside one region and the largest, east, has 144 "
        "outside its spares; make the job smaller or the region bigger");
  CHECK(Fault("region_outage", "region=north").status().message() ==
        "t.yaml:12:44: target 'region=north': no region named 'north'; the plan's regions: east, west");
  check(With(kPlan, "{name: j, gpus: 72,", "{name: j, region: north, gpus: 72,"),
        "t.yaml:10:25: no region named 'north'; the plan's regions: east, west");
  check(With(kPlan, "{name: j, gpus: 72,", "{name: j, region: west, gpus: 180,"),
        "t.yaml:10:25: job 'j' asks for 180 GPUs but its region west has 144 outside its spares; choose a bigger "
        "region or make the job smaller");
  CHECK(Fault("region_outage", "r01").status().message() ==
        "t.yaml:12:44: region_outage needs a region (e.g. east); r01 is a rack");
}

TEST_CASE("regions: checkpoint.size_gb needs a second region and region=NAME needs regions") {
  const std::string one = With(With(kPlan, "    - {name: west, racks: 3, spares: {racks: 1}}\n", ""), "KIND", "tray_pull");
  auto spec = Validate(With(one, "TARGET", "r01.tray01"));
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().message() ==
        "t.yaml:9:49: checkpoint.size_gb times the copy to another region, and the plan has one region; add a "
        "second region to cluster.regions or set checkpoint.copy_time");
  auto plain = Validate(R"(name: t
cluster: {racks: 2}
workload: {jobs: [{name: j, gpus: 72}]}
faults: [{at: 1m, kind: tray_pull, target: region=east}]
)");
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.status().message().find("the plan has no regions") != std::string::npos);
}

TEST_CASE("regions: background traffic on the region link lengthens the copy and is validated") {
  const std::string busy =
      With(kPlan, "region_link_gbytes_per_s: 40", "region_link_gbytes_per_s: 40\n  region_link_background_percent: 25");
  auto spec = Validate(With(With(busy, "KIND", "region_outage"), "TARGET", "east"));
  REQUIRE_MESSAGE(spec.ok(), spec.status().message());
  CHECK(spec->region_link_background == doctest::Approx(0.25));
  CHECK(spec->jobs[0].checkpoint_copy == Duration::Seconds(200));  // 6000 GB at 30 of the 40 GB/s
  auto quiet = Fault("region_outage", "east");
  REQUIRE(quiet.ok());
  CHECK(quiet->region_link_background == 0);  // the default: the copies have the link
  for (const char* bad : {"100", "-5", "0.3", "lots"}) {
    auto refused = Validate(With(With(With(busy, "background_percent: 25", std::string("background_percent: ") + bad),
                                      "KIND", "region_outage"), "TARGET", "east"));
    REQUIRE_FALSE(refused.ok());
    const std::string& message = refused.status().message();
    CHECK_MESSAGE(message.rfind("t.yaml:8:35: region_link_background_percent: '" + std::string(bad) + "'", 0) == 0,
                  message);
    CHECK_MESSAGE(message.find("an integer from 0 to 99") != std::string::npos, message);
  }
}
