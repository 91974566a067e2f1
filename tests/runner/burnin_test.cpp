// Burn-in: chaos limits (one_per_domain, min_gap) on the drawn timeline, and the progress line.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "runner/plan/plan_loader.h"
#include "runner/engine/progress.h"
#include "runner/engine/run.h"
#include "runner/spec/validate.h"

using namespace rackchaos;

namespace {

// Four racks, a week of Llama 3 rates x200: hundreds of draws, many overlapping.
std::string ChaosPlan(const std::string& extra) {
  return "name: burn\nseed: 9\nduration: 7d\ncluster: {model: gb200-nvl72, racks: 4}\n"
         "chaos:\n  catalogue: llama3\n  scale: 200\n" + extra;
}

runner::RunSpec Validate(const std::string& text) {
  auto plan = runner::ParsePlan(text, "burn.yaml");
  REQUIRE_MESSAGE(plan.ok(), plan.status().message());
  auto spec = runner::ValidatePlan(*plan, {});
  REQUIRE_MESSAGE(spec.ok(), spec.status().message());
  return std::move(*spec);
}

// The most chaos faults active at once within one rack.
int MostAtOnceInARack(const runner::RunSpec& spec) {
  int most = 0;
  for (const auto& a : spec.faults) {
    int n = 0;
    ComponentId rack = spec.topology->RackOf(a.target.component);
    for (const auto& b : spec.faults) {
      Time b_end = b.duration ? b.at + *b.duration : Time::Max();
      n += spec.topology->RackOf(b.target.component) == rack && b.at <= a.at && a.at < b_end;
    }
    most = std::max(most, n);
  }
  return most;
}

Duration SmallestGap(const runner::RunSpec& spec) {
  Duration gap = Duration::Max();
  for (size_t i = 1; i < spec.faults.size(); ++i) gap = std::min(gap, spec.faults[i].at - spec.faults[i - 1].at);
  return gap;
}

}  // namespace

TEST_CASE("burn-in: one_per_domain keeps at most one chaos fault active per rack") {
  runner::RunSpec free = Validate(ChaosPlan(""));
  runner::RunSpec one = Validate(ChaosPlan("  one_per_domain: true\n"));
  REQUIRE(free.faults.size() > 50);
  CHECK(MostAtOnceInARack(free) > 1);  // without the limit, draws overlap within a rack
  CHECK(MostAtOnceInARack(one) == 1);
  CHECK(one.faults.size() < free.faults.size());
  CHECK(one.faults.size() > 4);
  // Ids still follow time.
  for (size_t i = 1; i < one.faults.size(); ++i) CHECK(one.faults[i - 1].at <= one.faults[i].at);
}

TEST_CASE("burn-in: min_gap spaces chaos faults cluster-wide") {
  runner::RunSpec free = Validate(ChaosPlan(""));
  runner::RunSpec spaced = Validate(ChaosPlan("  min_gap: 2h\n"));
  CHECK(SmallestGap(free) < Duration::Hours(2));
  REQUIRE(spaced.faults.size() > 10);
  CHECK(SmallestGap(spaced) >= Duration::Hours(2));
  // Both limits together, and the same seed draws the same timeline.
  runner::RunSpec both = Validate(ChaosPlan("  min_gap: 30m\n  one_per_domain: true\n"));
  runner::RunSpec again = Validate(ChaosPlan("  min_gap: 30m\n  one_per_domain: true\n"));
  CHECK(MostAtOnceInARack(both) == 1);
  CHECK(SmallestGap(both) >= Duration::Minutes(30));
  REQUIRE(both.faults.size() == again.faults.size());
  for (size_t i = 0; i < both.faults.size(); ++i) CHECK(both.faults[i].at == again.faults[i].at);
}

