// Slurm importer: slurmctld log (plain and through the journal), scontrol show node, sacctmgr show
// event (-P and fixed width), sinfo -R, job requeue, hostlists.
#include <doctest/doctest.h>

#include "import_util.h"
#include "runner/incident/importer.h"
#include "runner/incident/log_line.h"
#include "runner/incident/zone.h"

namespace ri = rackchaos::incident;
using rackchaos::incident::testing::Import;

namespace {

double T(const char* iso) { return *ri::ParseIsoTime(iso); }

}  // namespace

TEST_CASE("incident slurm: slurmctld drain with reason, resume, down, requeue") {
  auto inc = Import(
      "[2026-11-30T06:03:10.123] update_node: node gpu-r01-t03 reason set to: Xid 79 GPU fell off the bus\n"
      "[2026-11-30T06:03:10.124] update_node: node gpu-r01-t03 state set to DRAINING\n"
      "[2026-11-30T06:03:11.000] Requeuing JobId=4242\n"
      "[2026-11-30T06:40:00.000] error: Nodes gpu-r01-t[05-06] not responding, setting DOWN\n"
      "[2026-11-30T06:41:00.000] Node gpu-r01-t05 now responding\n"
      "[2026-11-30T07:03:10.000] update_node: node gpu-r01-t03 state set to IDLE\n"
      "[2026-11-30T07:04:00.000] sched: Allocate JobId=4243 NodeList=gpu-r01-t[01-02]\n");
  REQUIRE(inc.events.size() == 5);
  CHECK(inc.events[0].kind == ri::EventKind::kNodeDrain);
  CHECK(inc.events[0].host == "gpu-r01-t03");
  CHECK(inc.events[0].detail == "Xid 79 GPU fell off the bus");
  CHECK(inc.events[0].time.seconds == doctest::Approx(T("2026-11-30T06:03:10.124")));
  CHECK(inc.events[1].kind == ri::EventKind::kJobRequeue);
  CHECK(inc.events[1].code == 4242);
  CHECK(inc.events[2].kind == ri::EventKind::kNodeDown);
  CHECK(inc.events[2].host == "gpu-r01-t05");
  CHECK(inc.events[3].host == "gpu-r01-t06");
  CHECK(inc.events[4].kind == ri::EventKind::kNodeResume);
  CHECK(inc.events[4].detail.empty());
  CHECK(inc.not_understood == 1);  // the allocation line
}

TEST_CASE("incident slurm: slurmctld lines through journalctl keep host and tag") {
  auto inc = Import(
      "Nov 30 06:03:10 ctl01 slurmctld[812]: update_node: node gpu07 reason set to: nvlink\n"
      "Nov 30 06:03:10 ctl01 slurmctld[812]: update_node: node gpu07 state set to DRAINED\n");
  REQUIRE(inc.events.size() == 1);
  CHECK(inc.events[0].host == "gpu07");
  CHECK(inc.events[0].detail == "nvlink");
}

TEST_CASE("incident slurm: scontrol show node records give drain time and reason") {
  auto inc = Import(
      "NodeName=gpu07 Arch=aarch64 CoresPerSocket=72\n"
      "   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1\n"
      "   Reason=Xid 79 [root@2026-11-30T06:03:10]\n"
      "\n"
      "NodeName=gpu08 Arch=aarch64 CoresPerSocket=72\n"
      "   State=DOWN* ThreadsPerCore=1\n"
      "   Reason=Not responding [slurm@2026-11-30T06:10:00]\n");
  REQUIRE(inc.events.size() == 2);
  CHECK(inc.events[0].kind == ri::EventKind::kNodeDrain);
  CHECK(inc.events[0].host == "gpu07");
  CHECK(inc.events[0].detail == "Xid 79");
  CHECK(inc.events[0].time.seconds == doctest::Approx(T("2026-11-30T06:03:10")));
  CHECK(inc.events[1].kind == ri::EventKind::kNodeDown);
  CHECK(inc.events[1].host == "gpu08");
  CHECK(inc.not_understood == 0);
}

TEST_CASE("incident slurm: sacctmgr show event parsable and fixed width") {
  auto pipe = Import(
      "Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"
      "c1|gpu[07-08]|2026-11-30T06:03:10|2026-11-30T07:00:00|DRAIN|Xid 79|root\n"
      "c1||2026-11-30T00:00:00|Unknown||Cluster Registered TRES|\n");
  REQUIRE(pipe.events.size() == 4);
  CHECK(pipe.events[0].kind == ri::EventKind::kNodeDrain);
  CHECK(pipe.events[0].host == "gpu07");
  CHECK(pipe.events[1].host == "gpu08");
  CHECK(pipe.events[2].kind == ri::EventKind::kNodeResume);
  CHECK(pipe.not_understood == 0);

  auto fixed = Import(
      "   Cluster        NodeName           TimeStart             TimeEnd  State                         Reason       "
      "User \n"
      "---------- --------------- ------------------- ------------------- ------ ------------------------------ "
      "---------- \n"
      "        c1           gpu07 2026-11-30T06:03:10             Unknown  DOWN* Not responding                 "
      "slurm(64+ \n");
  REQUIRE(fixed.events.size() == 1);
  CHECK(fixed.events[0].kind == ri::EventKind::kNodeDown);
  CHECK(fixed.events[0].host == "gpu07");
  CHECK(fixed.events[0].detail.starts_with("Not responding"));
}

