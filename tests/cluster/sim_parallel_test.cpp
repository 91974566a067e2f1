// Jobs placed and timed by their parallel groups (cluster/placement.h): TP and EP blocks inside one
// NVLink domain, each kind of group's collectives over its own fabric, MoE all-to-all over the slowest
// EP member's NVLink. Numbers from Job(): 10 s steps, TP 10% and DP 5% of a step.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/cluster/sim_harness.h"

namespace rackchaos::cluster {
namespace {

using namespace testing;

JobConfig Grouped(int tp, int pp, int dp, int ep = 1) {
  JobConfig cfg = Job(tp * pp * dp);
  cfg.name = "grouped";
  cfg.grouped = true;
  cfg.tp = tp;
  cfg.pp = pp;
  cfg.dp = dp;
  cfg.ep = ep;
  return cfg;
}

std::vector<std::string> TrayNames(const Harness& h, JobId job) {
  std::vector<std::string> out;
  for (ComponentId t : h.sim.JobTrays(job)) out.push_back(h.topo.at(t).name);
  return out;
}

// Two racks without spares; a first job leaves `free_in_first` trays of rack 1 free.
JobId FillFirstRack(Harness& h, int free_in_first) {
  JobConfig filler = Job((18 - free_in_first) * 4);
  filler.name = "filler";
  return h.sim.AddJob(filler).value();
}

TEST_CASE("sim.parallel: a TP block of 8 GPUs never straddles two NVLink domains") {
  const std::vector<std::string> split = {"r01.tray16", "r01.tray17", "r02.tray01", "r02.tray02"};
  SUBCASE("grouped: whole blocks per domain") {
    Harness h(42, 2, 0);
    FillFirstRack(h, 3);
    JobId job = h.sim.AddJob(Grouped(8, 1, 2)).value();
    h.sim.Start();
    CHECK(h.sim.JobStateOf(job) == JobState::kRunning);
    CHECK(TrayNames(h, job) == split);
  }
  SUBCASE("expert blocks too: tp 2 x ep 4") {
    Harness h(42, 2, 0);
    FillFirstRack(h, 3);
    JobId job = h.sim.AddJob(Grouped(2, 1, 8, 4)).value();
    h.sim.Start();
    CHECK(TrayNames(h, job) == split);
  }
  SUBCASE("ungrouped: the first free trays, as before") {
    Harness h(42, 2, 0);
    FillFirstRack(h, 3);
    JobId job = h.sim.AddJob(Job(16)).value();
    h.sim.Start();
    CHECK(TrayNames(h, job) == std::vector<std::string>{"r01.tray16", "r01.tray17", "r01.tray18", "r02.tray01"});
  }
  SUBCASE("grouped, blocks already aligned: the first free trays") {
    Harness h(42, 2, 0);
    FillFirstRack(h, 4);
    JobId job = h.sim.AddJob(Grouped(8, 1, 2)).value();
    h.sim.Start();
    CHECK(TrayNames(h, job) == std::vector<std::string>{"r01.tray15", "r01.tray16", "r01.tray17", "r01.tray18"});
  }
}

TEST_CASE("sim.parallel: a grouped job waits while no domain has room for a whole block") {
  Harness h(42, 2, 0);
  FillFirstRack(h, 1);
  for (int t = 1; t <= 17; ++t) {  // r01.tray18 and r02.tray18 stay free
    std::string name = "r02.tray" + std::string(t < 10 ? "0" : "") + std::to_string(t);
    REQUIRE(h.sim.Drain(h.Id(name), "test").ok());
  }
  JobId tp8 = h.sim.AddJob(Grouped(8, 1, 1)).value();
  JobId loose = h.sim.AddJob(Job(8)).value();
  h.sim.Start();
  CHECK(h.sim.JobStateOf(tp8) == JobState::kQueued);
  CHECK(h.sim.JobStateOf(loose) == JobState::kRunning);  // the same 8 GPUs do for a job without groups
  CHECK(TrayNames(h, loose) == std::vector<std::string>{"r01.tray18", "r02.tray18"});
}

// A grouped job of 8 GPUs: in r01 alone, or over r01.tray18 and r02.tray01 (two NVLink domains).
JobId PlaceGrouped(Harness& h, const JobConfig& cfg, bool across) {
  if (across) FillFirstRack(h, 1);
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  return job;
}

TEST_CASE("sim.parallel: a degraded NIC slows only jobs whose DP or PP groups cross NVLink domains") {
  struct Case {
    int dp;
    bool across;
    bool slowed;
  };
  for (Case k : {Case{1, false, false}, Case{2, false, false}, Case{2, true, true}}) {
    CAPTURE(k.dp);
    CAPTURE(k.across);
    Harness h(42, 2, 0);
    JobId job = PlaceGrouped(h, Grouped(4, 1, k.dp), k.across);  // one TP group per tray
    const char* nic = k.across ? "r01.tray18.nic1" : "r01.tray01.nic1";
    h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetLinkBandwidth(h.Id(nic), -1, 0.1, 3).ok()); });
    h.clock.RunUntil(Duration::Minutes(5));
    auto changes = h.JobChanges(job);
    CHECK(changes[0].second.step_time_s == doctest::Approx(10));
    if (!k.slowed) {
      CHECK(changes.size() == 1);
      for (const auto& [at, r] : h.seen.Of<StepReport>()) CHECK(r.rank_gpus.empty());
    } else {
      REQUIRE(changes.size() == 2);
      CHECK(changes[1].second.step_time_s == doctest::Approx(8.5 + 1 + 0.5 / 0.1));
      CHECK(changes[1].second.cause == 3);
    }
  }
}

