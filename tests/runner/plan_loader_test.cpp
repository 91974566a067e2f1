#include "runner/plan/plan_loader.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "core/rng.h"

using namespace rackchaos;
using namespace rackchaos::runner;

namespace {

const std::string kPlans = std::string(RACKCHAOS_SOURCE_DIR) + "/tests/data/plans/";

// The error message for `yaml`, which must fail with kInvalidArgument.
std::string Error(const std::string& yaml) {
  auto plan = ParsePlan(yaml, "plan.yaml");
  if (plan.ok()) return "(parsed fine)";
  CHECK(plan.status().code() == StatusCode::kInvalidArgument);
  CHECK(plan.status().message().find('\n') == std::string::npos);
  return plan.status().message();
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("a complete plan parses into the expected values") {
  auto loaded = LoadPlan(kPlans + "good.yaml");
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  const Plan& plan = loaded.value();
  CHECK(plan.path == kPlans + "good.yaml");
  CHECK(plan.text.find("name: quickstart") != std::string::npos);
  CHECK(plan.name == "quickstart");
  CHECK(plan.description == "one GPU link flaps while a job trains");
  CHECK(plan.seed == 42);
  CHECK(plan.duration == Duration::Hours(6));
  CHECK(plan.cluster.model == "gb200-nvl72");
  CHECK(plan.cluster.racks == 2);
  CHECK(plan.cluster.spare_trays == 2);
  CHECK(plan.cluster.inventory.empty());

  REQUIRE(plan.jobs.size() == 2);
  const JobSpec& job = plan.jobs[0];
  CHECK(job.name == "pretrain");
  CHECK(job.gpus == 64);
  CHECK((job.tp == 4 && job.pp == 4 && job.dp == 4 && job.ep == 1));
  CHECK(job.step_time == Duration::Seconds(6));
  CHECK(job.checkpoint_interval == Duration::Minutes(30));
  CHECK(job.checkpoint_write == Duration::Seconds(40));
  CHECK(job.restart_overhead == Duration::Minutes(5));
  CHECK(job.collective_timeout == Duration::Minutes(10));
  CHECK(job.pos.ToString() == kPlans + "good.yaml:12:7");
  CHECK(plan.jobs[1].dp == 0);                             // absent: validation derives 8 / (2 * 1)
  CHECK(plan.jobs[1].step_time == Duration::Seconds(10));  // default

  REQUIRE(plan.faults.size() == 2);
  const FaultSpec& link = plan.faults[0];
  CHECK(link.at == Duration::Minutes(30));
  CHECK(link.kind == "link_down");
  CHECK(link.target.text == "r01.tray03.gpu2.nvlink5");
  CHECK(link.target.pos.line == 25);
  CHECK(link.target.pos.column == 13);
  CHECK(link.pick == "one");
  CHECK(link.duration == Duration::Minutes(20));
  const FaultSpec& valve = plan.faults[1];
  CHECK(valve.pick == "count:2");
  CHECK(valve.pick_pos.line == 30);
  CHECK_FALSE(valve.duration.has_value());
  REQUIRE(valve.params.size() == 2);
  CHECK(valve.params.at("opening").text == "15%");
  CHECK(valve.params.at("opening").pos.line == 31);
  CHECK(valve.params.at("mode").text == "stuck");

  CHECK(plan.healer.policy == "default");
  REQUIRE(plan.expect.size() == 2);
  CHECK(plan.expect[0].text == "ttr.max < 30m");
  CHECK(plan.expect[1].text == "jobs.lost_steps < 1000");
  CHECK(plan.expect[1].pos.line == 36);
}

TEST_CASE("a minimal plan takes the defaults") {
  auto plan = ParsePlan("name: tiny\n", "tiny.yaml");
  REQUIRE(plan.ok());
  CHECK(plan->seed == 1);
  CHECK_FALSE(plan->duration.has_value());
  CHECK(plan->cluster.racks == 1);
  CHECK(plan->jobs.empty());
  CHECK(plan->faults.empty());
  CHECK(plan->healer.policy == "default");
  CHECK(ParsePlan("name: x\nfaults:\nexpect: []\ncluster: {}\n", "p").ok());
  CHECK(ParsePlan("%YAML 1.2\n---\n# a comment\nname: x\n...\n", "p").ok());
  CHECK(ParsePlan("name: x\nseed: 18446744073709551615\n", "p")->seed == 18446744073709551615ull);
}

TEST_CASE("an unknown key names the valid ones and the nearest") {
  auto plan = LoadPlan(kPlans + "unknown_key.yaml");
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().message() == kPlans +
                                       "unknown_key.yaml:7:1: unknown key 'faultz'; expected one of: name, "
                                       "description, seed, duration, cluster, workload, faults, chaos, healer, safety, expect "
                                       "(did you mean 'faults'?)");
  CHECK(Error("name: x\ncluster:\n  rakcs: 2\n") ==
        "plan.yaml:3:3: unknown key 'rakcs' in cluster; expected one of: model, racks, spare_trays, nvlink_mode, "
        "inventory, spares, regions, region_link_gbytes_per_s, region_link_background_percent, "
        "object_store_gbytes_per_s, fabric "
        "(did you mean 'racks'?)");
  CHECK(Error("name: x\nzzzzzzzzzz: 1\n").find("(did you mean") == std::string::npos);
}

TEST_CASE("a bad duration is reported with its position and the accepted units") {
  auto plan = LoadPlan(kPlans + "bad_duration.yaml");
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().code() == StatusCode::kInvalidArgument);
  const std::string& m = plan.status().message();
  CHECK(StartsWith(m, kPlans + "bad_duration.yaml:6:10: for: '5 parsecs'"));
  CHECK(m.find("accepted units: ms, s, m, h, d, w") != std::string::npos);
}

