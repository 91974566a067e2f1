// Replay: incident events -> faults at their offsets -> plan text that loads and validates; the sample
// incidents in scenarios/incidents/ each give the faults their README describes.
#include "runner/replay/replay.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "cluster/catalogue.h"
#include "reports/incident_store.h"
#include "run_fixture.h"
#include "runner/cli/replay_cmd.h"
#include "runner/incident/importer.h"
#include "runner/site/inventory.h"
#include "runner/plan/plan_loader.h"
#include "runner/spec/validate.h"

namespace rr = rackchaos::runner;
namespace ri = rackchaos::incident;
namespace cl = rackchaos::cluster;

namespace {

cl::Topology Gb200(int spares = 2) {
  auto model = cl::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cl::Topology::Build(*model, 1, spares);
  REQUIRE(topo.ok());
  return std::move(*topo);
}

ri::Incident FromText(const std::string& text) {
  ri::IncidentImporter importer;
  importer.ImportText(text, "t.log");
  return importer.Finish();
}

ri::Incident FromFiles(const std::string& dir, const std::vector<std::string>& files) {
  ri::IncidentImporter importer;
  for (const auto& f : files)
    REQUIRE(importer.ImportFile(std::string(RACKCHAOS_SOURCE_DIR) + "/" + dir + "/" + f).ok());
  return importer.Finish();
}

ri::HostMap Map(const std::string& text) {
  auto m = ri::ParseGpuMap(text, "map.txt");
  REQUIRE(m.ok());
  return *m;
}

// The replay plan loads, validates, and has the faults the timeline has.
void CheckPlan(const rr::ReplayTimeline& t, const cl::Topology& topo, rr::ReplayPlanOptions o) {
  if (o.jobs.empty()) o.jobs.push_back(rr::DefaultReplayJob(topo));
  std::string text = rr::ReplayPlanYaml(t, o);
  auto plan = rr::ParsePlan(text, "replay.yaml");
  REQUIRE_MESSAGE(plan.ok(), plan.status().message() << "\n" << text);
  auto spec = rr::ValidatePlan(*plan, {});
  REQUIRE_MESSAGE(spec.ok(), spec.status().message() << "\n" << text);
  REQUIRE(spec->faults.size() == t.faults.size());
  for (size_t i = 0; i < t.faults.size(); ++i) {
    CHECK(spec->faults[i].injector->name() == t.faults[i].kind);
    CHECK(spec->topology->TargetName(spec->faults[i].target) == t.faults[i].target);
    CHECK(spec->faults[i].at.Seconds() == doctest::Approx(o.lead.Seconds() + t.faults[i].at).epsilon(0.01));
  }
}

}  // namespace

TEST_CASE("replay: Xid by action, follow-ups and caused Xids folded, drain and resume measured from the fatal fault") {
  auto topo = Gb200();
  auto inc = FromText(
      "[Mon Nov 30 06:00:00 2026] NVRM: Xid (PCI:0000:41:00): 13, pid=7, name=python3, Graphics SM Warp Exception\n"
      "[Mon Nov 30 06:01:00 2026] NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
      "the bus.\n"
      "[Mon Nov 30 06:01:05 2026] NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n"
      "[Mon Nov 30 06:01:06 2026] NVRM: Xid (PCI:0000:41:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 "
      "(Node Reboot Required)\n"
      "[Mon Nov 30 06:02:00 2026] NVRM: Xid (PCI:0000:01:00): 145, pid='<unknown>', name=<unknown>, NVLink link 5 "
      "fault\n"
      "[2026-11-30T06:01:30] update_node: node n3 reason set to: xid 79\n"
      "[2026-11-30T06:01:30] update_node: node n3 state set to DRAIN\n"
      "[2026-11-30T08:01:00] update_node: node n3 state set to IDLE\n"
      "[2026-11-30T08:05:00] update_node: node n9 state set to DRAIN\n");
  auto t = rr::BuildReplayTimeline(inc, topo, Map("* r01.tray03\nn3 r01.tray03\nn9 r01.tray09\n"));
  REQUIRE(t.faults.size() == 3);
  CHECK(t.faults[0].kind == "process_crash");
  CHECK(t.faults[0].target == "r01.tray03.gpu2");
  CHECK(t.faults[1].kind == "gpu_fail");
  CHECK(t.faults[1].params.at("xid") == "79");
  CHECK(t.faults[1].at == doctest::Approx(60));
  CHECK(t.faults[1].follow_ups == 2);  // the second 79, and the 154 it caused
  REQUIRE(t.faults[1].consequences.size() == 1);
  CHECK(t.faults[1].consequences[0] == "xid 154 recovery action 2 (reboot_node)");
  CHECK(t.faults[1].end == doctest::Approx(2 * 3600 + 60));
  CHECK(t.faults[1].drained_after == doctest::Approx(30));
  CHECK(t.faults[1].drain_reason == "xid 79");
  CHECK(t.faults[1].resumed_after == doctest::Approx(7200));
  CHECK(t.faults[2].kind == "link_down");
  CHECK(t.faults[2].target == "r01.tray03.gpu0.nvlink5");
  CHECK(t.follow_ups == 2);
  // The drain of a node with no fault is listed, with why.
  CHECK(t.not_replayed_count == 1);
  CHECK(t.not_replayed[0].why.find("no fault imported") != std::string::npos);
  CHECK(t.span == doctest::Approx(2 * 3600 + 300));
  CheckPlan(t, topo, {});
}

