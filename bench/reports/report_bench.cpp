// Report store benchmark: writes one run of N events (default 1,000,000) in the runner's batch size,
// then renders it in every format, printing wall times. Issue 7's targets: writing <= 2 s, each
// render <= 2 s.
//
// Usage: report_bench [EVENTS] [DB_PATH] [--write-only]   (default 1000000, a fresh file under /tmp;
// --write-only skips the renders, e.g. to profile the writer alone)
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/metrics.h"
#include "reports/render.h"
#include "reports/store.h"
#include "reports/store_state.h"  // StoreAccess: RACKCHAOS_BENCH_PRAGMAS runs on the store's own connection

namespace rr = rackchaos::reports;
using namespace rackchaos;

namespace {

constexpr size_t kBatch = 20000;  // as runner/engine/run.cpp's RecordingSink

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Check(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

// A mix shaped like a long simulated run: mostly job progress and physics telemetry, a fault every
// 10,000 events with its detection, isolation, actions and revert.
Event MakeEvent(size_t i) {
  Time at = Duration::Millis(static_cast<int64_t>(i) * 50);
  auto fault = static_cast<FaultId>(i / 10000 + 1);
  auto comp = static_cast<ComponentId>(i % 72 + 1);
  switch (i % 10000) {
    case 0: return {at, FaultInjected{fault, "gpu_throttle", comp, -1, "r01.tray05.gpu1", "power_cap=600W"}};
    case 20: return {at, Detected{fault, "straggler", comp, "step time 1.8x the median"}};
    case 40: return {at, Isolated{comp, "gpu", {fault}, "straggler"}};
    case 41: return {at, ActionTaken{"drain", comp, kNoJob, true, "scontrol update state=drain"}};
    case 5000: return {at, FaultReverted{fault, "duration ended"}};
    default: break;
  }
  if (i % 3 == 0) return {at, PhysicsChanged{comp, "gpu_temp_c", 60.0 + static_cast<double>(i % 30), kNoFault}};
  if (i % 97 == 0) return {at, Checkpointed{static_cast<JobId>(i % 4), static_cast<double>(i)}};
  return {at, JobChanged{static_cast<JobId>(i % 4), JobState::kRunning, static_cast<double>(i) / 4, 1.25,
                         (i % 10000) < 60 ? 0.5 : 1.0, 64, {}, kNoFault, "", {1, 2, 3, 4}}};
}

RunMetrics MakeMetrics(size_t faults) {
  RunMetrics m;
  for (size_t f = 0; f < faults; ++f) {
    FaultMetrics fm;
    fm.fault = static_cast<FaultId>(f + 1);
    fm.kind = "gpu_throttle";
    fm.target = "r01.tray05.gpu1";
    fm.injected = Duration::Millis(static_cast<int64_t>(f) * 500000);
    fm.time_to_detect = Duration::Seconds(1);
    fm.time_to_recover = Duration::Seconds(60 + static_cast<int64_t>(f % 7));
    fm.gpus_direct = 1;
    fm.gpus_collateral = 63;
    fm.jobs_touched = 1;
    m.faults.push_back(fm);
  }
  for (JobId j = 0; j < 4; ++j) m.jobs.push_back({j, "job" + std::to_string(j), 64, {}, {}, 0.9, 0.9, 1, 1000});
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  std::string path = argc > 2 ? argv[2] : (std::filesystem::temp_directory_path() / "rackchaos_report_bench.db").string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);

  auto store = rr::ReportStore::Open(path);
  Check(store.status(), "open");
  // RACKCHAOS_BENCH_PRAGMAS: extra PRAGMAs to try (e.g. "PRAGMA cache_size=-65536"), for experiments.
  if (const char* pragmas = std::getenv("RACKCHAOS_BENCH_PRAGMAS")) Check(rr::StoreAccess::DbOf(*store).Exec(pragmas, "pragmas"), "pragmas");
  rr::RunInfo info{"bench", "bench.yaml", "name: bench\n", "", 1, "bench", "localhost", "sim", "2025-01-01T00:00:00Z", "report_bench", "", 0};
  auto run = store->BeginRun(info);
  Check(run.status(), "begin");
  std::vector<rr::ComponentRow> comps;
  for (ComponentId c = 0; c <= 72; ++c) comps.push_back({c, c == 0 ? "r01" : "r01.gpu" + std::to_string(c), c == 0 ? "rack" : "gpu", c == 0 ? kNoComponent : 0, "S" + std::to_string(c)});
  Check(store->AddComponents(*run, comps), "components");
  Check(store->AddJobs(*run, {{0, "job0", 64, 1.25}, {1, "job1", 64, 1.25}, {2, "job2", 64, 1.25}, {3, "job3", 64, 1.25}}), "jobs");

  std::vector<Event> batch;
  batch.reserve(kBatch);
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpu_start = std::clock();
  for (size_t i = 0; i < n; ++i) {
    batch.push_back(MakeEvent(i));
    if (batch.size() == kBatch || i + 1 == n) {
      Check(store->AppendEvents(*run, batch), "append");
      batch.clear();
    }
  }
  double write_s = Since(start);
  // CPU time (user + system) is steadier than wall time on a shared machine; both are printed.
  double write_cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  Check(store->AddMetrics(*run, MakeMetrics(n / 10000 + 1)), "metrics");
  Check(store->FinishRun(*run, "passed", 0, "2025-01-01T01:00:00Z", ""), "finish");
  std::printf("write  %8zu events  %7.3f s  (%.0f events/s, %.3f s CPU)\n", n, write_s,
              static_cast<double>(n) / write_s, write_cpu_s);
  if (argc > 3 && std::string(argv[3]) == "--write-only") return 0;

  for (rr::Format f : {rr::Format::kText, rr::Format::kJson, rr::Format::kMarkdown, rr::Format::kJunit,
                       rr::Format::kPrometheus, rr::Format::kHtml}) {
    start = std::chrono::steady_clock::now();
    auto text = rr::Render(*store, *run, f);
    Check(text.status(), rr::FormatName(f));
    std::printf("render %-10s %7.3f s  (%zu bytes)\n", rr::FormatName(f), Since(start), text->size());
  }
  return 0;
}