TEST_CASE("a wrong indent is a YAML syntax error at the right line") {
  auto plan = LoadPlan(kPlans + "wrong_indent.yaml");
  REQUIRE_FALSE(plan.ok());
  CHECK(StartsWith(plan.status().message(), kPlans + "wrong_indent.yaml:4:3: YAML syntax error: "));
  CHECK(StartsWith(Error("name: x\nfaults: [1, 2\nseed: 3\n"), "plan.yaml:3:5: YAML syntax error: "));
}

TEST_CASE("an unknown fault kind is left for validation") {
  auto plan = LoadPlan(kPlans + "unknown_kind.yaml");
  REQUIRE(plan.ok());
  CHECK(plan->faults.at(0).kind == "teleport_gpu");
}

TEST_CASE("each class of content error gives its position and what would be valid") {
  struct Row {
    std::string yaml;
    std::string message;  // the message must start with this
  };
  const std::string job = "name: x\nworkload:\n  jobs:\n    - name: a\n";
  const std::string fault = "name: x\nfaults:\n  - at: 5m\n    kind: link_down\n";
  const Row rows[] = {
      {"", "plan.yaml:1:1: the plan is empty; "},
      {"# nothing here\n\n", "plan.yaml:1:1: the plan is empty; "},
      {"- a\n- b\n", "plan.yaml:1:1: the plan is a list; a plan is a map of keys"},
      {"hello\n", "plan.yaml:1:1: the plan is a scalar; "},
      {"name: x\n---\nname: y\n", "plan.yaml:2:1: a second YAML document starts here; "},
      {"name: x\n...\nseed: 1\n", "plan.yaml:3:1: a second YAML document starts here; "},
      {"seed: 3\n",
       "plan.yaml:1:1: missing required key 'name' in the plan; expected a string (e.g. name: quickstart)"},
      {"name: {a: 1}\n", "plan.yaml:1:7: name: the value is a map; expected a string (e.g. name: quickstart)"},
      {"name:\n", "plan.yaml:1:1: name: the value is empty; expected a string"},
      {"name: x\nname: y\n",
       "plan.yaml:2:1: duplicate key 'name' (first at plan.yaml:1:1); each key may appear once in the plan"},
      {"name: x\ncluster:\n  racks: 1\n  racks: 2\n", "plan.yaml:4:3: duplicate key 'racks' (first at plan.yaml:3:3)"},
      {"name: x\ncluster: 3\n",
       "plan.yaml:2:10: cluster is a scalar; expected a map of keys: model, racks, spare_trays, nvlink_mode, inventory"},
      {"name: x\ncluster: {racks: -1}\n",
       "plan.yaml:2:18: racks: '-1' is out of range; expected an integer from 1 to 100000 (e.g. racks: 2)"},
      {"name: x\ncluster: {racks: 0}\n", "plan.yaml:2:18: racks: '0' is out of range"},
      {"name: x\ncluster: {spare_trays: -2}\n",
       "plan.yaml:2:24: spare_trays: '-2' is out of range; expected an integer from 0 to 1000"},
      {"name: x\nseed: -1\n",
       "plan.yaml:2:7: seed: '-1' is out of range; expected an integer from 0 to 18446744073709551615"},
      {"name: x\nseed: 18446744073709551616\n", "plan.yaml:2:7: seed: '18446744073709551616' is out of range"},
      {"name: x\nseed: lots\n", "plan.yaml:2:7: seed: 'lots' is not a number"},
      {"name: x\nduration: 6 hours\n", "plan.yaml:2:11: duration: '6 hours' has no unit; accepted units: "},
      {"name: x\nduration: 6y\n", "plan.yaml:2:11: duration: '6y': unknown unit 'y'; accepted units: "},
      {"name: x\nduration: -5m\n", "plan.yaml:2:11: duration: '-5m' is negative"},
      {"name: x\nworkload: {jobs: [{gpus: 8}]}\n", "plan.yaml:2:19: missing required key 'name' in workload.jobs[0]; "},
      {"name: x\nworkload:\n  jobs:\n    - name: a\n",
       "plan.yaml:4:7: missing required key 'gpus' in workload.jobs[0]; expected an integer from 1 to 10000000 (e.g. "
       "gpus: 64)"},
      {"name: x\nworkload:\n  jobs:\n    - 5\n",
       "plan.yaml:4:7: workload.jobs[0] is a scalar; expected a map of keys: name, gpus, "},
      {"name: x\nworkload: {jobs: {a: 1}}\n", "plan.yaml:2:18: jobs: the value is a map; expected a list"},
      {job + "      gpus: many\n",
       "plan.yaml:5:13: gpus: 'many' is not a number; expected an integer from 1 to 10000000 (e.g. gpus: 64)"},
      {job + "      gpus: 6.5\n", "plan.yaml:5:13: gpus: '6.5' is not a whole number"},
      {job + "      gpus: 1000000000000000000000000000000\n",
       "plan.yaml:5:13: gpus: '1000000000000000000000000000000' is out of range"},
      {job + "      gpus: 1e30\n", "plan.yaml:5:13: gpus: '1e30' is out of range"},
      {job + "      gpus: .nan\n", "plan.yaml:5:13: gpus: '.nan' is not a number"},
      {job + "      gpus: [1]\n", "plan.yaml:5:13: gpus: the value is a list; expected an integer"},
      {job + "      gpus: 64\n      parallelism: {tq: 4}\n",
       "plan.yaml:6:21: unknown key 'tq' in workload.jobs[0].parallelism; expected one of: tp, pp, dp, ep (did you "
       "mean 'tp'?)"},
      {job + "      gpus: 8\n      checkpoint: {interval: often}\n",
       "plan.yaml:6:30: interval: 'often' is not a duration; "},
      {job + "      gpus: 8\n    - name: a\n      gpus: 8\n",
       "plan.yaml:6:7: duplicate job name 'a' (first at plan.yaml:4:7); job names must be unique"},
      {"name: x\nfaults:\n  - 5m\n",
       "plan.yaml:3:5: faults[0] is a scalar; expected a map of keys: at, kind, target, pick, for, params"},
      {"name: x\nfaults:\n  - kind: link_down\n    target: r01\n",
       "plan.yaml:3:5: missing required key 'at' in faults[0]; expected a duration"},
      {fault + "    target: r01.tray[4-1]\n",
       "plan.yaml:5:13: target: 'r01.tray[4-1]': range '4-1' is backwards; accepted forms: "},
      {fault + "    target: r01.tray03\n    pick: some\n",
       "plan.yaml:6:11: pick: 'some' is not a pick mode; accepted: one, all, count:N"},
      {fault + "    target: r01.tray03\n    for: 5 parsecs\n",
       "plan.yaml:6:10: for: '5 parsecs' has no unit; accepted units: "},
      {fault + "    target: r01.tray03\n    params: {opening: [1, 2]}\n",
       "plan.yaml:6:23: opening: the value is a list; expected a scalar value"},
      {fault + "    target: r01.tray03\n    params: {a: 1, a: 2}\n",
       "plan.yaml:6:20: duplicate key 'a' (first at plan.yaml:6:14)"},
      {fault + "    target: r01.tray03\n    params: 5\n",
       "plan.yaml:6:13: faults[0].params is a scalar; expected a map"},
      {"name: x\nexpect: [[1]]\n", "plan.yaml:2:10: expect[0]: the value is a list; expected a scalar value"},
      {"name: x\nexpect: ['']\n", "plan.yaml:2:10: expect[0] is empty; "},
      {"name: x\nexpect: [{gate: 'ttr.max < 1m', continuous: 1}]\n",
       "plan.yaml:2:45: continuous: '1' is not a boolean; expected true or false (e.g. continuous: true)"},
      {"name: x\nexpect: [{continuous: true}]\n", "plan.yaml:2:10: missing required key 'gate' in expect[0]"},
      {"name: x\nsafety: {abort: {jobs_down: -1}}\n",
       "plan.yaml:2:29: jobs_down: '-1' is out of range; expected an integer from 0 to 1000000"},
      {"name: x\nhealer: {polcy: default}\n",
       "plan.yaml:2:10: unknown key 'polcy' in healer; expected one of: policy (did you mean 'policy'?)"},
      {"? [a, b]\n: 1\nname: x\n", "plan.yaml:1:3: a key in the plan is not a plain word"},
      {"name: x\ncluster:\n\tracks: 1\n", "plan.yaml:3:7: YAML syntax error: "},
  };
  for (const Row& row : rows) {
    CAPTURE(row.yaml);
    std::string message = Error(row.yaml);
    CHECK_MESSAGE(StartsWith(message, row.message), message);
  }
}

