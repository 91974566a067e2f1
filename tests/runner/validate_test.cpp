// Validation against the catalogue, the injector table and the topology, with file:line:column errors.
#include <doctest/doctest.h>

#include <string>

#include "injectors/injector.h"
#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"

using namespace rackchaos;

namespace {

const char* kBase = R"(name: t
seed: 5
cluster: {model: gb200-nvl72, racks: 2, spare_trays: 2}
workload:
  jobs:
    - {name: j, gpus: 64, step_time: 5s}
faults:
  - at: 10m
    kind: KIND
    target: TARGET
    pick: PICK
)";

Result<runner::RunSpec> Validate(const std::string& kind, const std::string& target, const std::string& pick = "one") {
  std::string text = kBase;
  text.replace(text.find("KIND"), 4, kind);
  text.replace(text.find("TARGET"), 6, target);
  text.replace(text.find("PICK"), 4, pick);
  auto plan = runner::ParsePlan(text, "t.yaml");
  REQUIRE_MESSAGE(plan.ok(), plan.status().message());
  return runner::ValidatePlan(*plan, {});
}

}  // namespace

TEST_CASE("targets resolve to components and NVLink ports") {
  auto spec = Validate("link_down", "r02.tray04.gpu1.nvlink17");
  REQUIRE(spec.ok());
  REQUIRE(spec->faults.size() == 1);
  CHECK(spec->topology->TargetName(spec->faults[0].target) == "r02.tray04.gpu1.nvlink17");
  CHECK(spec->faults[0].target.port == 17);
  CHECK(spec->topology->gpus().size() == 144);
}

TEST_CASE("pick modes choose among matches, deterministically from the seed") {
  auto all = Validate("tray_pull", "r*.tray[01-04]", "all");
  REQUIRE(all.ok());
  CHECK(all->faults.size() == 8);
  auto three = Validate("gpu_throttle", "r01.tray*.gpu*", "count:3");
  REQUIRE(three.ok());
  CHECK(three->faults.size() == 3);
  auto again = Validate("gpu_throttle", "r01.tray*.gpu*", "count:3");
  for (size_t i = 0; i < 3; ++i) CHECK(three->faults[i].target.component == again->faults[i].target.component);
  CHECK(three->faults[0].id == 1);
  CHECK(three->faults[2].id == 3);
}

TEST_CASE("errors name the line and column and what would be valid") {
  auto kind = Validate("link_dwn", "r01.tray01.nic0");
  REQUIRE_FALSE(kind.ok());
  CHECK(kind.status().message() ==
        "t.yaml:9:11: unknown fault kind 'link_dwn'; known kinds: " + injectors::InjectorNames());  // the table, pinned in injector_test

  auto target = Validate("tray_pull", "r01.tray33");
  REQUIRE_FALSE(target.ok());
  CHECK(target.status().message().rfind("t.yaml:10:13: target 'r01.tray33' matches no component; nearest: r01.tray13", 0) == 0);

  auto port = Validate("link_down", "r01.tray01.gpu0.nvlink18");
  REQUIRE_FALSE(port.ok());
  CHECK(port.status().message().find("NVLink ports nvlink0-nvlink17") != std::string::npos);

  auto wrong = Validate("valve_fail", "r01.tray01.gpu0");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message().find("valve_fail needs a valve, a compute tray or an NVLink switch tray") != std::string::npos);

  auto too_many = Validate("tray_pull", "r01.tray0[1-2]", "count:5");
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.status().message().rfind("t.yaml:11:11:", 0) == 0);
}

