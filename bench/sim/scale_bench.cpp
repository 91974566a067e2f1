// Simulator scale benchmark: for each rack count R, a cluster of R gb200-nvl72 racks (in 3 regions from
// 10 racks up), a fleet of jobs (one of min(100,000, 80% of the GPUs) in whole trays, then 1k-8k GPU jobs
// up to 90% of the GPUs),
// the llama3 chaos catalogue at scale 1 over 30 simulated days and the default healer, run through the
// same ValidatePlan + ExecuteRun pipeline as `rackchaos run` (report store included).
// --catalogue failslow (issue 23 item 2) draws from bench/sim/failures-failslow.yaml instead: llama3's
// rate per class, half of it fail-slow (gpu_throttle, link_degrade, valve_fail); any other value is a
// catalogue name or file as a plan's chaos.catalogue takes it. Under each row, the work the run did: the
// telemetry samples, step reports and other observations the healer read (counted by an observer beside
// it), its detections by detector and the faults by kind (read back from the report).
//
// Each R runs in a forked child so that its peak RSS (wait4's rusage) is its own; the parent prints
// one table row per R. Issue 3's target: R = 1,778 in <= 2 s wall and <= 1 GiB peak per seed.
//
// Usage: scale_bench [--seed N] [--seeds K] [--one-process] [--days D] [--timeout S] [--catalogue C] [R...]
// (default R:
// 1 16 128 1778; --seeds K runs seeds N..N+K-1 of each R one after the other into one report database, as
// repeated `rackchaos run`s do, each in its own child: the first stores the cluster's components, the
// others find them by digest; with --one-process all K run in one child as `rackchaos sweep`'s do,
// validated against one built topology (runner::TopologyCache) whose rows' digest is computed once;
// a child still running after S seconds, default 600, is killed and reported as a timeout; with
// SCALE_BENCH_KEEP_DB set in the environment the report databases are kept and named on stderr)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bench/common/host_facts.h"
#include "cluster/observation.h"
#include "core/huge_pages.h"
#include "core/log.h"
#include "core/rng.h"
#include "reports/store.h"
#include "runner/campaign/sweep.h"
#include "runner/engine/run.h"
#include "runner/spec/validate.h"

using namespace rackchaos;

namespace {

struct BenchResult {  // what a child sends back through its pipe
  // *_cpu_s: that stage's CPU time (user + system), the figure on a machine shared with other work
  double validate_s = 0, validate_cpu_s = 0, run_s = 0, run_cpu_s = 0;
  int64_t events = 0, faults = 0, gpus = 0, jobs = 0;
  // What the healer read (ObservationCounter) and what it detected.
  int64_t samples = 0, step_reports = 0, heartbeats = 0, log_lines = 0, link_changes = 0, detections = 0;
  int exit_code = 0;
  char detail[1024] = {};  // "detections: xid 640, ...; faults: gpu_fail 710, ..."
};

// Counts the observations of a run by type, beside the healer (RunOptions::observers): it only looks.
class ObservationCounter : public cluster::ObservationSink {
 public:
  void OnObservation(const cluster::Observation& obs) override {
    if (std::holds_alternative<cluster::TelemetrySample>(obs.body)) ++r_.samples;
    else if (std::holds_alternative<cluster::StepReport>(obs.body)) ++r_.step_reports;
    else if (std::holds_alternative<cluster::HeartbeatChange>(obs.body)) ++r_.heartbeats;
    else if (std::holds_alternative<cluster::KernelLogLine>(obs.body)) ++r_.log_lines;
    else if (std::holds_alternative<cluster::LinkStateChange>(obs.body)) ++r_.link_changes;
  }
  explicit ObservationCounter(BenchResult& r) : r_(r) {}