TEST_CASE("every example in the key table is accepted") {
  for (const KeyInfo& k : PlanKeys()) {
    CAPTURE(k.section);
    CAPTURE(k.key);
    const std::string entry = std::string(k.key) + ": " + std::string(k.example) + "\n";
    std::string yaml;
    if (k.section.empty())
      yaml = (k.key == "name" ? "" : "name: x\n") + entry;
    else if (k.section == "cluster" || k.section == "healer" || k.section == "workload")
      yaml = "name: x\n" + std::string(k.section) + ":\n  " + entry;
    else if (k.section == "safety")
      yaml = "name: x\nsafety:\n  " + entry;
    else if (k.section == "safety.abort")
      yaml = "name: x\nsafety:\n  abort:\n    " + entry;
    else if (k.section == "expect[]")
      yaml = "name: x\nexpect:\n  - " + (k.key == "gate" ? std::string() : "gate: \"ttr.max < 1m\"\n    ") + entry;
    else if (k.section == "chaos")
      yaml = "name: x\nchaos:\n  " + (k.key == "catalogue" ? std::string() : "catalogue: llama3\n  ") + entry;
    else if (k.section == "cluster.fabric")
      yaml = "name: x\ncluster:\n  fabric:\n    " + entry;
    else if (k.section == "cluster.spares")
      yaml = "name: x\ncluster:\n  racks: 2\n  spares:\n    " + entry;
    else if (k.section == "cluster.regions[]")
      yaml = std::string("name: x\ncluster:\n  regions:\n    - ") + (k.key == "name" ? "" : "name: east\n      ") +
             (k.key == "racks" ? "" : "racks: 2\n      ") + entry;
    else if (k.section == "cluster.regions[].spares")
      yaml = "name: x\ncluster:\n  regions:\n    - name: east\n      racks: 2\n      spares:\n        " + entry;
    else if (k.section == "chaos.classes")
      yaml = "name: x\nchaos:\n  catalogue: llama3\n  classes:\n    " + entry;
    else if (k.section == "chaos.rates.NAME")
      yaml = "name: x\nchaos:\n  catalogue: llama3\n  rates:\n    gpu:\n      " + entry;
    else if (k.section == "workload.jobs[]")
      yaml = std::string("name: x\nworkload:\n  jobs:\n    - ") + (k.key == "name" ? "" : "name: j\n      ") +
             (k.key == "gpus" ? "" : "gpus: 64\n      ") + entry;
    else if (k.section == "faults[]")
      yaml = "name: x\nfaults:\n  - at: 1m\n    kind: k\n    target: r01\n    " + (k.required ? std::string() : entry);
    else
      yaml = "name: x\nworkload: {jobs: [{name: j, gpus: 4, " + std::string(k.section.substr(16)) + ": {" +
             std::string(k.key) + ": " + std::string(k.example) + "}}]}\n";
    auto plan = ParsePlan(yaml, "p.yaml");
    CHECK_MESSAGE(plan.ok(), plan.status().message());
    CHECK(!DescribeType(k).empty());
  }
}