TEST_CASE("model, job size, parameters, policy and gates are checked") {
  auto parse = [](const std::string& text) {
    auto plan = runner::ParsePlan(text, "p.yaml");
    REQUIRE_MESSAGE(plan.ok(), plan.status().message());
    return runner::ValidatePlan(*plan, {});
  };
  auto model = parse("name: p\ncluster: {model: gb900-nvl1}\n");
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().message().find("known models: gb200-nvl36x2, gb200-nvl72, gb300-nvl72, helios, hgx-b200, vr-nvl72") != std::string::npos);

  auto big = parse("name: p\ncluster: {model: gb200-nvl72, spare_trays: 2}\nworkload:\n  jobs:\n    - {name: j, gpus: 72}\n");
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().message().find("outside its spare trays") != std::string::npos);

  auto param = parse("name: p\nfaults:\n  - {at: 1m, kind: valve_fail, target: r01.tray01, params: {openness: 5%}}\n");
  REQUIRE_FALSE(param.ok());
  CHECK(param.status().message().find("unknown parameter 'openness' for valve_fail; known: opening") != std::string::npos);

  auto gate = parse("name: p\nexpect:\n  - ttr.p99 < 5m\n");
  REQUIRE_FALSE(gate.ok());
  CHECK(gate.status().message().rfind("p.yaml:3:5: unknown metric 'ttr.p99'", 0) == 0);

  auto policy = parse("name: p\nhealer: {policy: reckless}\n");
  REQUIRE_FALSE(policy.ok());
  CHECK(policy.status().message().find("shipped policies: aggressive, conservative, default") != std::string::npos);
}

TEST_CASE("overrides and the default horizon") {
  auto plan = runner::ParsePlan(
      "name: p\nseed: 9\nfaults:\n  - {at: 1h, kind: tray_pull, target: r01.tray02, for: 30m}\n", "p.yaml");
  REQUIRE(plan.ok());
  auto spec = runner::ValidatePlan(*plan, {std::optional<uint64_t>(77), "aggressive"});
  REQUIRE(spec.ok());
  CHECK(spec->seed == 77);
  CHECK(spec->policy.name == "aggressive");
  CHECK(spec->horizon == Duration::Minutes(150));  // last fault end (1h30m) + 1h
}

TEST_CASE("validate: elastic.min_gpus is checked against the job and whole trays - real mode refuses shrinking it") {
  auto parse = [](const std::string& elastic, const std::string& cluster = "", const std::string& healer = "") {
    std::string text = "name: p\ncluster: {model: gb200-nvl72" + cluster + "}\nworkload:\n  jobs:\n    - name: j\n" +
                       "      gpus: 64\n      elastic: " + elastic + "\n";
    auto plan = runner::ParsePlan(text, "p.yaml");
    if (!plan.ok()) return Result<runner::RunSpec>(plan.status());
    return runner::ValidatePlan(*plan, {std::nullopt, healer});
  };
  auto ok = parse("{min_gpus: 48}");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->jobs[0].min_gpus == 48);
  CHECK(parse("{}").status().message().rfind("p.yaml:7:16: missing required key 'min_gpus'", 0) == 0);
  CHECK(parse("{min_gpus: 72}").status().message() ==
        "p.yaml:7:27: elastic.min_gpus 72 is more than the job's gpus 64; choose 1..64");
  CHECK(parse("{min_gpus: 50}").status().message() ==
        "p.yaml:7:27: elastic.min_gpus 50 is not a multiple of the 4 GPUs per tray of gb200-nvl72; a shrunk job "
        "runs on whole trays (e.g. min_gpus: 48)");
  CHECK(parse("{min_gps: 48}").status().message().find("min_gpus") != std::string::npos);
  std::string shrink = std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/policies/shrink.yaml";
  auto sim = parse("{min_gpus: 48}", "", shrink);
  REQUIRE_MESSAGE(sim.ok(), sim.status().message());
  CHECK(sim->policy.shrink);
  auto real = parse("{min_gpus: 48}", ", inventory: sites/lab.yaml", shrink);
  REQUIRE_FALSE(real.ok());
  CHECK(real.status().message().find("p.yaml:7:27: job 'j' is elastic and policy 'shrink' sets remediation.shrink, "
                                     "which only the simulator does") == 0);
  CHECK(parse("{min_gpus: 48}", ", inventory: sites/lab.yaml").ok());  // default policy: shrink off
}