 private:
  BenchResult& r_;
};

// "a 3, b 1" from counts by name, most first.
std::string ByCount(const std::map<std::string, int64_t>& counts) {
  std::vector<std::pair<std::string, int64_t>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, n] : v) out += (out.empty() ? "" : ", ") + name + " " + std::to_string(n);
  return out.empty() ? "none" : out;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// This process's CPU time so far: on a shared machine, wall time also counts waiting for a core.
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The plan a user would write for this benchmark, built in code.
runner::Plan FleetPlan(int racks, uint64_t seed, int days, const std::string& catalogue) {
  runner::Plan plan;
  plan.name = "scale-bench-" + std::to_string(racks);
  plan.seed = seed;
  plan.duration = Duration::Hours(24 * days);
  plan.cluster.model = "gb200-nvl72";
  plan.cluster.racks = racks;
  // Three regions from 10 racks up (issue 3: "1,778 racks in 3 regions"). A job runs inside one region,
  // so the first holds the big job (80% of the GPUs) and the others a tenth each: 1,424 + 177 + 177 at
  // 1,778 racks. Below 10 racks the two small regions would leave the first too small for the big job.
  // Jobs name no region: each takes the first with room.
  if (racks >= 10) {
    const int small = std::max(1, racks / 10);
    for (const auto& [name, n] : {std::pair<const char*, int>{"east", racks - 2 * small}, {"central", small}, {"west", small}}) {
      runner::RegionPlan region;
      region.name = name;
      region.racks = n;
      plan.cluster.regions.push_back(region);
    }
  }
  const int gpus = racks * 72, per_tray = 4;
  auto whole_trays = [&](int n) { return n / per_tray * per_tray; };
  int big = whole_trays(std::min(100000, gpus * 8 / 10));
  runner::JobSpec big_job;
  big_job.name = "big";
  big_job.gpus = big;
  plan.jobs.push_back(big_job);
  // The rest of the fleet: 1k-8k GPU jobs while they fit in 90% of the cluster (10% stay free for
  // requeues), sizes from a fixed stream so every R sees the same sequence.
  Rng sizes(0x5ca1e);
  int used = big;
  for (int k = 1;; ++k) {
    int n = whole_trays(static_cast<int>(sizes.Uniform(1000, 8000)));
    if (used + n > gpus * 9 / 10) break;
    used += n;
    runner::JobSpec job;
    job.name = "job" + std::to_string(k);
    job.gpus = n;
    plan.jobs.push_back(job);
  }
  plan.chaos.catalogue = catalogue;
  plan.chaos.scale = 1;
  plan.healer.policy = "default";
  return plan;
}

// `topologies`: shared by the seeds of one process (--one-process, as `rackchaos sweep`'s), or null.
BenchResult RunOne(int racks, uint64_t seed, int days, const std::string& catalogue, const std::string& db,
                   runner::TopologyCache* topologies) {
  BenchResult r;
  runner::Plan plan = FleetPlan(racks, seed, days, catalogue);
  auto t0 = std::chrono::steady_clock::now();
  const double validate_cpu0 = CpuSeconds();
  auto spec = runner::ValidatePlan(plan, {std::nullopt, "", topologies});
  r.validate_s = Since(t0);
  r.validate_cpu_s = CpuSeconds() - validate_cpu0;
  if (!spec.ok()) {
    std::fprintf(stderr, "R=%d: %s\n", racks, spec.status().ToString().c_str());
    r.exit_code = -1;
    return r;
  }
  r.faults = static_cast<int64_t>(spec->faults.size());
  r.gpus = static_cast<int64_t>(spec->topology->gpus().size());
  r.jobs = static_cast<int64_t>(spec->jobs.size());
  runner::RunOptions options;
  options.db_path = db;
  options.command_line = "scale_bench";
  options.print_summary = false;
  ObservationCounter counter(r);
  options.observers = {&counter};
  t0 = std::chrono::steady_clock::now();
  double cpu0 = CpuSeconds();
  runner::RunOutcome out = runner::ExecuteRun(plan, *spec, options);
  r.run_s = Since(t0);
  r.run_cpu_s = CpuSeconds() - cpu0;
  r.exit_code = static_cast<int>(out.code);
  // Read back after the timing: the run's events, its detections by detector and its faults by kind.
  if (auto store = reports::ReportStore::OpenReadOnly(db); store.ok()) {
    if (auto n = store->CountEvents(out.run_id); n.ok()) r.events = *n;
    std::map<std::string, int64_t> detectors, kinds;
    if (auto rows = store->ReadDetections(out.run_id); rows.ok())
      for (const reports::DetectionRow& d : *rows) ++detectors[d.detector];
    if (auto rows = store->ReadFaults(out.run_id); rows.ok())
      for (const reports::FaultRow& f : *rows) ++kinds[f.kind];
    for (const auto& [name, n] : detectors) r.detections += n;
    std::snprintf(r.detail, sizeof r.detail, "detections: %s; faults: %s", ByCount(detectors).c_str(),
                  ByCount(kinds).c_str());
  }
  return r;
}