TEST_CASE("plan loader: each key of parallelism and collectives sets its own member and no other") {
  int keys = 0;
  for (const KeyInfo& k : PlanKeys()) {
    const bool degree = k.section == "workload.jobs[].parallelism";
    if (!degree && k.section != "workload.jobs[].collectives") continue;
    CAPTURE(k.section);
    CAPTURE(k.key);
    ++keys;
    const std::string yaml = "name: x\nworkload: {jobs: [{name: j, gpus: 7, " +
                             std::string(degree ? "parallelism" : "collectives") + ": {" + std::string(k.key) +
                             ": 7}}]}\n";
    auto plan = ParsePlan(yaml, "p.yaml");
    REQUIRE_MESSAGE(plan.ok(), plan.status().message());
    const JobSpec& j = plan->jobs.at(0);
    const std::map<std::string, std::pair<int, int>> members =  // key: (value, default)
        degree ? std::map<std::string, std::pair<int, int>>{{"tp", {j.tp, 1}}, {"pp", {j.pp, 1}}, {"dp", {j.dp, 0}},
                                                           {"ep", {j.ep, 1}}}
               : std::map<std::string, std::pair<int, int>>{{"tp", {j.tp_pct, -1}}, {"dp", {j.dp_pct, -1}},
                                                           {"ep", {j.ep_pct, -1}}, {"pp", {j.pp_pct, -1}}};
    REQUIRE(members.count(std::string(k.key)) == 1);
    for (const auto& [key, value] : members) CHECK(value.first == (key == k.key ? 7 : value.second));
  }
  CHECK(keys == 8);
}