TEST_CASE("validate: parallelism and collectives are placed and checked against the NVLink domain") {
  auto parse = [](const std::string& job_keys) {
    std::string text = "name: p\ncluster: {model: gb200-nvl72, racks: 2}\nworkload:\n  jobs:\n    - name: j\n" +
                       job_keys;
    auto plan = runner::ParsePlan(text, "p.yaml");
    if (!plan.ok()) return Result<runner::RunSpec>(plan.status());
    return runner::ValidatePlan(*plan, {});
  };
  auto moe = parse("      gpus: 64\n      parallelism: {tp: 4, dp: 16, ep: 8}\n      collectives: {ep: 15, pp: 0}\n");
  CHECK(moe.status().message() == "p.yaml:8:20: collectives.pp is the sends between pipeline stages: it needs "
                                  "parallelism with pp > 1 (e.g. parallelism: {tp: 4, pp: 2})");
  auto ok = parse("      gpus: 64\n      parallelism: {tp: 4, dp: 16, ep: 8}\n      collectives: {ep: 15}\n");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->jobs[0].grouped);
  CHECK(ok->jobs[0].ep_share == doctest::Approx(0.15));
  CHECK(ok->jobs[0].nvlink_share == doctest::Approx(0.10));
  auto plain = parse("      gpus: 64\n");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->jobs[0].grouped);
  CHECK(plain->jobs[0].ep_share == 0);
  CHECK(parse("      gpus: 64\n      collectives: {ep: 5}\n").status().message().rfind(
            "p.yaml:7:20: collectives.ep is the MoE all-to-all of expert groups: it needs parallelism with ep > 1", 0) ==
        0);
  CHECK(parse("      gpus: 96\n      parallelism: {tp: 4, dp: 24, ep: 5}\n").status().message() ==
        "p.yaml:7:20: job 'j': ep 5 does not divide dp 24; expert groups are carved from the data-parallel ranks "
        "(e.g. ep: 1, 2, 3, 4, 6, 8, 12 or 24)");
  // tp*pp*dp = gpus: one rule (cluster::CheckGroups), placed at the parallelism key; an absent dp is derived.
  CHECK(parse("      gpus: 64\n      parallelism: {tp: 4, pp: 4}\n").value().jobs[0].dp == 4);
  CHECK(parse("      gpus: 64\n      parallelism: {tp: 4, pp: 4, dp: 3}\n").status().message() ==
        "p.yaml:7:20: job 'j': tp*pp*dp = 4*4*3 = 48 but gpus is 64; make the product equal gpus (e.g. dp: 4)");
  CHECK(parse("      gpus: 64\n      parallelism: {tp: 4, pp: 3}\n").status().message() ==
        "p.yaml:7:20: job 'j': gpus 64 is not divisible by tp*pp = 4*3 = 12; choose tp and pp whose product "
        "divides gpus");
  CHECK(parse("      gpus: 64\n      parallelism: {tp: 10000000, pp: 10000000}\n").status().message() ==
        "p.yaml:7:20: job 'j': gpus 64 is not divisible by tp*pp = 10000000*10000000 = 100000000000000; choose tp "
        "and pp whose product divides gpus");
  CHECK(parse("      gpus: 128\n      parallelism: {tp: 16, dp: 8, ep: 8}\n").status().message() ==
        "p.yaml:7:20: job 'j': tp*ep = 128 GPUs must fit in one NVLink domain of 72 GPUs (gb200-nvl72)");
  CHECK(parse("      gpus: 64\n      collectives: {tp: 60, dp: 40}\n").status().message() ==
        "p.yaml:7:20: collectives add up to 100% or more of a step; keep their sum below 100");
}

