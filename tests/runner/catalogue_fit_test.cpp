// `rackchaos catalogue fit` (issue 22 item 2): the exact Poisson interval, what the sample logs in
// tests/data/catalogue_fit/ count as failures, and the fitted file run as a plan's catalogue on the simulator.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "cluster/failure_catalogue.h"
#include "runner/incident/importer.h"
#include "runner/incident/log_line.h"
#include "runner/replay/catalogue_fit.h"
#include "runner/replay/poisson_interval.h"
#include "tests/runner/run_fixture.h"

using namespace rackchaos;
using runner::testing::TempDir;

namespace {

const std::string kData = std::string(RACKCHAOS_SOURCE_DIR) + "/tests/data/catalogue_fit/";

// The sample: two GB200 NVL72 racks (144 GPUs, 144 NICs, 36 trays) in January 2026.
runner::FitOptions SampleOptions() {
  runner::FitOptions o;
  o.name = "site";
  o.source = "the sample logs";
  o.since = *incident::ParseIsoTime("2026-01-01T00:00:00Z");
  o.until = *incident::ParseIsoTime("2026-02-01T00:00:00Z");
  o.components[0] = 144;
  o.components[1] = 144;
  o.components[2] = 36;
  return o;
}

runner::CatalogueFit FitSample() {
  incident::IncidentImporter importer;
  for (const char* f : {"kernel.log", "slurmctld.log", "sacctmgr_events.txt"}) REQUIRE(importer.ImportFile(kData + f).ok());
  return runner::FitCatalogue(importer.Finish(), SampleOptions());
}

}  // namespace

TEST_CASE("catalogue fit: the exact Poisson interval (chi-square quantiles)") {
  // Garwood intervals, as tabulated (e.g. Ulm 1990; R's poisson.test).
  const std::pair<int, std::pair<double, double>> kTable[] = {
      {0, {0, 3.688879}}, {1, {0.025318, 5.571643}}, {5, {1.623486, 11.668332}}, {10, {4.795389, 18.390356}},
      {100, {81.363876, 121.627207}}};
  for (const auto& [k, bounds] : kTable) {
    CAPTURE(k);
    const runner::PoissonInterval ci = runner::PoissonMeanInterval(k);
    CHECK(ci.low == doctest::Approx(bounds.first).epsilon(1e-5));
    CHECK(ci.high == doctest::Approx(bounds.second).epsilon(1e-5));
  }
  CHECK(runner::RegularizedGammaP(1, 1) == doctest::Approx(1 - std::exp(-1.0)));
}

TEST_CASE("catalogue fit: the sample logs' failures per cause, what is not classified, and the warnings") {
  const runner::CatalogueFit fit = FitSample();
  std::map<std::string, int> events;
  for (const runner::FitCause& c : fit.causes) events[c.cause.name] = *c.cause.events;
  const std::map<std::string, int> want = {
      {"Xid 79: GPU has fallen off the bus", 5},  // a repeat 5 s later on the same GPU is one failure
      {"Xid 48: Double-bit ECC error", 2},        {"Xid 13: Graphics engine exception", 2},
      {"NIC link down", 3},                       {"host maintenance", 3},  // two slurmctld, one sacctmgr
      {"node not responding", 3},                 {"power supply", 1},
      {"SSD", 1}};
  CHECK(events == want);
  CHECK(fit.failures == 20);
  CHECK(fit.outside_window == 1);  // the Xid of February 3
  CHECK(fit.component_days[0] == doctest::Approx(144 * 31));
  CHECK(fit.component_days[2] == doctest::Approx(36 * 31));

  // Xid 79: 5 events over 4464 GPU-days, the interval [1.6235, 11.668] / 4464.
  const runner::FitCause& xid79 = fit.causes.front();
  CHECK(xid79.cause.name == "Xid 79: GPU has fallen off the bus");
  CHECK(xid79.cause.rate_per_hour * 24 == doctest::Approx(5.0 / 4464));
  CHECK(*xid79.cause.interval_low == doctest::Approx(1.623486 / 4464).epsilon(1e-4));
  CHECK(*xid79.cause.interval_high == doctest::Approx(11.668332 / 4464).epsilon(1e-4));
  CHECK(xid79.cause.injector == "gpu_fail");
  CHECK(xid79.cause.xid == 79);
  CHECK(xid79.repair_measured);
  CHECK(xid79.repairs_seen == 2);  // the drained hosts' resumes; the others were not drained in the logs

  std::set<std::string> unclassified;
  for (const auto& n : fit.unclassified) unclassified.insert(n.what);
  CHECK(unclassified == std::set<std::string>{"SXid 12028 (NVSwitch): no catalogue class for switches",
                                              "Slurm drain reason 'Kill task failed': names no part",
                                              "Xid 74: an NVLink error; no catalogue class for NVLink"});
  // The drains right after an Xid on their host are its consequence, not three more failures.
  bool consequences = false;
  for (const auto& n : fit.not_failures)
    if (n.what.starts_with("drain or down within the hour") && n.count == 3) consequences = true;
  CHECK(consequences);

  int few = 0;
  for (const std::string& w : fit.warnings) few += w.find("too few to fit") != std::string::npos;
  CHECK(few == 4);  // Xid 48, Xid 13 (2 each), power supply, SSD (1 each)
}