TEST_CASE("replay: unmapped hosts and addresses are not replayed, with the reason") {
  auto topo = Gb200();
  auto inc = FromText(
      "Nov 30 06:00:00 n1 kernel: NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n"
      "Nov 30 06:00:01 n2 kernel: NVRM: Xid (PCI:0000:99:00): 79, GPU has fallen off the bus.\n"
      "Nov 30 06:00:02 n2 kernel: mlx5_core 0000:23:00.0 eth9: Link down\n");
  auto t = rr::BuildReplayTimeline(inc, topo, Map("n2 r01.tray02\n"));
  CHECK(t.faults.empty());
  REQUIRE(t.not_replayed.size() == 3);
  CHECK(t.not_replayed[0].why.find("no tray mapped for host 'n1'") != std::string::npos);
  CHECK(t.not_replayed[1].why.find("no GPU with PCI 0000:99:00 in r01.tray02") != std::string::npos);
  CHECK(t.not_replayed[2].why.find("no NIC mapped for eth9") != std::string::npos);
}

TEST_CASE("replay: a node down with no fault becomes a tray pull until it is resumed") {
  auto topo = Gb200();
  auto inc = FromText(
      "[2026-11-30T06:00:00] error: Nodes n[4-5] not responding, setting DOWN\n"
      "[2026-11-30T07:00:00] update_node: node n4 state set to IDLE\n");
  auto t = rr::BuildReplayTimeline(inc, topo, Map("n4 r01.tray04\nn5 r01.tray05\n"));
  REQUIRE(t.faults.size() == 2);
  CHECK(t.faults[0].kind == "tray_pull");
  CHECK(t.faults[0].target == "r01.tray04");
  CHECK(t.faults[0].end == doctest::Approx(3600));
  CHECK_FALSE(t.faults[1].end);
  CheckPlan(t, topo, {});
}

TEST_CASE("replay: GPU map errors name file line and column") {
  auto bad = ri::ParseGpuMap("# ok\nn1 r01.tray01\n  n2 0000:01:00 r01.tray02.gpu0 extra\n", "map.txt");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().starts_with("map.txt:3:3: 4 words; expected 'HOST TRAY'"));
  auto ctrl = ri::ParseGpuMap("n1 r01\x01tray01\n", "map.txt");
  REQUIRE_FALSE(ctrl.ok());
  CHECK(ctrl.status().message().starts_with("map.txt:1:4: control or non-ASCII"));
  auto ok = ri::ParseGpuMap("n1 0000:3B:00 r01.tray01.gpu0\n", "map.txt");
  REQUIRE(ok.ok());
  CHECK(ok->targets.count("n1 0000:3b:00") == 1);
}

TEST_CASE("replay: plan text quotes hostile names and stays loadable") {
  auto topo = Gb200();
  rr::ReplayTimeline t;
  rr::ReplayFault f;
  f.kind = "gpu_fail";
  f.target = "r01.tray01.gpu0";
  f.params["xid"] = "79";
  f.source = "evil\n: {name: x}\"'#.log:1";
  t.faults.push_back(f);
  rr::ReplayPlanOptions o;
  o.name = "a \"quoted\"\nname";
  o.comments.push_back("line\nbreak");
  CheckPlan(t, topo, o);
}