TEST_CASE("sim.parallel: a NIC down hangs a grouped job only when its rank's DP or PP group crosses domains") {
  struct Case {
    int dp;
    bool grouped, across, hangs;
  };
  for (Case k : {Case{1, true, false, false}, Case{2, true, false, false}, Case{2, true, true, true},
                 Case{2, false, false, true}}) {
    CAPTURE(k.dp);
    CAPTURE(k.grouped);
    CAPTURE(k.across);
    Harness h(42, 2, 0);
    JobConfig cfg = Grouped(4, 1, k.dp);
    cfg.grouped = k.grouped;
    JobId job = PlaceGrouped(h, cfg, k.across);
    const char* nic = k.across ? "r01.tray18.nic1" : "r01.tray01.nic1";
    h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetNicLink(h.Id(nic), false, 8).ok()); });
    h.clock.RunUntil(Duration::Minutes(5));
    CHECK(h.sim.JobStateOf(job) == (k.hangs ? JobState::kHung : JobState::kRunning));
  }
}

TEST_CASE("sim.parallel: an NVLink port slows TP collectives, and DP ones when DP stays inside one domain") {
  struct Case {
    int tp;
    bool across;
    double step;  // 0: unchanged
  };
  for (Case k : {Case{4, false, 8.5 + 1 / 0.25 + 0.5 / 0.25}, Case{1, false, 9.5 + 0.5 / 0.25}, Case{1, true, 0}}) {
    CAPTURE(k.tp);
    CAPTURE(k.across);
    Harness h(42, 2, 0);
    JobId job = PlaceGrouped(h, Grouped(k.tp, 1, 8 / k.tp), k.across);
    const char* gpu = k.across ? "r01.tray18.gpu2" : "r01.tray01.gpu2";
    h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetLinkBandwidth(h.Id(gpu), 7, 0.25, 4).ok()); });
    h.clock.RunUntil(Duration::Minutes(5));
    auto changes = h.JobChanges(job);
    REQUIRE(changes.size() == (k.step == 0 ? 1u : 2u));
    if (k.step > 0) CHECK(changes[1].second.step_time_s == doctest::Approx(k.step));
  }
}