// One table row; `r` null when the child sent none (killed at the timeout, or failed).
void PrintRow(int racks, uint64_t seed, const BenchResult* r, int status, int timeout_s, double peak_mib) {
  if (!r) {
    std::printf("%6d %5llu %8d %5s %7s %10s %10s %10s %10s %9s %12s %8s %8s %9s %9.0f %5s %9s %7s %6s\n", racks,
                static_cast<unsigned long long>(seed), racks * 72, "-", "-", "-", "-",
                WIFSIGNALED(status) ? (">" + std::to_string(timeout_s)).c_str() : "-", "-", "-", "-", "-", "-", "-",
                peak_mib, WIFSIGNALED(status) ? "kill" : "err", "-", "-", "-");
    std::fflush(stdout);
    return;
  }
  double total = r->validate_s + r->run_s;
  // The growth per rack and per event (issue 23 item 3): validate and run CPU together, per unit.
  const double cpu = r->validate_cpu_s + r->run_cpu_s;
  std::printf("%6d %5llu %8lld %5lld %7lld %10.3f %10.3f %10.3f %10.3f %9lld %12.0f %8.3f %8.3f %9.2f %9.0f %5d %9lld %7lld %6lld\n",
              racks, static_cast<unsigned long long>(seed), static_cast<long long>(r->gpus),
              static_cast<long long>(r->jobs), static_cast<long long>(r->faults), r->validate_s, r->validate_cpu_s,
              r->run_s, r->run_cpu_s,
              static_cast<long long>(r->events), total > 0 ? static_cast<double>(r->events) / total : 0, cpu,
              cpu * 1e3 / racks, r->events > 0 ? cpu * 1e6 / static_cast<double>(r->events) : 0, peak_mib,
              r->exit_code, static_cast<long long>(r->samples), static_cast<long long>(r->step_reports),
              static_cast<long long>(r->detections));
  // The work the run did (issue 23 item 2): what the healer read, what it detected, what was injected.
  std::printf("       heartbeat changes %lld, kernel log lines %lld, link changes %lld; %s\n",
              static_cast<long long>(r->heartbeats), static_cast<long long>(r->log_lines),
              static_cast<long long>(r->link_changes), r->detail);
  std::fflush(stdout);
}

// Runs seeds [first, first + count) of R racks one after the other in one forked child (its peak RSS is
// its own, for all of them; every row of the child shows it), the later seeds sharing the first's
// topology as a sweep's do, and prints one row per seed.
void RunChild(int racks, uint64_t first, int count, int days, int timeout_s, const std::string& catalogue,
              const std::string& db) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(3);
  pid_t child = fork();
  if (child == 0) {  // the measured runs, alone in their process
    close(fds[0]);
    alarm(static_cast<unsigned>(timeout_s) * static_cast<unsigned>(count));
    runner::TopologyCache topologies;
    if (count > 1) runner::KeepFreedMemoryForNextRun();  // as RunSweep does
    for (uint64_t seed = first; seed < first + static_cast<uint64_t>(count); ++seed) {
      BenchResult r = RunOne(racks, seed, days, catalogue, db, &topologies);
      if (write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) _exit(3);
    }
    _exit(0);
  }
  close(fds[1]);
  std::vector<BenchResult> results;
  for (BenchResult r; read(fds[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r);) results.push_back(r);
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  double peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
  for (int k = 0; k < count; ++k)
    PrintRow(racks, first + static_cast<uint64_t>(k), k < static_cast<int>(results.size()) ? &results[k] : nullptr,
             status, timeout_s, peak_mib);
}

}  // namespace

