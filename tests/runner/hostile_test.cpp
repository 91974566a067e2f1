// Hostile plans (issue 10) that get past the loader's shape checks: values only validation can judge.
// The loader's own hostile cases (depth, alias bombs, size, binary bytes, 10^30 GPUs) are in
// plan_loader_test.cpp; the rackchaos binary's are cli:hostile-* in tests/cli.
#include <doctest/doctest.h>

#include <string>

#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"

using namespace rackchaos;

namespace {

// A one-rack plan with one fault whose fields are `fault` (a YAML flow map's inside).
Result<runner::RunSpec> ValidateFault(const std::string& fault) {
  const std::string text =
      "name: hostile\nduration: 2h\ncluster: {model: gb200-nvl72, racks: 1, spare_trays: 2}\n"
      "workload: {jobs: [{name: j, gpus: 64, step_time: 6s}]}\nfaults:\n  - {" + fault + "}\n";
  auto plan = runner::ParsePlan(text, "h.yaml");
  if (!plan.ok()) return plan.status();
  return runner::ValidatePlan(*plan, {});
}

// The error of a plan that must be refused as bad input, checked to be one line.
std::string Refused(const std::string& fault) {
  auto spec = ValidateFault(fault);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().code() == StatusCode::kInvalidArgument);
  CHECK(spec.status().message().find('\n') == std::string::npos);
  CHECK(spec.status().message().find('\r') == std::string::npos);
  return spec.status().message();
}

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("NaN and negative durations are refused") {
  CHECK(Has(Refused("at: .nan, kind: tray_pull, target: r01.tray01"), "at: '.nan' is not a duration"));
  CHECK(Has(Refused("at: nan, kind: tray_pull, target: r01.tray01"), "is not a duration"));
  CHECK(Has(Refused("at: 10m, kind: tray_pull, target: r01.tray01, for: .inf"), "is not a duration"));
  CHECK(Has(Refused("at: -1ms, kind: tray_pull, target: r01.tray01"), "is negative"));
  CHECK(Has(Refused("at: 10m, kind: tray_pull, target: r01.tray01, for: -10m"), "is negative"));
  CHECK(Has(Refused("at: 1000000000d, kind: tray_pull, target: r01.tray01"), "too long"));
}

TEST_CASE("a selector matching nothing is refused; one matching everything runs every match") {
  CHECK(Has(Refused("at: 10m, kind: gpu_throttle, target: 'r*.tray*.gpu9', pick: all, params: {power_cap: 600W}"),
            "matches no component"));
  CHECK(Has(Refused("at: 10m, kind: tray_pull, target: 'r02.tray*', pick: all"), "matches no component"));
  auto all = ValidateFault("at: 10m, kind: gpu_throttle, target: 'r*.tray*.gpu*', pick: all, params: {power_cap: 600W}");
  REQUIRE_MESSAGE(all.ok(), all.status().message());
  CHECK(all->faults.size() == 72);
  CHECK(Has(Refused("at: 10m, kind: gpu_throttle, target: 'r*.tray*.gpu*', pick: 'count:73', "
                    "params: {power_cap: 600W}"),
            "73"));
}

TEST_CASE("targets with shell metacharacters or control characters are selector errors on one line") {
  for (const char* target : {"r01.tray01; rm -rf /", "r01.$(reboot)", "r01.`id`", "r01.tray01 | sh", "r01.tray01 && x",
                             "r01.tray01\\nr01.tray02", "r01.tray01\\rx", "r01.tray\\x0001", "r01.tray01\\e[2J"}) {
    CAPTURE(target);
    const std::string message = Refused(std::string("at: 10m, kind: tray_pull, target: \"") + target + "\"");
    CHECK(Has(message, "h.yaml:6:"));
  }
  CHECK(Has(Refused("at: 10m, kind: tray_pull, target: \"r01.tray01\\nr01.tray02\""), "'r01.tray01\\nr01.tray02'"));
  // Other quoted values stay one line too: the kind, a parameter, the model.
  CHECK(Has(Refused("at: 10m, kind: \"tray\\npull\", target: r01.tray01"), "unknown fault kind 'tray\\npull'"));
  CHECK(Has(Refused("at: 10m, kind: gpu_throttle, target: r01.tray01.gpu1, params: {power_cap: \"6\\n00W\"}"),
            "'6\\n00W'"));
}