TEST_CASE("incident slurm: sinfo -R rows with a reason of several words") {
  auto inc = Import(
      "REASON               USER      TIMESTAMP           NODELIST\n"
      "Xid 79 fell off bus  root      2026-11-30T06:03:10 gpu[07,09]\n");
  REQUIRE(inc.events.size() == 2);
  CHECK(inc.events[0].detail == "Xid 79 fell off bus");
  CHECK(inc.events[1].host == "gpu09");
}

TEST_CASE("incident slurm: hostlists expand, bounded, malformed ones kept as written") {
  CHECK(ri::ExpandHostlist("gpu[01-03,07],cpu1", 100) ==
        std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu07", "cpu1"});
  CHECK(ri::ExpandHostlist("n[1-1000000]", 5).size() == 5);
  CHECK(ri::ExpandHostlist("n[x-3]", 5) == std::vector<std::string>{"n[x-3]"});
  CHECK(ri::ExpandHostlist("", 5).empty());
  // The check before expanding counts what ExpandHostlist would make, plain names and kept ones too.
  CHECK(ri::HostlistProblem("gpu[01-03,07],cpu1,n[x-3]", 6).empty());
  CHECK(ri::HostlistProblem("gpu[01-03,07],cpu1,n[x-3]", 5) ==
        "the hostlist 'gpu[01-03,07],cpu1,n[x-3]' names 6 nodes; expected 1 to 5 on one line");
  CHECK(ri::HostlistProblem("a,n[1-2,9-3]", 100) ==
        "the hostlist range '9-3' runs backwards; expected LOW-HIGH with LOW <= HIGH");
}

TEST_CASE("incident slurm: --tz moves zone-less stamps to UTC and leaves stamps with a zone alone") {
  const std::string log =
      "[2026-07-01T08:00:00.000] update_node: node n1 state set to DRAINING\n"
      "2026-07-01T08:00:00+00:00 n2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n";
  auto utc = Import(log);
  REQUIRE(utc.events.size() == 2);
  CHECK(utc.events[0].time.seconds == doctest::Approx(T("2026-07-01T08:00:00Z")));
  CHECK(utc.events[1].time.seconds == doctest::Approx(T("2026-07-01T08:00:00Z")));

  ri::ImportOptions east;
  east.zone = *ri::WallZone::Parse("+02:00");
  auto shifted = Import(log, east);
  REQUIRE(shifted.events.size() == 2);
  // 08:00 at +02:00 is 06:00 UTC: the drain now comes first; the zoned kernel line keeps 08:00 UTC.
  CHECK(shifted.events[0].kind == ri::EventKind::kNodeDrain);
  CHECK(shifted.events[0].time.seconds == doctest::Approx(T("2026-07-01T06:00:00Z")));
  CHECK(shifted.events[1].time.seconds == doctest::Approx(T("2026-07-01T08:00:00Z")));
  CHECK(ri::WallZone::Parse("-0530").ok());
}

TEST_CASE("incident slurm: an IANA zone applies daylight saving by date, also to year-less syslog stamps") {
  ri::ImportOptions berlin;
  berlin.zone = *ri::WallZone::Parse("Europe/Berlin");
  berlin.year = 2026;
  auto inc = Import(
      "[2026-01-15T12:00:00] update_node: node n1 state set to DRAINING\n"
      "Jul 15 12:00:00 n2 slurmctld[7]: update_node: node n2 state set to DRAINING\n",
      berlin);
  REQUIRE(inc.events.size() == 2);
  CHECK(inc.events[0].time.seconds == doctest::Approx(T("2026-01-15T11:00:00Z")));  // CET, +01:00
  CHECK(inc.events[1].time.seconds == doctest::Approx(T("2026-07-15T10:00:00Z")));  // CEST, +02:00
}

TEST_CASE("incident slurm: a bad --tz is refused with what would be valid") {
  for (const char* bad : {"", "+25:00", "+02:7", "Mars/Olympus", "../../etc/passwd", "/etc/localtime", "EST5EDT;id"}) {
    auto z = ri::WallZone::Parse(bad);
    REQUIRE_FALSE(z.ok());
    CHECK(z.status().message().find("such as +02:00") != std::string::npos);
  }
}
