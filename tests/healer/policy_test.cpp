// Healer policies: the shipped three, site files, and errors that name their origin and line.
#include "healer/policy.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

using testing::Shipped;

TEST_CASE("healer.policy: three policies ship, sorted by name") {
  CHECK(ShippedPolicyNames() == std::vector<std::string>{"aggressive", "conservative", "default"});
}

TEST_CASE("healer.policy: the default policy reads as its YAML says") {
  Policy p = Shipped("default");
  CHECK(p.name == "default");
  CHECK(p.heartbeat_missed_beats == 3);
  CHECK(p.straggler_window == Duration::Minutes(5));
  CHECK(p.straggler_min_reports == 3);
  CHECK(p.straggler_mad_threshold == 6);
  CHECK(p.straggler_min_slowdown == doctest::Approx(0.05));
  CHECK(p.thermal_temperature_c == 85);
  CHECK(p.thermal_samples == 2);
  CHECK(p.thermal_flow_drop == doctest::Approx(0.30));
  CHECK(p.correlation_window == Duration::Seconds(20));
  CHECK(p.shared_domain_min_trays == 3);
  CHECK(p.breaker_max_share > 0);
  CHECK(p.breaker_max_share < 1);
  CHECK(p.breaker_window == Duration::Hours(1));
  CHECK(p.restart_jobs);
  CHECK(p.gpu_reset);
  CHECK(p.reboot);
  CHECK(p.reboot_wait == Duration::Minutes(10));
  CHECK_FALSE(p.wait_for_repair);
  CHECK(p.repair.gpu == Duration::Hours(4));
  CHECK(p.repair.tray == Duration::Hours(4));
  CHECK(p.repair.switch_tray == Duration::Hours(4));
  CHECK(p.repair.nic == Duration::Hours(2));
  CHECK(p.repair.cooling == Duration::Hours(2));
  CHECK(p.repair.power == Duration::Hours(2));
  CHECK(p.repair.rack == Duration::Hours(16));
  CHECK(p.recheck == Duration::Minutes(10));
  CHECK(p.burn_in == Duration::Minutes(30));
}

TEST_CASE("healer.policy: conservative and aggressive differ from the default as their YAML says") {
  Policy c = Shipped("conservative");
  CHECK(c.name == "conservative");
  CHECK(c.heartbeat_missed_beats == 6);
  CHECK(c.straggler_window == Duration::Minutes(15));
  CHECK(c.straggler_min_reports == 10);
  CHECK(c.straggler_mad_threshold == 8);
  CHECK(c.straggler_min_slowdown == doctest::Approx(0.10));
  CHECK(c.thermal_temperature_c == 86);
  CHECK(c.thermal_samples == 4);
  CHECK(c.thermal_flow_drop == doctest::Approx(0.50));
  CHECK(c.correlation_window == Duration::Seconds(60));
  CHECK_FALSE(c.gpu_reset);
  CHECK(c.wait_for_repair);
  CHECK(c.repair.gpu == Duration::Hours(5));
  CHECK(c.repair.nic == Duration::Hours(3));
  CHECK(c.recheck == Duration::Minutes(30));
  CHECK(c.burn_in == Duration::Hours(2));

  Policy a = Shipped("aggressive");
  CHECK(a.name == "aggressive");
  CHECK(a.heartbeat_missed_beats == 2);
  CHECK(a.straggler_window == Duration::Minutes(2));
  CHECK(a.straggler_min_reports == 2);
  CHECK(a.straggler_mad_threshold == 5);
  CHECK(a.straggler_min_slowdown == doctest::Approx(0.03));
  CHECK(a.thermal_temperature_c == 80);
  CHECK(a.thermal_samples == 1);
  CHECK(a.thermal_flow_drop == doctest::Approx(0.20));
  CHECK(a.correlation_window == Duration::Seconds(5));
  CHECK(a.gpu_reset);
  CHECK(a.reboot_wait == Duration::Minutes(6));
  CHECK_FALSE(a.wait_for_repair);
  CHECK(a.recheck == Duration::Minutes(5));
  CHECK(a.burn_in == Duration{});

  // The circuit breaker is tuned per site; the order of the three is what the names promise.
  const Policy d = Shipped("default");
  CHECK(c.breaker_max_share < d.breaker_max_share);
  CHECK(d.breaker_max_share < a.breaker_max_share);
}