TEST_CASE("files that cannot be read are reported with their path") {
  auto missing = LoadPlan(kPlans + "no_such_plan.yaml");
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("no_such_plan.yaml") != std::string::npos);
  CHECK(LoadPlan(kPlans).status().code() == StatusCode::kIoError);
}

// ---- Hostile input: each must fail quickly with an error, never crash or hang ----

namespace {

double SecondsToParse(const std::string& text, Status& status) {
  auto start = std::chrono::steady_clock::now();
  status = ParsePlan(text, "evil.yaml").status();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("deep nesting is refused before yaml-cpp recurses") {
  Status status;
  CHECK(SecondsToParse(std::string(100000, '['), status) < 2);
  CHECK(StartsWith(status.message(), "evil.yaml:1:64: nesting is deeper than 64 levels"));
  CHECK(SecondsToParse("name: x\nexpect: " + std::string(100000, '{'), status) < 2);
  CHECK(status.message().find("nesting is deeper") != std::string::npos);

  std::string block = "name: x\n";
  for (int i = 0; i < 100; ++i) block += std::string(i, ' ') + "k" + std::to_string(i) + ":\n";
  CHECK(SecondsToParse(block, status) < 2);
  CHECK(status.message().find("nesting is deeper") != std::string::npos);
  std::string dashes = "name: x\nexpect:\n";
  for (int i = 0; i < 100; ++i) dashes += "- ";
  CHECK(SecondsToParse(dashes + "a\n", status) < 2);
  CHECK(status.message().find("nesting is deeper") != std::string::npos);
  // Brackets inside quotes, comments and plain scalars do not count.
  CHECK(ParsePlan("name: '" + std::string(200, '[') + "'  # " + std::string(200, '{') +
                      "\nfaults:\n  - {at: 1m, kind: k, target: 'r*.tray[01-02]'}\n"
                      "  - at: 2m\n    kind: k\n    target: r01.tray[01-02]\n",
                  "ok.yaml")
            .ok());
}

TEST_CASE("an alias bomb does not explode the walk") {
  std::string bomb =
      "name: lol\nanchors: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n";
  std::string previous = "a";
  for (char c : std::string("bcdefghi")) {
    bomb += std::string("x") + c + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ", *" : "*") + previous;
    bomb += "]\n";
    previous = std::string(1, c);
  }
  Status status;
  CHECK(SecondsToParse(bomb, status) < 2);
  CHECK(StartsWith(status.message(), "evil.yaml:2:1: unknown key 'anchors'"));
  // Under keys the loader does walk, the shape check stops at the first nested list.
  std::string walked = bomb.substr(0, bomb.find("anchors")) + "expect: &a [\"lol\", \"lol\"]\n";
  previous = "a";
  for (char c : std::string("bcdefghi")) {
    walked += std::string("faults") + ": &" + c + " [*" + previous + ", *" + previous + "]\n";
    previous = std::string(1, c);
  }
  CHECK(SecondsToParse(walked, status) < 2);
  CHECK_FALSE(status.ok());
}

TEST_CASE("huge files are refused before parsing") {
  const std::string big_text(20u << 20, '#');
  Status status;
  CHECK(SecondsToParse(big_text, status) < 2);
  CHECK(status.message().find("bytes; a plan is at most 16 MiB") != std::string::npos);

  const std::string path = std::string(RACKCHAOS_BINARY_DIR) + "/runner_tests_big_plan.yaml";
  {
    std::ofstream out(path, std::ios::binary);
    out << "name: big\n" << big_text;
  }
  auto big = LoadPlan(path);
  CHECK(big.status().code() == StatusCode::kIoError);
  CHECK(big.status().message().find(path) != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("binary junk and random YAML punctuation are errors, not crashes") {
  Rng rng(2024);
  for (int round = 0; round < 20; ++round) {
    std::string junk(4096, '\0');
    for (char& c : junk) c = static_cast<char>(rng.Below(256));
    Status status;
    CHECK(SecondsToParse(junk, status) < 2);
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK(status.message().find("is not text") != std::string::npos);
  }
  // Text that passes the byte check exercises yaml-cpp itself: any outcome but a crash is fine.
  const std::string alphabet = "[]{}:-,&*!|>'\"%@`?# \n\n  abc19.";
  for (int round = 0; round < 300; ++round) {
    std::string text(1 + rng.Below(400), ' ');
    for (char& c : text) c = alphabet[rng.Below(alphabet.size())];
    auto plan = ParsePlan(text, "fuzz.yaml");
    if (!plan.ok()) CHECK(StartsWith(plan.status().message(), "fuzz.yaml"));
  }
}