TEST_CASE("sim.parallel: the MoE all-to-all runs at the slowest EP member's NVLink") {
  Harness h;
  JobConfig cfg = Grouped(2, 1, 4, 4);  // 8 GPUs: TP pairs, one expert group of 4 per TP rank
  cfg.ep_share = 0.15;
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  ComponentId gpu = h.Id("r01.tray02.gpu3");
  h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetLinkBandwidth(gpu, 0, 0.25, 5).ok()); });
  h.At(Duration::Minutes(2), [&] { CHECK(h.sim.Release(Held::kLinkBandwidth, {gpu, 0}, 5).ok()); });
  h.clock.RunUntil(Duration::Minutes(5));
  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 3);
  CHECK(changes[0].second.step_time_s == doctest::Approx(10));  // 7 + 1 + 0.5 + 1.5
  // TP, DP (inside the rack: over NVLink) and the all-to-all all 4x slower.
  CHECK(changes[1].second.step_time_s == doctest::Approx(7 + 1 / 0.25 + 0.5 / 0.25 + 1.5 / 0.25));
  CHECK(changes[1].second.cause == 5);
  CHECK(changes[2].second.step_time_s == doctest::Approx(10));
  auto reports = h.seen.Of<StepReport>();
  REQUIRE_FALSE(reports.empty());
  REQUIRE(reports[0].second.rank_gpus == std::vector<ComponentId>{gpu});
  CHECK(reports[0].second.comm_s[0] == doctest::Approx(4 + 2 + 6).epsilon(0.2));
}

TEST_CASE("sim.parallel: pipeline sends cross the scale-out NICs only between domains") {
  for (bool across : {false, true}) {
    CAPTURE(across);
    Harness h(42, 2, 0);
    JobConfig cfg = Grouped(4, 2, 1);  // two stages of one tray each
    cfg.pp_share = 0.03;
    JobId job = PlaceGrouped(h, cfg, across);
    const char* nic = across ? "r02.tray01.nic0" : "r01.tray02.nic0";
    h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetLinkBandwidth(h.Id(nic), -1, 0.5, 6).ok()); });
    h.clock.RunUntil(Duration::Minutes(5));
    auto changes = h.JobChanges(job);
    REQUIRE(changes.size() == (across ? 2u : 1u));
    if (across) CHECK(changes[1].second.step_time_s == doctest::Approx(8.7 + 1 + 0.3 / 0.5));  // no DP: 8.7 s compute
  }
}

// A mixed job: tp 4 x pp 2 x dp 2 on r01.tray16-18 + r02.tray01 (one TP group per tray). Stage 0
// (tray16-17) keeps its DP groups inside r01; stage 1 (tray18, r02.tray01) crosses. PP groups pair
// tray16 with tray18 (inside r01) and tray17 with r02.tray01 (across). 10 s steps: compute 8.2 s, TP 1 s,
// DP 0.5 s, PP 0.3 s.
JobId PlaceMixed(Harness& h) {
  FillFirstRack(h, 3);
  JobConfig cfg = Grouped(4, 2, 2);
  cfg.pp_share = 0.03;
  JobId job = h.sim.AddJob(cfg).value();
  h.sim.Start();
  REQUIRE(TrayNames(h, job) == std::vector<std::string>{"r01.tray16", "r01.tray17", "r01.tray18", "r02.tray01"});
  return job;
}

// Runs to 5 min; the job changed speed once, for fault `cause`: its new step time.
double StepAfterFault(Harness& h, JobId job, FaultId cause) {
  h.clock.RunUntil(Duration::Minutes(5));
  auto changes = h.JobChanges(job);
  REQUIRE(changes.size() == 2);
  CHECK(changes[1].second.cause == cause);
  return changes[1].second.step_time_s;
}