TEST_CASE("replay: the exported plan keeps each job's elastic min_gpus") {
  auto topo = Gb200();
  rr::ReplayPlanOptions o;
  rr::JobSpec elastic = rr::DefaultReplayJob(topo);
  elastic.gpus = 32;
  elastic.dp = 0;
  elastic.min_gpus = 8;
  rr::JobSpec rigid = elastic;
  rigid.name = "rigid";
  rigid.min_gpus = 0;
  o.jobs = {elastic, rigid};
  std::string text = rr::ReplayPlanYaml(rr::ReplayTimeline{}, o);
  auto plan = rr::ParsePlan(text, "replay.yaml");
  REQUIRE_MESSAGE(plan.ok(), plan.status().message() << "\n" << text);
  REQUIRE(plan->jobs.size() == 2);
  CHECK(plan->jobs[0].min_gpus == 8);
  CHECK(plan->jobs[1].min_gpus == 0);
  auto spec = rr::ValidatePlan(*plan, {});
  CHECK_MESSAGE(spec.ok(), spec.status().message());
}

TEST_CASE("replay: the exported plan keeps the regions, each job's region, input and far copy") {
  auto plan = rr::ParsePlan(R"(name: two-regions
duration: 1h
cluster:
  model: gb200-nvl72
  regions:
    - {name: east, racks: 2, spares: {racks: 1}}
    - {name: west, racks: 1}
  region_link_gbytes_per_s: 25
  region_link_background_percent: 40
  object_store_gbytes_per_s: 300
workload:
  jobs:
    - {name: a, gpus: 72, region: west, input_mb_per_s: 300, input_from: object_store,
       checkpoint: {interval: 20m, write_time: 30s, size_gb: 4000}}
    - {name: b, gpus: 36, checkpoint: {interval: 20m, write_time: 30s, copy_time: 5m}}
)",
                            "src.yaml");
  REQUIRE_MESSAGE(plan.ok(), plan.status().message());
  rr::ReplayPlanOptions o;
  o.cluster = plan->cluster;
  o.jobs = plan->jobs;
  const std::string text = rr::ReplayPlanYaml(rr::ReplayTimeline{}, o);
  auto back = rr::ParsePlan(text, "replay.yaml");
  REQUIRE_MESSAGE(back.ok(), back.status().message() << "\n" << text);
  REQUIRE(back->cluster.regions.size() == 2);
  CHECK(back->cluster.regions[0].name == "east");
  CHECK(back->cluster.regions[0].racks == 2);
  CHECK(back->cluster.regions[0].spare_racks == 1);
  CHECK(back->cluster.regions[1].spare_racks == -1);
  CHECK(back->cluster.racks == 3);
  CHECK(back->cluster.region_link_gbytes_per_s == 25);
  CHECK(back->cluster.region_link_background_percent == 40);
  CHECK(back->cluster.object_store_gbytes_per_s == 300);
  REQUIRE(back->jobs.size() == 2);
  CHECK(back->jobs[0].region.text == "west");
  CHECK(back->jobs[0].input_mb_per_s == 300);
  CHECK(back->jobs[0].input_from_object_store);
  CHECK(back->jobs[0].checkpoint_size_gb == 4000);
  CHECK(back->jobs[1].region.text.empty());
  CHECK_FALSE(back->jobs[1].input_from_object_store);
  CHECK(back->jobs[1].checkpoint_copy == rackchaos::Duration::Minutes(5));
  auto spec = rr::ValidatePlan(*back, {});
  REQUIRE_MESSAGE(spec.ok(), spec.status().message() << "\n" << text);
  CHECK(spec->topology->regions().size() == 2);
}

