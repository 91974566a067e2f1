// Sweep scaling: the same sweep with 1 worker thread and with T (default 2), each into a fresh report
// database, through RunSweep as `rackchaos sweep` uses it. Prints seeds per second for each and the
// ratio; issue 8's target is >= 1.8x with 2 threads. Exit 0 when the target holds, 1 when it does not.
//
// Usage: sweep_bench [--seeds N] [--threads T] [PLAN]   (default: 8 seeds, 2 threads, scenarios/burn-in.yaml)
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "core/log.h"
#include "runner/plan/plan_loader.h"
#include "runner/campaign/sweep.h"

using namespace rackchaos;
namespace fs = std::filesystem;

namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Seeds per second of one sweep into a fresh database; < 0 on failure.
double SeedsPerSecond(const runner::Plan& plan, int seeds, int threads, const fs::path& db) {
  fs::remove(db);
  runner::SweepOptions opt;
  opt.seeds = seeds;
  opt.threads = threads;
  opt.db_path = db.string();
  auto start = std::chrono::steady_clock::now();
  double cpu_start = CpuSeconds();
  auto result = runner::RunSweep(plan, opt);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu = CpuSeconds() - cpu_start;
  if (!result.ok() || result->runs != seeds) {
    std::fprintf(stderr, "sweep failed: %s\n", result.ok() ? "wrong run count" : result.status().ToString().c_str());
    return -1;
  }
  // cpu / wall is how many cores the sweep kept busy: on a loaded machine it shows whether the threads
  // waited on each other (SQLite, locks) or on the CPU the machine had to give.
  std::printf("threads %d: %d seeds in %.2f s = %.2f seeds/s (cpu %.2f s, cpu/wall %.2f)\n", threads, seeds, wall,
              seeds / wall, cpu, cpu / wall);
  return seeds / wall;
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 8, threads = 2;
  std::string path = std::string(RACKCHAOS_SOURCE_DIR) + "/scenarios/burn-in.yaml";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seeds") && i + 1 < argc) seeds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else path = argv[i];
  }
  InitLogging(spdlog::level::err);
  auto plan = runner::LoadPlan(path);
  if (!plan.ok()) {
    std::fprintf(stderr, "%s\n", plan.status().message().c_str());
    return 2;
  }
  fs::path dir = fs::temp_directory_path() / ("rackchaos-sweep-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::printf("plan %s, %d seeds, %u hardware threads\n", path.c_str(), seeds, std::thread::hardware_concurrency());
  double one = SeedsPerSecond(*plan, seeds, 1, dir / "one.db");
  double many = SeedsPerSecond(*plan, seeds, threads, dir / "many.db");
  fs::remove_all(dir);
  if (one <= 0 || many <= 0) return 2;
  double ratio = many / one;
  std::printf("ratio %d threads / 1 thread: %.2fx (target >= 1.8x with 2)\n", threads, ratio);
  return ratio >= 1.8 ? 0 : 1;
}