TEST_CASE("healer.policy: an unknown name lists the shipped policies") {
  auto p = LoadPolicy("agressive");
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == StatusCode::kNotFound);
  CHECK(p.status().message() ==
        "unknown healer policy 'agressive'; shipped policies: aggressive, conservative, default (or give a path to a "
        "policy YAML)");
}

TEST_CASE("healer.policy: a bad value names origin:line and what is wrong") {
  const std::string text =
      "name: site\n"
      "detectors:\n"
      "  heartbeat:\n"
      "    missed_beats: 4\n"
      "correlation_window: 20\n";  // a bare number: the unit is missing
  auto p = ParsePolicy(text, "site.yaml");
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == StatusCode::kInvalidArgument);
  CHECK(p.status().message().starts_with("site.yaml:5:21: "));

  auto range = ParsePolicy("name: x\ndetectors:\n  thermal:\n    samples: 0\n", "x.yaml");
  REQUIRE_FALSE(range.ok());
  CHECK(range.status().message() ==
        "x.yaml:4:14: detectors.thermal.samples is 0; it must be a whole number from 1 to 1000");

  auto type = ParsePolicy("name: x\nremediation:\n  gpu_reset: sometimes\n", "x.yaml");
  REQUIRE_FALSE(type.ok());
  CHECK(type.status().message() ==
        "x.yaml:3:14: remediation.gpu_reset must be true or false; `rackchaos explain default` shows every key");

  auto broken = ParsePolicy("name: x\ndetectors: [\n", "x.yaml");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.status().message().starts_with("x.yaml:"));

  auto nameless = ParsePolicy("description: no name\n", "x.yaml");
  REQUIRE_FALSE(nameless.ok());
  CHECK(nameless.status().message() == "x.yaml: a policy needs a name");
}

TEST_CASE("healer.policy: a misspelt or misplaced key is refused with the keys that are valid there") {
  // Without the check these would silently keep their defaults.
  auto top = ParsePolicy("name: x\nrecheck: 5m\n", "x.yaml");
  REQUIRE_FALSE(top.ok());
  CHECK(top.status().message() ==
        "x.yaml:2:1: unknown policy key 'recheck'; known keys: circuit_breaker, correlation_window, description, "
        "detectors, name, remediation, repair, return_to_service, shared_domain_min_trays");
  auto nested = ParsePolicy("name: x\ndetectors:\n  heartbeat:\n    missed_beat: 4\n", "x.yaml");
  REQUIRE_FALSE(nested.ok());
  CHECK(nested.status().message() ==
        "x.yaml:4:5: unknown policy key 'missed_beat' in detectors.heartbeat; known keys: missed_beats");
  auto scalar = ParsePolicy("name: x\ndetectors:\n  heartbeat: 3\n", "x.yaml");
  REQUIRE_FALSE(scalar.ok());
  CHECK(scalar.status().message() == "x.yaml:3:14: detectors.heartbeat must be a map with keys: missed_beats");
  for (const std::string& name : ShippedPolicyNames()) CHECK_MESSAGE(LoadPolicy(name).ok(), name);
  CHECK_FALSE(ParsePolicy("- a\n- b\n", "x.yaml").ok());
}

TEST_CASE("healer.policy: a path loads a site's file - keys it leaves out keep their defaults") {
  std::string tmpl = (std::filesystem::temp_directory_path() / "rackchaos_policy_XXXXXX").string();
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  const std::filesystem::path dir = tmpl;
  const std::string file = (dir / "site.yaml").string();
  {
    std::ofstream out(file);
    out << "name: site\n"
           "detectors:\n"
           "  heartbeat:\n"
           "    missed_beats: 4\n"
           "return_to_service:\n"
           "  recheck: 1h30m\n";
  }
  auto p = LoadPolicy(file);
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  CHECK(p->name == "site");
  CHECK(p->heartbeat_missed_beats == 4);
  CHECK(p->recheck == Duration::Minutes(90));
  CHECK(p->thermal_samples == 2);  // not in the file
  // Keys a file leaves out take the default policy's values, the way back from isolation included.
  const Policy d = testing::Shipped("default");
  CHECK(p->reboot == d.reboot);
  CHECK(p->reboot_wait == d.reboot_wait);
  CHECK(p->wait_for_repair == d.wait_for_repair);
  CHECK(p->repair.gpu == d.repair.gpu);
  CHECK(p->repair.rack == d.repair.rack);
  CHECK(p->burn_in == d.burn_in);

  auto missing = LoadPolicy((dir / "nope.yaml").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "cannot read healer policy file " + (dir / "nope.yaml").string());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rackchaos::healer