TEST_CASE("replay: sample incident xid79-gpu-off-bus") {
  auto topo = Gb200();
  auto inc = FromFiles("scenarios/incidents/xid79-gpu-off-bus", {"kernel.log", "slurmctld.log"});
  auto map = ri::LoadGpuMap(std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/incidents/xid79-gpu-off-bus/gpu-map.txt");
  REQUIRE(map.ok());
  auto t = rr::BuildReplayTimeline(inc, topo, *map);
  REQUIRE(t.faults.size() == 2);
  CHECK(t.faults[0].kind == "process_crash");
  CHECK(t.faults[1].kind == "gpu_fail");
  CHECK(t.faults[1].target == "r01.tray03.gpu2");
  CHECK(t.faults[1].drained_after == doctest::Approx(14.812));
  CHECK(t.faults[1].resumed_after == doctest::Approx(3 * 3600 + 38 * 60 + 49));
  CHECK(t.requeues == 1);
  CHECK(inc.not_understood == 4);  // "NVRM: GPU ... has fallen off the bus." repeats the Xid 79
  CheckPlan(t, topo, {});
}

TEST_CASE("replay: sample incident nvlink-xid149") {
  auto topo = Gb200();
  auto inc = FromFiles("scenarios/incidents/nvlink-xid149", {"syslog", "sacctmgr-events.txt"});
  auto map = ri::LoadGpuMap(std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/incidents/nvlink-xid149/gpu-map.txt");
  REQUIRE(map.ok());
  auto t = rr::BuildReplayTimeline(inc, topo, *map);
  REQUIRE(t.faults.size() == 2);
  CHECK(t.faults[0].target == "r01.tray07.gpu1.nvlink14");
  CHECK(t.faults[0].drained_after == doctest::Approx(84.881798));
  CHECK(t.faults[0].end == doctest::Approx(t.faults[0].at + 44 * 60 + 54.881798));
  CHECK(t.faults[1].target == "r01.tray09.gpu2.nvlink3");
  CHECK_FALSE(t.faults[1].resumed_after);
  CHECK(t.not_replayed_count == 1);  // the NVSwitch SXid (the XID 154 is part of the 149's fault)
  CHECK(t.faults[0].consequences.size() == 1);
  CheckPlan(t, topo, {});
}

TEST_CASE("replay: sample incident nic-flap through the site inventory") {
  auto topo = Gb200(0);
  auto inc = FromFiles("scenarios/incidents/nic-flap", {"journal.log", "sinfo-R.txt", "timeline.jsonl"});
  auto inv = rr::LoadInventory(std::string(RACKCHAOS_SOURCE_DIR) + "/sites/gb200-example.yaml");
  REQUIRE(inv.ok());
  auto t = rr::BuildReplayTimeline(inc, topo, rr::HostMapFromInventory(*inv));
  REQUIRE(t.faults.size() == 2);
  CHECK(t.faults[0].target == "r01.tray02.nic2");
  CHECK(t.faults[0].end == doctest::Approx(10));
  CHECK(t.faults[0].follow_ups == 1);  // "Cable unplugged": the same NIC by its PCI address
  CHECK(t.faults[1].target == "r01.tray03.nic1");
  CHECK(t.faults[1].drained_after == doctest::Approx(140));
  CHECK(t.faults[1].end == doctest::Approx(76 * 60 - 2));
  CHECK(t.not_replayed_count == 1);  // the operator's note
  CheckPlan(t, topo, {});
}

TEST_CASE("replay: the site's drain counts from the first fatal fault of the tray, not the first Xid") {
  auto topo = Gb200();
  auto inc = FromText(
      "[2026-11-30T06:01:44] gpu-r01-t03 kernel: NVRM: Xid (PCI:0000:41:00): 13, pid=91811, name=python3, Graphics SM "
      "Warp Exception\n"
      "[2026-11-30T06:02:21] gpu-r01-t03 kernel: NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n"
      "[2026-11-30T06:02:35] update_node: node gpu-r01-t03 reason set to: Xid 79\n"
      "[2026-11-30T06:02:35] update_node: node gpu-r01-t03 state set to DRAINING\n");
  auto t = rr::BuildReplayTimeline(inc, topo, Map("gpu-r01-t03 r01.tray03\n"));
  REQUIRE(t.faults.size() == 2);
  CHECK(t.faults[0].kind == "process_crash");
  CHECK_FALSE(t.faults[0].fatal);
  CHECK_FALSE(t.faults[0].drained_after);  // the site did not drain for the Xid 13
  CHECK(t.faults[1].fatal);
  CHECK(t.faults[1].drained_after == doctest::Approx(14));
  CHECK(t.first_fatal == doctest::Approx(37));
  // With no fatal fault open, the drain counts from the first fault (the site drained for it).
  auto only13 = FromText(
      "[2026-11-30T06:01:44] n1 kernel: NVRM: Xid (PCI:0000:41:00): 13, pid=1, name=p, Graphics SM Warp Exception\n"
      "[2026-11-30T06:02:44] update_node: node n1 state set to DRAIN\n");
  auto t13 = rr::BuildReplayTimeline(only13, topo, Map("n1 r01.tray03\n"));
  REQUIRE(t13.faults.size() == 1);
  CHECK(t13.faults[0].drained_after == doctest::Approx(60));
}

TEST_CASE("replay: host-less lines (dmesg -T) resolve through --host, a unique PCI id in the map, or say what to do") {
  auto topo = Gb200();
  const std::string dmesg =
      "[Mon Nov 30 06:02:21 2026] NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
      "the bus.\n";
  // The map names 0000:41:00 on one host only: the line is that GPU.
  auto unique = rr::BuildReplayTimeline(FromText(dmesg), topo, Map("n3 r01.tray03\nn3 0000:41:00 r01.tray03.gpu2\n"));
  REQUIRE(unique.faults.size() == 1);
  CHECK(unique.faults[0].target == "r01.tray03.gpu2");
  // On two hosts it is ambiguous: the reason says to give --host.
  auto two = rr::BuildReplayTimeline(FromText(dmesg), topo,
                                     Map("n3 0000:41:00 r01.tray03.gpu2\nn4 0000:41:00 r01.tray04.gpu2\n"));
  REQUIRE(two.faults.empty());
  REQUIRE(two.not_replayed.size() == 1);
  CHECK(two.not_replayed[0].why.find("mapped on 2 hosts (n3, n4)") != std::string::npos);
  CHECK(two.not_replayed[0].why.find("--host") != std::string::npos);
  CHECK(two.hostless == 1);
  // No map entry at all: the hint says what can be done (not "add 'HOST TRAY'" for an empty host).
  auto none = rr::BuildReplayTimeline(FromText(dmesg), topo, Map("n3 r01.tray03\nn4 r01.tray04\n"));
  REQUIRE(none.not_replayed.size() == 1);
  CHECK(none.not_replayed[0].why.find("give --host NODE") != std::string::npos);
  CHECK(none.not_replayed[0].why.find("host ''") == std::string::npos);
  // --host gives the line its node; the node's tray and the model's bus ids find the GPU.
  ri::ImportOptions options;
  options.host = "n4";
  ri::IncidentImporter importer(options);
  importer.ImportText(dmesg, "dmesg-T.log");
  auto t = rr::BuildReplayTimeline(importer.Finish(), topo, Map("n3 r01.tray03\nn4 r01.tray04\n"));
  REQUIRE(t.faults.size() == 1);
  CHECK(t.faults[0].target == "r01.tray04.gpu2");
}

TEST_CASE("replay: requeues and kills keep their time, job id and node, and the fault they follow") {
  auto topo = Gb200();
  auto inc = FromText(
      "[2026-11-30T06:02:21] n3 kernel: NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n"
      "[2026-11-30T06:02:41.004] requeue job JobId=81234 due to failure of node n3\n"
      "[2026-11-30T06:02:41.004] Requeuing JobId=81234\n"
      "[2026-11-30T06:03:00] Killing JobId=81240 on failed node n3\n"
      "[2026-11-30T06:04:00] Requeuing JobId=81250\n");
  auto t = rr::BuildReplayTimeline(inc, topo, Map("n3 r01.tray03\n"));
  CHECK(t.requeues == 2);
  CHECK(t.kills == 1);
  REQUIRE(t.job_events.size() == 3);
  CHECK(t.job_events[0].kind == "requeue");
  CHECK(t.job_events[0].job == "81234");
  CHECK(t.job_events[0].node == "n3");
  CHECK(t.job_events[0].at == doctest::Approx(20.004));
  CHECK(t.job_events[0].fault == 0);
  CHECK(t.job_events[1].kind == "kill");
  CHECK(t.job_events[1].job == "81240");
  CHECK(t.job_events[2].job == "81250");
  CHECK(t.job_events[2].node.empty());
  CHECK(t.job_events[2].fault == 0);  // no node: the latest fault before it
}

TEST_CASE("replay: NCCL timeouts, warnings and errors are the job's view, summarized, never faults") {
  auto topo = Gb200();
  auto inc = FromText(
      "[2026-11-30T06:00:00] n3 kernel: NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n"
      "[2026-11-30T06:10:00] n3 nccl: [rank0]:[E1130 06:10:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog "
      "caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600013 "
      "milliseconds before timing out.\n"
      "[2026-11-30T06:10:00] n3 nccl: [rank1]:[E1130 06:10:00.100000000 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog "
      "caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600013 "
      "milliseconds before timing out.\n");
  auto t = rr::BuildReplayTimeline(inc, topo, Map("n3 r01.tray03\n"));
  REQUIRE(t.faults.size() == 1);
  CHECK(t.nccl.timeouts == 2);
  CHECK(t.nccl.ranks == std::vector<int>{0, 1});
  CHECK(t.nccl.first_timeout == doctest::Approx(600));
  CHECK(t.nccl.first_timeout_detail.starts_with("ALLREDUCE SeqNum=5"));
  CHECK(t.not_replayed_count == 0);
}

TEST_CASE("replay: a non-fatal NVLink Xid is not a link down; short rack names in the map are the model's") {
  auto topo = Gb200();
  auto inc = FromText(
      "[2026-11-30T06:00:00] n3 kernel: NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0)\n"
      "[2026-11-30T06:01:00] n3 kernel: NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n");
  auto t = rr::BuildReplayTimeline(inc, topo, Map("n3 r1.tray3\n"));
  REQUIRE(t.faults.size() == 1);
  CHECK(t.faults[0].target == "r01.tray03.gpu2");
  REQUIRE(t.not_replayed.size() == 1);
  CHECK(t.not_replayed[0].why.find("non-fatal NVLink error") != std::string::npos);
  CheckPlan(t, topo, {});
}

TEST_CASE("replay: the imported events are stored with the run, causes and all; nothing to replay is refused") {
  rr::testing::TempDir dir("replay-store");
  const std::string src = std::string(RACKCHAOS_SOURCE_DIR);
  rr::ReplayArgs args;
  args.incidents = {src + "/scenarios/incidents/xid79-gpu-off-bus/kernel.log",
                    src + "/scenarios/incidents/xid79-gpu-off-bus/slurmctld.log"};
  args.cluster = src + "/scenarios/quickstart.yaml";
  args.gpu_map = src + "/scenarios/incidents/xid79-gpu-off-bus/gpu-map.txt";
  args.db = (dir.path / "replay.db").string();
  args.quiet = true;
  REQUIRE(rr::CmdReplay(args) == 0);
  auto store = rackchaos::reports::ReportStore::OpenForReading(args.db);
  REQUIRE(store.ok());
  auto stored = rackchaos::reports::ReadIncident(*store, 1);
  REQUIRE_MESSAGE(stored.ok(), stored.status().message());
  CHECK(stored->files == args.incidents);
  CHECK(stored->lines == 14);
  CHECK(stored->not_understood == 4);
  REQUIRE(stored->events.size() == 8);
  CHECK(stored->patterns.size() == 4);
  int caused = 0;
  for (const auto& e : stored->events) {
    if (e.kind == "xid" && e.code == 154) {
      REQUIRE(e.caused_by);
      CHECK(stored->events[static_cast<size_t>(*e.caused_by)].code == 79);
      ++caused;
    }
    if (e.kind == "job_requeue") CHECK(e.job == "81234");
    CHECK(e.axis == "wall");
  }
  CHECK(caused == 1);
  CHECK(stored->events[0].severity == "non_fatal");  // the Xid 13
  // A dmesg -T log alone names no host: nothing to replay, exit 2, and no run stored for it.
  rr::ReplayArgs hostless = args;
  hostless.incidents = {src + "/tests/runner/incident/samples/fixture_xid79_dmesg_t.log"};
  hostless.gpu_map.clear();
  CHECK(rr::CmdReplay(hostless) == 2);
  hostless.hosts = {"gpu-r01-t03"};
  hostless.gpu_map = args.gpu_map;
  CHECK(rr::CmdReplay(hostless) == 0);
  hostless.hosts = {"elsewhere.log=gpu-r01-t03"};
  CHECK(rr::CmdReplay(hostless) == 2);  // FILE=NODE names a file that is not given
}