TEST_CASE("burn-in: chaos.classes weights each component class and 0 turns one off") {
  auto count = [](const runner::RunSpec& spec, cluster::Kind kind) {
    int n = 0;
    for (const auto& f : spec.faults) n += spec.topology->at(f.target.component).kind == kind;
    return n;
  };
  const runner::RunSpec base = Validate(ChaosPlan(""));
  const runner::RunSpec same = Validate(ChaosPlan("  classes: {gpu: 100, nic: 100, node: 100}\n"));
  REQUIRE(base.faults.size() == same.faults.size());  // 100% is the catalogue's rate: the same draws
  for (size_t i = 0; i < base.faults.size(); ++i) CHECK(base.faults[i].at == same.faults[i].at);
  const int gpus = count(base, cluster::Kind::kGpu);
  REQUIRE(gpus > 20);

  const runner::RunSpec nodes_only = Validate(ChaosPlan("  classes: {gpu: 0, nic: 0}\n"));
  CHECK(count(nodes_only, cluster::Kind::kGpu) == 0);
  CHECK(count(nodes_only, cluster::Kind::kNic) == 0);
  CHECK(count(nodes_only, cluster::Kind::kComputeTray) > 0);
  CHECK(count(Validate(ChaosPlan("  classes: {gpu: 400}\n")), cluster::Kind::kGpu) > 2 * gpus);

  auto bad = runner::ParsePlan(ChaosPlan("  classes: {gpu: -5}\n"), "burn.yaml");
  CHECK(bad.status().message().find("gpu") != std::string::npos);
  auto unknown = runner::ParsePlan(ChaosPlan("  classes: {cdu: 5}\n"), "burn.yaml");
  CHECK(unknown.status().message().find("unknown key 'cdu'") != std::string::npos);
}

TEST_CASE("burn-in: the progress line says simulated time, faults, jobs up and ETA") {
  runner::RunProgress p{Duration::Hours(6), Duration::Hours(24), 3, 1, 2};
  CHECK(runner::ProgressLine::RunText(p, 10) == "run: 6h of 1d simulated, 3 fault(s), jobs up 1/2, ETA 30s");
  CHECK(runner::ProgressLine::RunText({}, 0) == "run: 0s of 0s simulated, 0 fault(s), jobs up 0/0");
  CHECK(runner::ProgressLine::SweepText(10, 40, 1, 5) == "sweep: 10/40 seeds done, 1 failed, 2.0 seeds/s, ETA 15s");
  CHECK(runner::ProgressLine::SweepText(40, 40, 0, 20) == "sweep: 40/40 seeds done, 0 failed, 2.0 seeds/s");
}

TEST_CASE("burn-in: a run reports progress while it goes and the report does not change") {
  std::string text = "name: burn\nseed: 9\nduration: 2d\ncluster: {model: gb200-nvl72, racks: 1, spare_trays: 2}\n"
                     "chaos: {catalogue: llama3, scale: 200, one_per_domain: true}\n"
                     "workload:\n  jobs:\n    - {name: j, gpus: 64}\n";
  auto plan = runner::ParsePlan(text, "burn.yaml");
  REQUIRE(plan.ok());
  auto spec = runner::ValidatePlan(*plan, {});
  REQUIRE(spec.ok());
  auto dir = std::filesystem::temp_directory_path() / ("rackchaos-burnin-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<runner::RunProgress> seen;
  runner::RunOptions opt;
  opt.db_path = (dir / "p.db").string();
  opt.progress = [&](const runner::RunProgress& p) { seen.push_back(p); };
  runner::RunOutcome with = runner::ExecuteRun(*plan, *spec, opt);
  opt.progress = nullptr;
  runner::RunOutcome without = runner::ExecuteRun(*plan, *spec, opt);
  std::filesystem::remove_all(dir);
  REQUIRE(seen.size() > 5);
  for (size_t i = 1; i < seen.size(); ++i) {
    CHECK(seen[i - 1].now <= seen[i].now);
    CHECK(seen[i - 1].faults <= seen[i].faults);
  }
  CHECK(seen.back().faults > 0);
  CHECK(seen.back().jobs == 1);
  CHECK(seen.back().horizon == Duration::Hours(48));
  // The summaries differ only in the run id line.
  CHECK(with.code == without.code);
  CHECK(with.summary.size() == without.summary.size());
}