TEST_CASE("catalogue fit: the fitted file runs as a plan's chaos.catalogue and draws the fitted causes") {
  const runner::CatalogueFit fit = FitSample();
  TempDir dir("catalogue-fit");
  std::ofstream(dir.path / "site.yaml") << runner::FittedCatalogueYaml(fit, SampleOptions());
  const auto plan_path = (dir.path / "plan.yaml").string();
  std::ofstream(plan_path) << "name: fitted\nseed: 5\nduration: 14d\n"
                              "cluster: {model: gb200-nvl72, racks: 2}\n"
                              "workload: {jobs: [{name: train, gpus: 128, step_time: 5s}]}\n"
                              "chaos: {catalogue: site.yaml, scale: 4}\n";
  auto plan = runner::LoadPlan(plan_path);
  REQUIRE(plan.ok());
  auto spec = runner::ValidatePlan(*plan, {});
  REQUIRE_MESSAGE(spec.ok(), spec.status().ToString());

  std::map<std::string, const cluster::FailureCause*> fitted;
  for (const runner::FitCause& c : fit.causes) fitted["chaos site: " + c.cause.name] = &c.cause;
  std::set<std::string> classes, causes;
  for (const runner::ResolvedFault& f : spec->faults) {
    CAPTURE(f.selector);
    REQUIRE(fitted.count(f.selector) == 1);  // every draw is a fitted cause
    const cluster::FailureCause& c = *fitted[f.selector];
    CHECK(f.injector->name() == c.injector);
    const cluster::Kind kind = spec->topology.at(f.target.component).kind;
    CHECK(kind == (c.cls == cluster::FailureClass::kGpu   ? cluster::Kind::kGpu
                   : c.cls == cluster::FailureClass::kNic ? cluster::Kind::kNic
                                                          : cluster::Kind::kComputeTray));
    if (c.xid) CHECK(f.params.at("xid") == c.xid);
    classes.insert(cluster::FailureClassName(c.cls));
    causes.insert(f.selector);
  }
  // 4x the fitted rates over 14 days: about 23 GPU, 4 NIC and 14 node failures expected.
  CHECK(classes == std::set<std::string>{"gpu", "nic", "node"});
  CHECK(causes.size() >= 4);

  // And on the simulator: every drawn fault is injected and stored with the run.
  const std::string db = (dir.path / "fit.db").string();
  runner::RunOutcome out = runner::testing::RunPlanFile(plan_path, db, 5);
  REQUIRE(out.run_id > 0);
  CHECK(runner::testing::QueryNumber(db, "select count(distinct fault_id) from faults where selector like 'chaos site: %'") ==
        static_cast<double>(spec->faults.size()));
}