TEST_CASE("sim.parallel: in a mixed job each DP and PP group takes the slowest link of its own fabric") {
  struct Case {
    const char* link;
    int port;  // -1: a NIC
    double step;
  };
  // r01.tray16.gpu2: its DP and PP groups stay in r01, so NVLink slows TP, DP and PP (the whole kind
  // used to count as scale-out). r01.tray17.nic1: rank 5's DP group (tray16-17) stays in NVLink, its PP
  // group crosses: only PP waits on the NIC (it used to slow DP too). r01.tray18.nic1: rank 9's DP group
  // crosses, its PP group (tray16, tray18) does not. r02.tray01.nic1: both cross.
  for (Case k : {Case{"r01.tray16.gpu2", 7, 8.2 + 1 / 0.25 + 0.5 / 0.25 + 0.3 / 0.25},
                 Case{"r01.tray17.nic1", -1, 8.2 + 1 + 0.5 + 0.3 / 0.1},
                 Case{"r01.tray18.nic1", -1, 8.2 + 1 + 0.5 / 0.1 + 0.3},
                 Case{"r02.tray01.nic1", -1, 8.2 + 1 + 0.5 / 0.1 + 0.3 / 0.1}}) {
    const std::string link = k.link;
    CAPTURE(link);
    Harness h(42, 2, 0);
    JobId job = PlaceMixed(h);
    const double fraction = k.port < 0 ? 0.1 : 0.25;
    h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetLinkBandwidth(h.Id(k.link), k.port, fraction, 3).ok()); });
    CHECK(StepAfterFault(h, job, 3) == doctest::Approx(k.step));
  }
}

// Adaptive mode, the mixed job above (stage 0 inside r01, stage 1 across r01 and r02): a switch tray
// lost in r02 slows TP there (8/9) but no DP or PP group inside r01; one lost in r01 slows them all
// (a crossing group's NVLink hop in r01 at 8/9 x 900 GB/s stays far above its 50 GB/s NIC).
TEST_CASE("sim.parallel: adaptive mode slows only the groups inside the domain that lost a switch tray") {
  struct Case {
    const char* sw;
    double step;
  };
  for (Case k : {Case{"r02.switch1", 8.2 + 1 / (8.0 / 9) + 0.5 + 0.3},
                 Case{"r01.switch1", 8.2 + (1 + 0.5 + 0.3) / (8.0 / 9)}}) {
    const std::string sw = k.sw;
    CAPTURE(sw);
    Harness h(42, 2, 0, /*adaptive=*/true);
    JobId job = PlaceMixed(h);
    h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetComponentFailed(h.Id(k.sw), true, 5).ok()); });
    CHECK(StepAfterFault(h, job, 5) == doctest::Approx(k.step));
  }
}

// tp 4 x dp 2 over r01.tray18 and r02.tray01: its one DP group crosses, and its ring also runs over
// NVLink inside each domain, so it goes at min(NIC, NVLink hop). With 400 Gb/s NICs (50 GB/s against
// 900 GB/s of NVLink per GPU) an adaptive domain at 8/9 leaves the NIC the bottleneck; with NICs as
// fast as NVLink (7,200 Gb/s) the hop becomes it. An NVLink port at 2% of a crossing rank: 18 GB/s.
TEST_CASE("sim.parallel: a group crossing domains runs at its slowest NVLink hop or NIC") {
  struct Case {
    double nic_gbit;
    const char* link;  // a switch tray, or a GPU whose NVLink port 3 drops to 2%
    double step;
  };
  for (Case k : {Case{400, "r02.switch1", 8.5 + 1 / (8.0 / 9) + 0.5},
                 Case{7200, "r02.switch1", 8.5 + (1 + 0.5) / (8.0 / 9)},
                 Case{400, "r02.tray01.gpu1", 8.5 + 1 / 0.02 + 0.5 / (0.02 * 18)}}) {
    const std::string link = k.link;
    CAPTURE(link);
    CAPTURE(k.nic_gbit);
    auto model = LoadRackModel("gb200-nvl72");
    REQUIRE(model.ok());
    model->adaptive_bandwidth = true;
    model->nic_gbit_per_s = k.nic_gbit;
    auto topo = Topology::Build(*model, 2, 0);
    REQUIRE(topo.ok());
    Harness h(std::move(topo).value(), 42);
    JobId job = PlaceGrouped(h, Grouped(4, 1, 2), /*across=*/true);
    REQUIRE(TrayNames(h, job) == std::vector<std::string>{"r01.tray18", "r02.tray01"});
    const ComponentId id = h.Id(k.link);
    h.At(Duration::Minutes(1), [&] {
      CHECK((h.topo.at(id).kind == Kind::kGpu ? h.sim.SetLinkBandwidth(id, 3, 0.02, 5)
                                              : h.sim.SetComponentFailed(id, true, 5))
                .ok());
    });
    CHECK(StepAfterFault(h, job, 5) == doctest::Approx(k.step));
  }
}

