// Failure catalogues: the shipped Llama 3 table, per-class Weibull shapes, and the time-to-failure draw.
#include "cluster/failure_catalogue.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

namespace rackchaos::cluster {
namespace {

const char* const kTwoCauses = R"(name: t
source: test
reference: {gpus: 64, gpus_per_node: 8, days: 10}
shape: {gpu: 0.7, node: 2}
causes:
  - {name: faulty GPU, count: 6, class: gpu, injector: gpu_fail, xid: 79, repair: 4h}
  - {name: host maintenance, count: 2, class: node, injector: tray_pull, repair: 2h}
)";

TEST_CASE("chaos.catalogue: llama3 has the 419 interruptions of Table 5 and exponential classes") {
  auto c = LoadFailureCatalogue("llama3");
  REQUIRE(c.ok());
  int total = 0;
  for (const FailureCause& f : c->causes) total += f.count;
  CHECK(total == 419);
  CHECK(c->causes.size() == 18);
  for (FailureClass cls : {FailureClass::kGpu, FailureClass::kNic, FailureClass::kNode}) CHECK(c->ShapeOf(cls) == 1);
}

TEST_CASE("chaos.catalogue: shapes are read per class, default 1, and must be positive") {
  auto c = ParseFailureCatalogue(kTwoCauses, "t.yaml");
  REQUIRE(c.ok());
  CHECK(c->ShapeOf(FailureClass::kGpu) == 0.7);
  CHECK(c->ShapeOf(FailureClass::kNic) == 1);
  CHECK(c->ShapeOf(FailureClass::kNode) == 2);
  std::string bad = kTwoCauses;
  bad.replace(bad.find("gpu: 0.7"), 8, "gpu: 0");
  auto b = ParseFailureCatalogue(bad, "t.yaml");
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().message() == "t.yaml:4:14: shape.gpu must be above 0 and at most 20 (1 = exponential)");
}

// Mean and coefficient of variation of n draws.
std::pair<double, double> Moments(double rate, double shape, int n) {
  Rng rng(7);
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    double x = HoursToNextFailure(rng, rate, shape);
    sum += x;
    sq += x * x;
  }
  double mean = sum / n;
  return {mean, std::sqrt(sq / n - mean * mean) / mean};
}

TEST_CASE("chaos.catalogue: Weibull times to failure keep the class's mean rate, and shape sets their spread") {
  // Shape 1 is the exponential draw itself, so catalogues without shapes replay exactly as before.
  Rng a(3), b(3);
  for (int i = 0; i < 100; ++i) CHECK(HoursToNextFailure(a, 0.01, 1) == b.Exponential(0.01));
  const double rate = 1.0 / 500;  // one failure per 500 h
  for (double shape : {0.7, 1.0, 2.0}) {
    auto [mean, cv] = Moments(rate, shape, 40000);
    INFO("shape ", shape);
    CHECK(mean == doctest::Approx(500).epsilon(0.03));
    // CV of a Weibull: sqrt(G(1 + 2/k) / G(1 + 1/k)^2 - 1): 1.46 at 0.7, 1 at 1, 0.52 at 2.
    double want = std::sqrt(std::tgamma(1 + 2 / shape) / std::pow(std::tgamma(1 + 1 / shape), 2) - 1);
    CHECK(cv == doctest::Approx(want).epsilon(0.05));
  }
}

TEST_CASE("chaos.catalogue: burn-in takes llama3's counts and sets shapes below 1 for GPUs and nodes") {
  auto llama = LoadFailureCatalogue("llama3");
  auto c = LoadFailureCatalogue("burn-in");
  REQUIRE(llama.ok());
  REQUIRE(c.ok());
  CHECK(c->name == "burn-in");
  REQUIRE(c->causes.size() == llama->causes.size());
  for (size_t i = 0; i < c->causes.size(); ++i) {
    CHECK(c->causes[i].name == llama->causes[i].name);
    CHECK(c->causes[i].rate_per_hour == llama->causes[i].rate_per_hour);
  }
  CHECK(c->ShapeOf(FailureClass::kGpu) == 0.7);
  CHECK(c->ShapeOf(FailureClass::kNic) == 1);
  CHECK(c->ShapeOf(FailureClass::kNode) == 0.8);
  // Infant mortality: at the same mean, shape 0.7 puts 1 - exp(-(0.1 G(1 + 1/0.7))^0.7) = 21% of the
  // times to failure below a tenth of the mean, against 1 - exp(-0.1) = 9.5% for the exponential.
  Rng rng(5);
  int early = 0;
  for (int i = 0; i < 20000; ++i) early += HoursToNextFailure(rng, 1.0 / 500, c->ShapeOf(FailureClass::kGpu)) < 50;
  CHECK(early / 20000.0 == doctest::Approx(1 - std::exp(-std::pow(0.1 * std::tgamma(1 + 1 / 0.7), 0.7))).epsilon(0.05));
  CHECK(early / 20000.0 > 0.18);
  // counts_from must name another shipped catalogue.
  auto self = ParseFailureCatalogue("name: x\nsource: s\ncounts_from: x\n", "x.yaml");
  REQUIRE_FALSE(self.ok());
  CHECK(self.status().message() == "x.yaml:3:14: counts_from names no other shipped catalogue: 'x'");
  // A file that takes another's counts cannot also list its own: they would be ignored.
  auto both = ParseFailureCatalogue("name: x\nsource: s\ncounts_from: llama3\ncauses: []\n", "x.yaml");
  REQUIRE_FALSE(both.ok());
  CHECK(both.status().message() == "x.yaml:4:1: causes comes from counts_from's catalogue; leave it out here");
  // Keys are checked as everywhere else: a misspelt one is refused, not ignored.
  auto typo = ParseFailureCatalogue(std::string(kTwoCauses) + "shapes: {gpu: 2}\n", "t.yaml");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.status().message().find("unknown key 'shapes'") != std::string::npos);
}

}  // namespace
}  // namespace rackchaos::cluster

