// Every number a plan gives has bounds in the key table, and values wrong together are refused
// (issue 26 item 2). The same cases run through the binary in tests/cli/hostile/numbers.sh.
#include <doctest/doctest.h>

#include <string>

#include "runner/plan/plan_loader.h"

using namespace rackchaos;
using namespace rackchaos::runner;

namespace {

std::string ParseError(const std::string& yaml) {
  auto plan = ParsePlan(yaml, "p.yaml");
  return plan.ok() ? "(parsed fine)" : plan.status().message();
}

// A plan with one job and one fault; each argument replaces one value.
std::string PlanText(const std::string& step, const std::string& interval, const std::string& duration,
                 const std::string& at, const std::string& for_, const std::string& extra = "") {
  return "name: x\nworkload: {jobs: [{name: j, gpus: 4, step_time: " + step + ", checkpoint: {interval: " + interval +
         "}}]}\nduration: " + duration + "\nfaults:\n  - {at: " + at + ", kind: k, target: r01, for: " + for_ + "}\n" +
         extra;
}

}  // namespace

TEST_CASE("every integer and duration key of the plan table has bounds") {
  for (const KeyInfo& k : PlanKeys()) {
    if (k.type != KeyInfo::Type::kInt && k.type != KeyInfo::Type::kDuration) continue;
    CAPTURE(k.section);
    CAPTURE(k.key);
    CHECK(k.min >= 0);
    CHECK(k.min < k.max);
    CHECK(DescribeType(k).find(" from ") != std::string::npos);
  }
}

TEST_CASE("a duration out of its bounds is refused naming the range") {
  CHECK(ParseError(PlanText("6s", "30m", "2h", "10m", "10m")) == "(parsed fine)");
  CHECK(ParseError(PlanText("0s", "30m", "2h", "10m", "10m")) ==
        "p.yaml:2:49: step_time: '0s' is out of range; expected a duration from 1ms to 1d with a unit (ms, s, m, h, d, "
        "w) (e.g. step_time: 6s)");
  CHECK(ParseError(PlanText("6s", "0s", "2h", "10m", "10m")).starts_with("p.yaml:2:76: interval: '0s' is out of range; expected a duration from 1s to"));
  CHECK(ParseError(PlanText("6s", "30m", "0s", "10m", "10m")).starts_with("p.yaml:3:11: duration: '0s' is out of range"));
  CHECK(ParseError(PlanText("6s", "30m", "2h", "10m", "0s")).starts_with("p.yaml:5:42: for: '0s' is out of range"));
  CHECK(ParseError(PlanText("6s", "30m", "5000d", "10m", "10m")).starts_with("p.yaml:3:11: duration: '5000d' is out of range"));
}

TEST_CASE("values in range but wrong together are refused at the later value") {
  CHECK(ParseError(PlanText("6s", "30m", "1h", "2h", "10m")) ==
        "p.yaml:5:10: faults[0].at: 2h is not before the plan's duration 1h (p.yaml:3:11): the fault would never be "
        "injected; valid: 0s to 59m59.999999s");
  CHECK(ParseError(PlanText("6s", "30m", "1h", "50m", "1d")) ==
        "p.yaml:5:42: faults[0].for: 1d from 50m runs past the plan's duration 1h: valid: 1ms to 10m, or leave `for` "
        "out to keep the fault until the end");
  CHECK(ParseError(PlanText("6s", "30m", "1h", "50m", "10m")) == "(parsed fine)");  // ends exactly at the end
  CHECK(ParseError(PlanText("6s", "30m", "2h", "10m", "10m", "chaos: {catalogue: llama3, from: 1h, until: 30m}\n"))
            .starts_with("p.yaml:6:45: chaos.until: 30m is not after chaos.from 1h"));
  CHECK(ParseError(PlanText("6s", "30m", "2h", "10m", "10m", "chaos: {catalogue: llama3, until: 3h}\n"))
            .starts_with("p.yaml:6:35: chaos.until: 3h is after the plan's duration 2h"));
  CHECK(ParseError(PlanText("6s", "30m", "2h", "10m", "10m", "chaos: {catalogue: llama3, from: 2h}\n"))
            .starts_with("p.yaml:6:34: chaos.from: 2h is not before the plan's duration 2h"));
  // Without a duration the horizon follows the faults: nothing to compare with.
  CHECK(ParseError("name: x\nfaults: [{at: 30d, kind: k, target: r01, for: 1d}]\n") == "(parsed fine)");
}
