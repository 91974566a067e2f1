// `rackchaos catalogue fit` (issue 22 item 2): the exact Poisson interval, what the sample logs in
// tests/data/catalogue_fit/ count as failures, and the fitted file run as a plan's catalogue on the simulator.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "cluster/failure_catalogue.h"
#include "runner/cli/catalogue_cmd.h"
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
    const cluster::Kind kind = spec->topology->at(f.target.component).kind;
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

namespace {

// A kernel log with known counts in January 2026 on 31 hosts: 10 NIC link downs (each up again 90 minutes
// later), 3 Xid 48 and 2 Xid 79 on different hosts, and one link down in February (outside the window).
std::string KnownCountsLog() {
  std::string log;
  auto line = [&](int day, const char* hhmm, int host, const std::string& text) {
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "2026-%s-%02dT%s:00+00:00 node%02d kernel: ", day > 31 ? "02" : "01",
                  day > 31 ? day - 31 : day, hhmm, host);
    log += stamp + text + "\n";
  };
  for (int i = 1; i <= 10; ++i) {
    line(i, "10:00", i, "mlx5_core 0000:1a:00.0 ibp26s0: Link down");
    line(i, "11:30", i, "mlx5_core 0000:1a:00.0 ibp26s0: Link up");
  }
  for (int i = 11; i <= 13; ++i)
    line(i, "08:00", i, "NVRM: Xid (PCI:0000:9b:00): 48, pid=1, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.");
  for (int i = 14; i <= 15; ++i)
    line(i, "08:00", i, "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.");
  line(34, "10:00", 20, "mlx5_core 0000:1a:00.0 ibp26s0: Link down");
  return log;
}

}  // namespace

TEST_CASE("catalogue fit: known counts give count / exposure and the Garwood interval; few events and empty classes warn") {
  TempDir dir("catalogue-fit-known");
  std::ofstream(dir.path / "kernel.log") << KnownCountsLog();
  incident::IncidentImporter importer;
  REQUIRE(importer.ImportFile((dir.path / "kernel.log").string()).ok());
  runner::FitOptions o = SampleOptions();
  o.components[0] = 100;  // GPUs: 3100 GPU-days
  o.components[1] = 50;   // NICs: 1550 NIC-days
  o.components[2] = 25;   // trays: 775 tray-days
  const runner::CatalogueFit fit = runner::FitCatalogue(importer.Finish(), o);

  CHECK(fit.failures == 15);
  CHECK(fit.outside_window == 1);
  std::map<std::string, const runner::FitCause*> by_name;
  for (const runner::FitCause& c : fit.causes) by_name[c.cause.name] = &c;
  REQUIRE(by_name.size() == 3);
  // {name, events, exposure, the 95% interval in events (R: poisson.test(k)$conf.int)}
  struct Want {
    const char* name;
    int k;
    double exposure, low, high;
  };
  for (const Want& w : {Want{"NIC link down", 10, 1550, 4.795389, 18.390356},
                        Want{"Xid 48: Double-bit ECC error", 3, 3100, 0.618672, 8.767273},
                        Want{"Xid 79: GPU has fallen off the bus", 2, 3100, 0.242209, 7.224688}}) {
    CAPTURE(w.name);
    REQUIRE(by_name.count(w.name) == 1);
    const cluster::FailureCause& c = by_name[w.name]->cause;
    CHECK(*c.events == w.k);
    CHECK(c.rate_per_hour * 24 == doctest::Approx(w.k / w.exposure));
    CHECK(*c.interval_low == doctest::Approx(w.low / w.exposure).epsilon(1e-5));
    CHECK(*c.interval_high == doctest::Approx(w.high / w.exposure).epsilon(1e-5));
  }
  // The link's repair is measured (90 minutes, ten times); the GPUs' hosts never resume in this log.
  CHECK(by_name["NIC link down"]->repair_measured);
  CHECK(by_name["NIC link down"]->repairs_seen == 10);
  CHECK(by_name["NIC link down"]->cause.repair == Duration::Minutes(90));
  CHECK_FALSE(by_name["Xid 79: GPU has fallen off the bus"]->repair_measured);
  CHECK(by_name["Xid 79: GPU has fallen off the bus"]->cause.repair == Duration::Hours(4));

  // Warnings: the 2-event cause (not the 3-event one), and the node class with no failure at 3.69 / 775.
  std::vector<std::string> few, empty;
  for (const std::string& w : fit.warnings) {
    if (w.find("too few to fit") != std::string::npos) few.push_back(w);
    if (w.starts_with("no ")) empty.push_back(w);
  }
  REQUIRE(few.size() == 1);
  CHECK(few[0].find("'Xid 79: GPU has fallen off the bus': 2 event(s)") != std::string::npos);
  REQUIRE(empty.size() == 1);
  CHECK(empty[0].find("no node failure in the window") == 0);
  CHECK(empty[0].find("the 95% upper bound is 0.00476 per component-day") != std::string::npos);  // 3.689 / 775
}

