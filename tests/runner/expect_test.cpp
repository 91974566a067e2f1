#include <doctest/doctest.h>

#include "runner/spec/expect.h"
#include "runner/engine/score.h"

using namespace rackchaos;

namespace {
RunMetrics Sample() {
  RunMetrics m;
  for (int i = 1; i <= 4; ++i) {
    FaultMetrics f;
    f.fault = static_cast<FaultId>(i);
    f.time_to_detect = Duration::Seconds(10 * i);
    f.time_to_recover = Duration::Minutes(5 * i);
    f.jobs_touched = i == 4 ? 2 : 1;
    f.gpus_direct = 1;
    m.faults.push_back(f);
  }
  JobMetrics j;
  j.ettr = 0.91;
  m.jobs.push_back(j);
  m.precision = 0.75;
  return m;
}
}  // namespace

TEST_CASE("gates parse metric, operator and value with units") {
  auto g = runner::ParseGate("ttr.p95 < 30m");
  REQUIRE(g.ok());
  CHECK(g->metric == "ttr.p95");
  CHECK(g->op == "<");
  CHECK(g->value == doctest::Approx(1800));
  CHECK(runner::ParseGate("ettr.min >= 90%")->value == doctest::Approx(0.9));
  CHECK_FALSE(runner::ParseGate("ttr.max 30m").ok());
  CHECK_FALSE(runner::ParseGate("ttr.max < 30").ok());  // a time needs a unit
  CHECK_FALSE(runner::ParseGate("healer.precision == x").ok());
}

TEST_CASE("gates evaluate against metrics") {
  RunMetrics m = Sample();
  auto eval = [&](const char* text) { return runner::EvaluateGate(*runner::ParseGate(text), m); };
  CHECK(eval("ttr.max <= 20m").passed);
  CHECK_FALSE(eval("ttr.max < 20m").passed);
  CHECK(eval("ttd.p50 == 20s").passed);  // nearest rank of 10,20,30,40 s
  CHECK(eval("ttr.p95 == 20m").passed);
  CHECK(eval("blast.jobs.max <= 2").passed);
  CHECK_FALSE(eval("blast.jobs.max <= 1").passed);
  CHECK(eval("ettr.min >= 0.9").passed);
  CHECK_FALSE(eval("healer.precision == 1").passed);
  CHECK(eval("ttr.max < 30m").message == "ttr.max < 30m: 20.0m (pass)");
}

TEST_CASE("time gates skip faults that had no effect") {
  RunMetrics m = Sample();
  FaultMetrics idle;  // e.g. a crash on an idle GPU: nothing to detect
  idle.fault = 5;
  m.faults.push_back(idle);
  CHECK(runner::EvaluateGate(*runner::ParseGate("ttd.max < 1m"), m).passed);
  m.faults.back().gpus_direct = 1;  // the same fault with an effect and no detection fails the gate
  CHECK_FALSE(runner::EvaluateGate(*runner::ParseGate("ttd.max < 1m"), m).passed);
}

// A PSU or a shelf lost within the rack's redundancy touches no GPU and no job, but its BMC reports it
// and the healer detects and isolates it (scenarios/power_shelf.yaml): the fault table shows those times,
// and the gates see them (before, they said "no data, no fault had an effect").
TEST_CASE("time gates see the times the fault table shows, also of a fault that touched no GPU") {
  RunMetrics m;
  FaultMetrics psu;
  psu.fault = 1;
  psu.kind = "power_fail";
  psu.time_to_detect = Duration::Millis(4900);
  psu.time_to_isolate = psu.time_to_recover = Duration::Millis(24900);
  m.faults.push_back(psu);
  FaultMetrics unseen;  // a crash on an idle GPU nobody noticed: no effect, no time, left out
  unseen.fault = 2;
  m.faults.push_back(unseen);
  runner::GateResult ttd = runner::EvaluateGate(*runner::ParseGate("ttd.max < 15s"), m);
  CHECK(ttd.passed);
  CHECK(ttd.message == "ttd.max < 15s: 4.9s (pass)");
  CHECK(runner::EvaluateGate(*runner::ParseGate("ttd.max < 4s"), m).message == "ttd.max < 4s: 4.9s (FAIL)");
  CHECK(runner::EvaluateGate(*runner::ParseGate("tti.max < 1m"), m).message == "tti.max < 1m: 24.9s (pass)");
  CHECK(runner::EvaluateGate(*runner::ParseGate("ttr.max < 1m"), m).message == "ttr.max < 1m: 24.9s (pass)");
  // While the run goes on, the unseen fault gets no made-up time: it is not in the gate yet either.
  CHECK(runner::EvaluateGateSoFar(*runner::ParseGate("ttd.max < 15s"), m, Duration::Hours(1)).passed);
  // An unseen fault that did have an effect counts as never, so far as late as it is.
  m.faults[1].gpus_direct = 1;
  CHECK_FALSE(runner::EvaluateGateSoFar(*runner::ParseGate("ttd.max < 15s"), m, Duration::Hours(1)).passed);
}

TEST_CASE("a fault never recovered fails every time gate") {
  RunMetrics m = Sample();
  m.faults[1].time_to_recover.reset();
  auto r = runner::EvaluateGate(*runner::ParseGate("ttr.max < 100d"), m);
  CHECK_FALSE(r.passed);
  CHECK(r.message.find("never") != std::string::npos);
}