TEST_CASE(
    "validate: cluster.spares.racks leaves a regular rack, keeps its racks out of the jobs' room, not in real mode") {
  auto parse = [](const std::string& cluster, int gpus = 64) {
    std::string text = "name: p\ncluster:\n  model: gb200-nvl72\n" + cluster + "workload:\n  jobs:\n    - name: j\n" +
                       "      gpus: " + std::to_string(gpus) + "\n";
    auto plan = runner::ParsePlan(text, "p.yaml");
    if (!plan.ok()) return Result<runner::RunSpec>(plan.status());
    return runner::ValidatePlan(*plan, {});
  };
  auto ok = parse("  racks: 3\n  spares: {racks: 1}\n");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->spare_racks == 1);
  CHECK(parse("  racks: 3\n").value().spare_racks == 0);
  CHECK(parse("  racks: 2\n  spares: {racks: 2}\n").status().message() ==
        "p.yaml:5:19: spares.racks 2 leaves no regular rack of 2; use at most 1");
  CHECK(parse("  racks: 2\n  spares: {}\n").status().message().rfind("p.yaml:5:11: missing required key 'racks'", 0) ==
        0);
  // Whole NVLink domains, one rule and one message for the cluster's spares and a region's.
  auto nvl36x2 = [&](const std::string& cluster) {
    std::string text = "name: p\ncluster:\n  model: gb200-nvl36x2\n" + cluster +
                       "workload:\n  jobs:\n    - name: j\n      gpus: 36\n";
    auto plan = runner::ParsePlan(text, "p.yaml");
    REQUIRE(plan.ok());
    return runner::ValidatePlan(*plan, {}).status().message();
  };
  CHECK(nvl36x2("  racks: 4\n  spares: {racks: 1}\n") ==
        "p.yaml:5:19: spares.racks 1 splits an NVLink domain: a gb200-nvl36x2 domain spans 2 racks, so spare racks "
        "come in multiples of 2");
  CHECK(nvl36x2("  regions:\n    - {name: east, racks: 4}\n    - {name: west, racks: 4, spares: {racks: 1}}\n") ==
        "p.yaml:6:46: spares.racks 1 splits an NVLink domain: a gb200-nvl36x2 domain spans 2 racks (region 'west'), "
        "so spare racks come in multiples of 2");
  CHECK(parse("  racks: 2\n  spares: {racks: 1}\n", 144).status().message() ==
        "p.yaml:8:7: the jobs ask for 144 GPUs but the cluster has 72 outside its spare trays and spare racks");
  auto real = parse("  racks: 2\n  spares: {racks: 1}\n  inventory: sites/lab.yaml\n");
  REQUIRE_FALSE(real.ok());
  INFO(real.status().message());
  CHECK(real.status().message().rfind("p.yaml:5:19: cluster.spares only applies to simulated runs", 0) == 0);
}

namespace {
Result<runner::RunSpec> ParseCheckpoint(const std::string& checkpoint) {
  auto plan = runner::ParsePlan("name: p\ncluster: {model: gb200-nvl72, spare_trays: 2}\nworkload:\n  jobs:\n"
                                "    - name: j\n      gpus: 8\n      checkpoint: " + checkpoint + "\n", "p.yaml");
  REQUIRE_MESSAGE(plan.ok(), plan.status().message());
  return runner::ValidatePlan(*plan, {});
}
}  // namespace

// Before: validate said ok and each snapshot cancelled the write before it (ETTR 0.89 at 61 s, 0.02 at 59 s).
TEST_CASE("validate: checkpoint timings - an interval not longer than the write is refused at the interval") {
  auto ok = ParseCheckpoint("{interval: 15m, write_time: 1m}");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  // Each snapshot would cancel the write before it: no checkpoint would ever count.
  auto cancelled = ParseCheckpoint("{interval: 59s, write_time: 61s}");
  REQUIRE_FALSE(cancelled.ok());
  CHECK(cancelled.status().message().rfind("p.yaml:7:30: checkpoint.interval 59s is not longer than write_time 1m1s", 0) == 0);
  auto equal = ParseCheckpoint("{write_time: 30s, interval: 30s}");
  REQUIRE_FALSE(equal.ok());
  CHECK(equal.status().message().rfind("p.yaml:7:47: checkpoint.interval 30s", 0) == 0);
  auto by_default = ParseCheckpoint("{interval: 20s}");  // the default write_time is 30s
  REQUIRE_FALSE(by_default.ok());
  CHECK(by_default.status().message().rfind("p.yaml:7:30:", 0) == 0);
}

TEST_CASE("validate: checkpoint.blocking - within the write, refused beyond it at blocking") {
  auto ok = ParseCheckpoint("{interval: 15m, write_time: 1m, blocking: 20s}");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->jobs[0].checkpoint_blocking == Duration::Seconds(20));
  auto blocking = ParseCheckpoint("{interval: 15m, write_time: 1m, blocking: 2m}");
  REQUIRE_FALSE(blocking.ok());
  CHECK(blocking.status().message().rfind("p.yaml:7:61: checkpoint.blocking 2m is out of range: 0 to write_time (1m)", 0) == 0);
}
