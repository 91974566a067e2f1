// Healer policies: the shipped three, site files, and errors that name their origin and line.
#include "healer/policy.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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
  CHECK_FALSE(p.clock_enabled);  // off: see the policy's comment
  CHECK(p.clock_min_fraction == doctest::Approx(0.90));
  CHECK(p.clock_samples == 2);
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
  CHECK_FALSE(c.clock_enabled);
  CHECK(c.clock_samples == 4);
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
  CHECK_FALSE(a.clock_enabled);
  CHECK(a.clock_samples == 1);
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
        "x.yaml:3:14: remediation.gpu_reset: 'sometimes' is not a boolean; expected true or false");

  auto broken = ParsePolicy("name: x\ndetectors: [\n", "x.yaml");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.status().message().starts_with("x.yaml:"));

  auto nameless = ParsePolicy("description: no name\n", "x.yaml");
  REQUIRE_FALSE(nameless.ok());
  CHECK(nameless.status().message() == "x.yaml:1:1: a healer policy needs a name (e.g. name: site)");
}

TEST_CASE("healer.policy: a misspelt or misplaced key is refused with the keys that are valid there") {
  // Without the check these would silently keep their defaults.
  auto top = ParsePolicy("name: x\nrecheck: 5m\n", "x.yaml");
  REQUIRE_FALSE(top.ok());
  CHECK(top.status().message() ==
        "x.yaml:2:1: unknown key 'recheck'; expected one of: name, description, detectors, correlation_window, "
        "shared_domain_min_trays, circuit_breaker, remediation, repair, return_to_service");
  auto nested = ParsePolicy("name: x\ndetectors:\n  heartbeat:\n    missed_beat: 4\n", "x.yaml");
  REQUIRE_FALSE(nested.ok());
  CHECK(nested.status().message() ==
        "x.yaml:4:5: unknown key 'missed_beat' in detectors.heartbeat; expected one of: missed_beats (did you mean "
        "'missed_beats'?)");
  auto scalar = ParsePolicy("name: x\ndetectors:\n  heartbeat: 3\n", "x.yaml");
  REQUIRE_FALSE(scalar.ok());
  CHECK(scalar.status().message() == "x.yaml:3:14: detectors.heartbeat is a scalar; expected a map of keys: missed_beats");
  // Each key once: a second one would silently win.
  auto twice = ParsePolicy("name: x\nrepair: {gpu: 1h, gpu: 2h}\n", "x.yaml");
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message().rfind("x.yaml:2:19: duplicate key 'gpu' (first at x.yaml:2:10)", 0) == 0);
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
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message() == (dir / "nope.yaml").string() + ": no such healer policy file");
  // A directory (or a device, FIFO or socket) is refused by what it is: core/user_file.h.
  auto directory = LoadPolicy(dir.string() + "/");
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.status().message().find("is a directory, not a regular file") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("healer.policy: a file that is no policy (a password file, a key, a token) is refused unquoted") {
  // Naming the wrong file as --healer must not print its content (issue 26 item 1): the message names the
  // file, line and column, and quotes at most a key that is a plain word.
  std::string tmpl = (std::filesystem::temp_directory_path() / "rackchaos_policy_XXXXXX").string();
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  const std::filesystem::path dir = tmpl;
  const std::string file = (dir / "policy.yaml").string();
  const std::vector<std::string> texts = {
      // /etc/shadow: a YAML key (it ends in ':'), not a plain word.
      "root:$6$SECRETSALT$SECRETHASHSECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n",
      // /etc/passwd: a scalar.
      "root:x:0:0:SECRET root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
      // An SSH private key: a scalar over several lines.
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUSECRET\n-----END OPENSSH PRIVATE KEY-----\n",
      // An API token alone on its line: a plain word, but the whole document.
      "SECRETTOKEN_0123456789abcdef\n",
      // A credentials map: the unknown key may be named, its value never.
      "password: SECRETPASSWORD\n",
      // An INI file.
      "[SECRET]\nkey = SECRETVALUE\n",
  };
  for (const std::string& text : texts) {
    {
      std::ofstream out(file, std::ios::trunc);
      out << text;
    }
    auto p = LoadPolicy(file);
    INFO(text);
    REQUIRE_FALSE(p.ok());
    const std::string message = p.status().message();
    INFO(message);
    CHECK(p.status().code() == StatusCode::kInvalidArgument);
    CHECK(message.rfind(file + ":", 0) == 0);  // FILE:LINE:COL
    CHECK(message.find("SECRET") == std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

// Every number of a policy has a bound (issue 26 item 2): a value just outside it is refused at its
// file:line:column with the range, and docs/policies.md's "Valid ranges" table is generated from the same
// table. Regenerate with: RACKCHAOS_UPDATE_DOCS=1 ./build/tests/healer/healer_tests -tc="*valid ranges*"
std::string Formatted(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

TEST_CASE("healer.policy: every number is bounded, and a value outside its bound is refused naming the range") {
  CHECK(PolicyBounds().size() == 29);
  for (const PolicyBound& b : PolicyBounds()) {
    CAPTURE(b.key);
    REQUIRE(b.min < b.max);
    std::vector<std::string> outside;
    switch (b.kind) {
      case PolicyBound::Kind::kInt:
        outside = {std::to_string(static_cast<int64_t>(b.max) + 1), std::to_string(static_cast<int64_t>(b.min) - 1)};
        break;
      case PolicyBound::Kind::kNumber:
        outside = {Formatted(b.max * 2), Formatted(b.min / 2), ".nan"};
        break;
      case PolicyBound::Kind::kDuration:
        outside = {std::to_string(static_cast<int64_t>(b.max) + 1) + "s"};
        if (b.min >= 1) outside.push_back(std::to_string(static_cast<int64_t>(b.min) - 1) + "s");
        break;
      case PolicyBound::Kind::kFraction:
        outside = {"101%", "-1%"};
        break;
    }
    for (const std::string& value : outside) {
      CAPTURE(value);
      // The dotted key as nested maps, the value on the last line.
      std::string text = "name: x\n", indent;
      std::string rest(b.key);
      for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1)) {
        text += indent + rest.substr(0, dot) + ":\n";
        indent += "  ";
      }
      text += indent + rest + ": " + value + "\n";
      const int line = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
      const size_t col = indent.size() + rest.size() + 3;
      auto p = ParsePolicy(text, "x.yaml");
      REQUIRE_FALSE(p.ok());
      CHECK(p.status().message() == "x.yaml:" + std::to_string(line) + ":" + std::to_string(col) + ": " +
                                        std::string(b.key) + " is " + value + "; it must be " + DescribeBound(b));
    }
  }
  // The shipped policies keep their own bounds.
  for (const std::string& name : ShippedPolicyNames()) CHECK(LoadPolicy(name).ok());
}

TEST_CASE("healer.policy: the valid ranges of docs/policies.md are the loader's bounds") {
  std::string table = "| key | valid values |\n|---|---|\n";
  for (const PolicyBound& b : PolicyBounds()) table += "| `" + std::string(b.key) + "` | " + DescribeBound(b) + " |\n";
  const std::string begin = "<!-- generated from healer::PolicyBounds() by tests/healer/policy_test.cpp -->\n";
  const std::string end = "<!-- end of generated table -->\n";
  const std::string path = std::string(RACKCHAOS_SOURCE_DIR) + "/docs/policies.md";
  std::stringstream have;
  have << std::ifstream(path).rdbuf();
  std::string doc = have.str();
  const size_t from = doc.find(begin), to = doc.find(end);
  REQUIRE_MESSAGE((from != std::string::npos && to != std::string::npos && from < to), "markers missing in " << path);
  const std::string want = doc.substr(0, from + begin.size()) + table + doc.substr(to);
  if (std::getenv("RACKCHAOS_UPDATE_DOCS")) std::ofstream(path) << want;
  CHECK_MESSAGE(doc == want, "regenerate: RACKCHAOS_UPDATE_DOCS=1 healer_tests -tc=\"*valid ranges*\"");
}

}  // namespace
}  // namespace rackchaos::healer