TEST_CASE("catalogue fit: the file `catalogue fit -o` writes reads back with the fitted rates and runs the same twice") {
  TempDir dir("catalogue-fit-roundtrip");
  runner::CatalogueFitArgs args;
  for (const char* f : {"kernel.log", "slurmctld.log", "sacctmgr_events.txt"}) args.logs.push_back(kData + f);
  args.cluster = kData + "cluster.yaml";
  args.since = "2026-01-01T00:00:00Z";
  args.until = "2026-02-01T00:00:00Z";
  args.output = (dir.path / "site.yaml").string();
  REQUIRE(runner::CmdCatalogueFit(args) == 0);

  auto back = cluster::LoadFailureCatalogue(args.output);
  REQUIRE_MESSAGE(back.ok(), back.status().ToString());
  const runner::CatalogueFit fit = FitSample();
  CHECK(back->name == "site");
  CHECK(back->source.find("gb200-nvl72 x2 (144 GPUs, 144 NICs, 36 trays)") != std::string::npos);
  REQUIRE(back->causes.size() == fit.causes.size());
  for (size_t i = 0; i < fit.causes.size(); ++i) {
    const cluster::FailureCause &want = fit.causes[i].cause, &have = back->causes[i];
    CAPTURE(want.name);
    CHECK(have.name == want.name);
    CHECK(have.cls == want.cls);
    CHECK(have.injector == want.injector);
    CHECK(have.xid == want.xid);
    CHECK(have.repair == want.repair);
    CHECK(*have.events == *want.events);
    CHECK(have.rate_per_hour == doctest::Approx(want.rate_per_hour).epsilon(1e-4));  // 4 significant digits
    CHECK(*have.interval_low == doctest::Approx(*want.interval_low).epsilon(1e-3));  // 3
    CHECK(*have.interval_high == doctest::Approx(*want.interval_high).epsilon(1e-3));
  }
  for (cluster::FailureClass cls : cluster::kFailureClasses) CHECK(back->ShapeOf(cls) == 1);

  // A plan in the same folder names it; the same seed draws the same faults, another seed others.
  const auto plan_path = (dir.path / "plan.yaml").string();
  std::ofstream(plan_path) << "name: fitted\nseed: 5\nduration: 30d\ncluster: {model: gb200-nvl72, racks: 2}\n"
                              "chaos: {catalogue: site.yaml}\n";
  auto plan = runner::LoadPlan(plan_path);
  REQUIRE(plan.ok());
  auto draws = [&](uint64_t seed) {
    auto spec = runner::ValidatePlan(*plan, {seed, ""});
    REQUIRE_MESSAGE(spec.ok(), spec.status().ToString());
    std::vector<std::string> out;
    for (const runner::ResolvedFault& f : spec->faults)
      out.push_back(f.selector + " @" + std::to_string(f.at.us) + " on " + std::to_string(f.target.component));
    return out;
  };
  const auto a = draws(5), b = draws(5), c = draws(6);
  CHECK(a == b);
  CHECK(a != c);
  // 30 days at the fitted rates on the cluster they were fitted on: about the 20 failures of the logs'
  // 31 days (Poisson: 99.9% of draws fall in 7..36).
  CHECK(a.size() >= 7);
  CHECK(a.size() <= 36);
}