namespace rackchaos::cluster {
namespace {

TEST_CASE("chaos.catalogue: a cause's rate as a count with a reference, per component-day or as an MTBF") {
  auto c = ParseFailureCatalogue(R"(name: t
source: test
reference: {gpus: 64, gpus_per_node: 8, days: 10}
causes:
  - {name: counted, count: 64, class: node, injector: tray_pull, repair: 2h}
  - {name: daily, rate: 0.25, class: gpu, injector: gpu_fail, repair: 4h, events: 3, interval: [0.1, 0.7]}
  - {name: yearly, mtbf: 365d, class: nic, injector: link_down, repair: 30m}
)", "t.yaml");
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  REQUIRE(c->causes.size() == 3);
  CHECK(c->causes[0].rate_per_hour * 24 == doctest::Approx(64.0 / (8 * 10)));  // 8 nodes x 10 days
  CHECK(c->causes[1].rate_per_hour * 24 == doctest::Approx(0.25));
  CHECK(*c->causes[1].events == 3);
  CHECK(*c->causes[1].interval_high == 0.7);
  CHECK(c->causes[2].rate_per_hour * 24 * 365 == doctest::Approx(1));
  CHECK(c->ClassRatePerHour(FailureClass::kGpu) == c->causes[1].rate_per_hour);
}

TEST_CASE("chaos.catalogue: a rate given twice, none, or a count without a reference is refused at its place") {
  auto message = [](const std::string& cause, bool reference = true) {
    auto c = ParseFailureCatalogue(std::string("name: t\nsource: s\n") +
                                       (reference ? "reference: {gpus: 8, gpus_per_node: 8, days: 1}\n" : "") +
                                       "causes:\n  - " + cause + "\n",
                                   "t.yaml");
    return c.ok() ? std::string("ok") : c.status().message();
  };
  CHECK(message("{name: a, count: 1, rate: 0.1, class: gpu, injector: gpu_fail, repair: 1h}") ==
        "t.yaml:5:25: causes[0]: give one of count, rate and mtbf, not two");
  CHECK(message("{name: a, class: gpu, injector: gpu_fail, repair: 1h}") ==
        "t.yaml:5:5: causes[0]: give the cause's rate as count, rate or mtbf (e.g. rate: 0.00067)");
  CHECK(message("{name: a, count: 3, class: gpu, injector: gpu_fail, repair: 1h}", false) ==
        "t.yaml:4:5: causes[0] gives a count, which needs reference: {gpus, gpus_per_node, days}");
  CHECK(message("{name: a, mtbf: 0s, class: gpu, injector: gpu_fail, repair: 1h}") ==
        "t.yaml:5:21: causes[0].mtbf must be longer than 0s (e.g. 1500d)");
  CHECK(message("{name: a, rate: 0.1, class: gpu, injector: gpu_fail, repair: 1h, interval: [0.2, 0.1]}") ==
        "t.yaml:5:80: causes[0].interval must be two numbers, low then high, e.g. [0.00031, 0.0012]");
  CHECK(message("{name: a, rate: 0.1, class: gpu, injector: gpu_fail, repair: 1h, colour: red}") ==
        "t.yaml:5:70: unknown key 'colour' in causes[0]; expected one of: name, count, rate, mtbf, class, injector, "
        "xid, repair, events, interval");
}

TEST_CASE("chaos.catalogue: a path is read as a file, a shipped name from the binary") {
  CHECK(IsCataloguePath("site.yaml"));
  CHECK(IsCataloguePath("catalogues/site"));
  CHECK_FALSE(IsCataloguePath("llama3"));
  auto missing = LoadFailureCatalogue("/nonexistent/site.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  auto unknown = LoadFailureCatalogue("llama4");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message() ==
        "unknown failure catalogue 'llama4'; known: burn-in, llama3, or a catalogue file (a path ending in .yaml, "
        "docs/catalogue.md)");
}

}  // namespace
}  // namespace rackchaos::cluster