// Eight racks, no spares: 4 racks per leaf group. A filler takes r01-r02; tp 4 x pp 2 x dp 36 puts stage
// 0 on r03-r04 (leaf group 1) and stage 1 on r05-r06 (leaf group 2). DP groups cross racks inside one
// leaf group (NICs, no spine); every PP group spans the two leaf groups.
TEST_CASE("sim.parallel: a lost spine slows only the groups that span leaf groups") {
  for (bool grouped : {true, false}) {
    CAPTURE(grouped);
    Harness h(42, 8, 0);
    JobConfig filler = Job(144);
    filler.name = "filler";
    h.sim.AddJob(filler).value();
    JobConfig cfg = Grouped(4, 2, 36);
    cfg.pp_share = 0.03;
    cfg.grouped = grouped;
    JobId job = h.sim.AddJob(cfg).value();
    h.sim.Start();
    REQUIRE(h.topo.LeafGroups() == 2);
    REQUIRE(h.topo.spines().size() == 4);
    h.At(Duration::Minutes(1), [&] { CHECK(h.sim.SetComponentFailed(h.Id("spine02"), true, 9).ok()); });
    h.clock.RunUntil(Duration::Minutes(5));
    auto changes = h.JobChanges(job);
    REQUIRE(changes.size() == 2);
    // Grouped: PP at 3/4 of its bandwidth, DP as before. Ungrouped: its scale-out share (DP and PP, as
    // the job spans leaf groups) at 3/4, and no pipeline share of its own.
    const double step = grouped ? 8.2 + 1 + 0.5 + 0.3 / 0.75 : 8.5 + 1 + 0.5 / 0.75;
    CHECK(changes[1].second.step_time_s == doctest::Approx(step));
    CHECK(changes[1].second.cause == 9);
  }
}

TEST_CASE("sim.parallel: degrees and shares the simulator refuses, with what would be valid") {
  Harness h(42, 2, 0);
  auto ep = h.sim.AddJob(Grouped(4, 1, 6, 4));
  REQUIRE_FALSE(ep.ok());
  CHECK(ep.status().message() ==
        "job 'grouped': ep 4 does not divide dp 6; expert groups are carved from the "
        "data-parallel ranks (e.g. ep: 1, 2, 3 or 6)");
  auto wide = h.sim.AddJob(Grouped(16, 1, 8, 8));
  REQUIRE_FALSE(wide.ok());
  CHECK(wide.status().message() ==
        "job 'grouped': tp*ep = 128 GPUs must fit in one NVLink domain of 72 GPUs (gb200-nvl72)");
  JobConfig product = Grouped(4, 1, 2);
  product.gpus = 12;
  CHECK_FALSE(h.sim.AddJob(product).ok());
  JobConfig shares = Grouped(4, 1, 2, 2);
  shares.ep_share = 0.9;
  CHECK(h.sim.AddJob(shares).status().message() == "job 'grouped': collective shares must be >= 0 and sum below 100%");
}

}  // namespace
}  // namespace rackchaos::cluster