TEST_CASE("expect: time to isolate counts the faults that needed isolation - isolated or missed, not a crashed process") {
  RunMetrics m = Sample();
  for (FaultMetrics& f : m.faults) f.time_to_isolate = Duration::Seconds(20 + static_cast<int>(f.fault));
  FaultMetrics crash;  // a crashed process that stopped a job: software, nothing to isolate, not missed
  crash.fault = 5;
  crash.jobs_touched = 1;
  m.faults.push_back(crash);
  auto tti = [&](const char* text) { return runner::EvaluateGate(*runner::ParseGate(text), m).passed; };
  CHECK(tti("tti.max < 1m"));
  CHECK(tti("tti.p50 == 22s"));  // nearest rank of 21-24 s: the crash is not among them
  m.missed_faults = {"#5 gpu_fail r01.tray03.gpu2"};  // the same fault needing isolation and missed
  CHECK_FALSE(tti("tti.max < 100d"));
}

TEST_CASE("verdict: an engine error beats interrupted beats host errors beats abort beats a failing gate") {
  runner::RunEnd end{.error = "IoError: disk full", .interrupted = true, .stop_reason = "interrupted by signal",
                     .host_error = "2 steps failed", .aborted = true, .abort_reason = "at 5m: 3 jobs down",
                     .failed_gate = "ttr.p95 <= 10m: 12m"};
  auto v = runner::Verdict(end);
  CHECK(std::string(v.status) == "error");
  CHECK(v.code == rackchaos::ExitCode::kRuntimeError);
  CHECK(v.reason == "IoError: disk full");
  end.error.clear();
  v = runner::Verdict(end);
  CHECK(std::string(v.status) == "interrupted");
  CHECK(v.code == rackchaos::ExitCode::kInterrupted);
  CHECK(v.reason == "interrupted by signal");
  end.interrupted = false;
  v = runner::Verdict(end);
  CHECK(std::string(v.status) == "error");
  CHECK(v.code == rackchaos::ExitCode::kRuntimeError);
  CHECK(v.reason == "2 steps failed");
  end.host_error.clear();
  v = runner::Verdict(end);
  CHECK(std::string(v.status) == "aborted");
  CHECK(v.code == rackchaos::ExitCode::kExpectationFailed);
  CHECK(v.reason == "at 5m: 3 jobs down");
  end.aborted = false;
  v = runner::Verdict(end);
  CHECK(std::string(v.status) == "failed");
  CHECK(v.reason == "ttr.p95 <= 10m: 12m");
  end.failed_gate.clear();
  v = runner::Verdict(end);
  CHECK(std::string(v.status) == "passed");
  CHECK(v.code == rackchaos::ExitCode::kPass);
  CHECK(v.reason.empty());
}

TEST_CASE("a gate over nothing says no data and fails unless it may be empty (issue 25)") {
  RunMetrics none;  // a run whose chaos drew no fault and that ran no job
  runner::Gate ttr = *runner::ParseGate("ttr.max < 30m");
  runner::GateResult r = runner::EvaluateGate(ttr, none);
  CHECK_FALSE(r.passed);
  CHECK(r.message == "ttr.max < 30m: no data, no fault had an effect (FAIL: it measured nothing; allow_empty: true lets it pass)");
  CHECK_FALSE(runner::EvaluateGate(*runner::ParseGate("ettr.min >= 0.9"), none).passed);
  ttr.allow_empty = true;
  r = runner::EvaluateGate(ttr, none);
  CHECK(r.passed);
  CHECK(r.message == "ttr.max < 30m: no data, no fault had an effect (pass: allow_empty)");
  // While running, no data yet is no failure: the run may still produce some.
  ttr.allow_empty = false;
  CHECK(runner::EvaluateGateSoFar(ttr, none, Duration::Minutes(5)).passed);
  // Metrics of the whole run always have a value.
  CHECK(runner::EvaluateGate(*runner::ParseGate("healer.false_isolations == 0"), none).passed);
  CHECK(runner::SubjectOf("ttd.p95") == runner::GateSubject::kFaults);
  CHECK(runner::SubjectOf("goodput.mean") == runner::GateSubject::kJobs);
  CHECK(runner::SubjectOf("healer.recall") == runner::GateSubject::kRun);
}

TEST_CASE("expect: job.mttf (hours up per failure) and job.failures_per_day per job - never stopped: MTTF never") {
  RunMetrics m;
  JobMetrics a, b;
  a.up = Duration::Hours(10);
  a.failures = 4;  // 2.5 h between failures, 9.6 a day
  b.up = Duration::Hours(24);
  m.jobs = {a, b};
  auto eval = [&](const char* text) {
    auto gate = runner::ParseGate(text);
    REQUIRE_MESSAGE(gate.ok(), gate.status().message());
    return runner::EvaluateGate(*gate, m);
  };
  CHECK(eval("job.mttf.min >= 2.5").passed);
  CHECK_FALSE(eval("job.mttf.min > 2.5").passed);
  CHECK(eval("job.mttf.mean > 1000").message == "job.mttf.mean > 1000: never (pass)");
  CHECK(eval("job.failures_per_day.max == 9.6").passed);
  CHECK(eval("job.failures_per_day.mean == 4.8").passed);
  CHECK_FALSE(runner::ParseGate("job.mttf.max > 1").ok());  // a floor metric: min and mean
}
