// NCCL (through PyTorch's watchdog and NCCL's own WARN lines) and slurmctld's requeues and kills, from
// verbatim public samples (tests/runner/incident/samples/SOURCES.md).
#include <doctest/doctest.h>

#include <string>

#include "runner/incident/importer.h"
#include "tests/runner/incident/import_util.h"

namespace ri = rackchaos::incident;
using ri::testing::Kind;

namespace {

ri::Incident FromSample(const std::string& name, ri::ImportOptions options = {}) {
  return ri::testing::ImportSourceFile("tests/runner/incident/samples/" + name, options);
}

}  // namespace

TEST_CASE("family NCCL watchdog timeout, PyTorch 1.x/2.0 (no time) and 2.2+ (glog stamp, per-rank prefix)") {
  auto old = FromSample("nccl_watchdog_torch1x.log");
  REQUIRE(old.events.size() == 3);
  for (const auto& e : old.events) CHECK(Kind(e) == "nccl_timeout");
  CHECK(old.events[0].rank == 1);
  CHECK(old.events[0].detail == "ALLREDUCE SeqNum=469508 ran 1802212 ms (timeout 1800000 ms)");
  CHECK(old.events[0].time.axis == ri::TimeAxis::kNone);
  CHECK(old.not_understood == 0);

  auto now = FromSample("nccl_watchdog_torch2x.log", {2026, std::nullopt, {}, {}, {}});
  REQUIRE(now.events.size() == 2);  // the watchdog's exception and teardown lines are follow-ups
  CHECK(now.events[0].rank == 4);
  CHECK(now.events[1].rank == 6);
  CHECK(now.events[0].time.axis == ri::TimeAxis::kWall);
  // "E318 07:39:53.792630246": March 18, in the year given.
  CHECK(now.events[0].time.seconds == doctest::Approx(1773819593.792630246).epsilon(1e-12));
  CHECK(now.events[0].detail.starts_with("COALESCED SeqNum=610 ran 600086 ms"));
  CHECK(now.not_understood == 0);
}

TEST_CASE("family NCCL WARN: NET/IB completion errors (old and new wording), async events, Open MPI stamps") {
  auto w = FromSample("nccl_warn_netib.log");
  REQUIRE(w.events.size() == 4);  // the NCCL INFO lines are understood and dropped
  // Lines without a time come first, in file order; the Open MPI stamped one is on the wall axis.
  CHECK(Kind(w.events[0]) == "nccl_warn");
  CHECK(w.events[0].host == "H100-2");
  CHECK(w.events[0].device == 1);
  CHECK(w.events[0].detail.starts_with("NET/IB : Got completion from peer"));
  CHECK(w.events[1].host == "kp-ddp-worker-0");
  CHECK(w.events[1].device == 4);
  CHECK(w.events[2].host == "node-0");
  CHECK(w.events[2].detail.find("async fatal event on QP") != std::string::npos);
  CHECK(w.events[3].time.axis == ri::TimeAxis::kWall);
  CHECK(w.events[3].host == "container-e275-1553839402050-12124-01-000057");
  CHECK(w.events[3].device == 0);
  CHECK(w.events[3].detail == "NET/IB : Got async event : local catastrophic error");
  CHECK(w.not_understood == 0);
}

TEST_CASE("family NCCL error surfaced to the application, with its ncclRemoteError and 'Last error:' lines") {
  auto e = FromSample("nccl_error_remote.log");
  REQUIRE(e.events.size() == 1);
  CHECK(Kind(e.events[0]) == "nccl_error");
  CHECK(e.events[0].detail == "remote process exited or there was a network error");
  CHECK(e.not_understood == 0);
}

TEST_CASE("family slurmctld requeue and kill: job id and failed node kept, 'Requeuing JobId=' the same requeue") {
  auto r = FromSample("slurmctld_requeue_parallelcluster.log");
  int requeues = 0;
  for (const auto& ev : r.events) {
    if (Kind(ev) != "job_requeue") continue;
    ++requeues;
    CHECK(ev.job == "10");
    CHECK(ev.host == "a10g-1x-spot-dy-a10g-1x-spot-cr-0-1");
  }
  CHECK(requeues == 1);
  ri::IncidentImporter importer;
  importer.ImportText(
      "[2026-11-30T05:03:19.000] Killing JobId=12210_17(12308) on failed node master\n"
      "[2026-11-30T05:04:00.000] requeue job 81234 due to failure of node gpu07\n"
      "[2026-11-30T05:04:10.000] validate_node_specs: Node gpu08 unexpectedly rebooted boot_time=1795989000 last "
      "response=1795988900\n"
      "[2026-11-30T05:09:00.000] node_did_resp: node gpu08 returned to service\n",
      "slurmctld.log");
  auto k = importer.Finish();
  REQUIRE(k.events.size() == 4);
  CHECK(Kind(k.events[0]) == "job_kill");
  CHECK(k.events[0].job == "12210_17(12308)");
  CHECK(k.events[0].code == 12210);
  CHECK(k.events[0].host == "master");
  CHECK(Kind(k.events[1]) == "job_requeue");
  CHECK(k.events[1].job == "81234");
  CHECK(Kind(k.events[2]) == "node_down");
  CHECK(k.events[2].detail == "Node unexpectedly rebooted");
  CHECK(Kind(k.events[3]) == "node_resume");
}

TEST_CASE("family sacctmgr show event -P with padded cells, no TimeEnd column and lower-case states") {
  auto s = FromSample("sacctmgr_parsable2_padded.txt");
  REQUIRE(s.events.size() == 1);
  CHECK(Kind(s.events[0]) == "node_drain");
  CHECK(s.events[0].host == "pm0123");
  CHECK(s.events[0].detail == "node unexpected reboot");
}