int main(int argc, char** argv) {
  UseHugePagesForHeap(argv);  // as rackchaos does (core/huge_pages.h)
  uint64_t seed = 1;
  int days = 30, timeout_s = 600, seeds = 1;
  bool one_process = false;
  std::string catalogue = "llama3";
  std::vector<int> sizes;
  const char* usage =
      "usage: scale_bench [--seed N] [--seeds K] [--one-process] [--days D] [--timeout S] [--catalogue C] [R...]\n"
      "  R: rack counts, 1-20000 each (default 1 16 128 1778); see the comment at the top of\n"
      "  bench/sim/scale_bench.cpp and bench/README.md for what each column measures\n";
  // A whole number in [lo, hi], or a usage error naming the option: a typo must not run a 20-minute bench.
  auto number = [&](const char* what, const char* text, long long lo, long long hi) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
      std::fprintf(stderr, "scale_bench: %s must be a whole number from %lld to %lld, not '%.40s'\n%s", what, lo, hi,
                   text, usage);
      std::exit(2);
    }
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      std::printf("%s", usage);
      return 0;
    } else if (a == "--seed" && has_value) {
      seed = static_cast<uint64_t>(number("--seed", argv[++i], 0, 1LL << 62));
    } else if (a == "--seeds" && has_value) {
      seeds = static_cast<int>(number("--seeds", argv[++i], 1, 10000));
    } else if (a == "--days" && has_value) {
      days = static_cast<int>(number("--days", argv[++i], 1, 3650));
    } else if (a == "--timeout" && has_value) {
      timeout_s = static_cast<int>(number("--timeout", argv[++i], 1, 86400));
    } else if (a == "--one-process") {
      one_process = true;
    } else if (a == "--catalogue" && has_value) {
      catalogue = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "scale_bench: unknown option or missing value: '%.40s'\n%s", a.c_str(), usage);
      return 2;
    } else {
      sizes.push_back(static_cast<int>(number("a rack count", a.c_str(), 1, 20000)));
    }
  }
  if (sizes.empty()) sizes = {1, 16, 128, 1778};
  const std::string catalogue_name = catalogue;
  if (catalogue == "failslow") catalogue = RACKCHAOS_SOURCE_DIR "/bench/sim/failures-failslow.yaml";
  InitLogging(spdlog::level::err);

  std::printf("gb200-nvl72, %s chaos x1, %d days, default healer, seeds %llu-%llu%s\n", catalogue_name.c_str(), days,
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed + seeds - 1),
              one_process ? ", one process" : ", a process each");
  // What the figures depend on besides the code: the heap's pages (bench/README.md, "Huge pages, measured
  // again") and how busy the machine is.
  std::printf("heap on huge pages: %s; load average at start: %s\n", HeapOnHugePages() ? "yes" : "no", bench::LoadAverage().c_str());
  std::printf("%6s %5s %8s %5s %7s %10s %10s %10s %10s %9s %12s %8s %8s %9s %9s %5s %9s %7s %6s\n", "racks", "seed", "gpus",
              "jobs", "faults", "validate_s", "val_cpu_s", "run_s", "run_cpu_s", "events", "events/s", "cpu_s", "ms/rack",
              "us/event", "peak_MiB", "exit", "samples", "steps", "detect");
  for (int racks : sizes) {
    std::string db = (std::filesystem::temp_directory_path() /
                      ("scale-bench-" + std::to_string(getpid()) + "-" + std::to_string(racks) + ".db")).string();
    if (one_process) RunChild(racks, seed, seeds, days, timeout_s, catalogue, db);
    else
      for (uint64_t s = seed; s < seed + static_cast<uint64_t>(seeds); ++s)
        RunChild(racks, s, 1, days, timeout_s, catalogue, db);
    if (std::getenv("SCALE_BENCH_KEEP_DB")) std::fprintf(stderr, "R=%d: kept %s\n", racks, db.c_str());
    else for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  }
  std::printf("load average at end: %s\n", bench::LoadAverage().c_str());
  return 0;
}
