// import_bench [MiB] [--keep PATH]: writes a synthetic kernel + slurmctld log of MiB mebibytes (default
// 1024) to a temporary file, then streams it through IncidentImporter in a forked child and reports
// the child's wall time, throughput (MiB/s and lines/s), peak RSS and CPU time (wait4). The generator's own
// memory and time are not counted.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cluster/kernel_log.h"
#include "runner/incident/importer.h"

namespace cl = rackchaos::cluster;
namespace ri = rackchaos::incident;

namespace {

// Every 50th line is one the importers understand; the rest is noise of a few patterns.
void Generate(const std::string& path, long long bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::exit(3);
  const char* noise[] = {"usb 1-3: new high-speed USB device number %d using xhci_hcd",
                         "EXT4-fs (nvme0n1p%d): mounted filesystem with ordered data mode",
                         "audit: type=1400 audit(%d.123:42): apparmor=\"STATUS\" operation=\"profile_load\"",
                         "IPv6: ADDRCONF(NETDEV_CHANGE): eth%d: link becomes ready"};
  long long written = 0;
  char buf[512];
  for (long long i = 0; written < bytes; ++i) {
    double uptime = 100.0 + static_cast<double>(i) * 0.01;
    std::string line;
    if (i % 50 == 0) {
      int kind = static_cast<int>((i / 50) % 3);
      if (kind == 0) {
        line =
            cl::FormatXidLine({"0000:3b:00", 79, std::nullopt, "", "", true}, cl::LogStyle::kSyslog, uptime, "node07");
      } else if (kind == 1) {
        line =
            cl::FormatKernelLine("mlx5_core 0000:1a:00.0 ibp26s0: Link down", cl::LogStyle::kSyslog, uptime, "node07");
      } else {
        line = "[2026-11-30T06:03:10.124] update_node: node gpu07 state set to DRAINING";
      }
    } else {
      std::snprintf(buf, sizeof buf, noise[i % 4], static_cast<int>(i % 1000));
      line = cl::FormatKernelLine(buf, cl::LogStyle::kSyslog, uptime, "node07");
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), f);
    written += static_cast<long long>(line.size());
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  long long mib = argc > 1 ? std::atoll(argv[1]) : 1024;
  std::string path = argc > 3 && std::string(argv[2]) == "--keep" ? argv[3] : "/tmp/rackchaos-import-bench.log";
  Generate(path, mib << 20);
  pid_t child = fork();
  if (child == 0) {
    auto t0 = std::chrono::steady_clock::now();
    ri::IncidentImporter importer;
    auto s = importer.ImportFile(path);
    auto inc = importer.Finish();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%lld MiB, %lld lines, %zu events, %lld not understood (%zu patterns), %.2f s, %.1f MiB/s, %.0f lines/s%s\n",
                static_cast<long long>(inc.bytes >> 20), static_cast<long long>(inc.lines), inc.events.size(),
                static_cast<long long>(inc.not_understood), inc.patterns.size(), wall,
                static_cast<double>(inc.bytes) / (1 << 20) / wall, static_cast<double>(inc.lines) / wall,
                s.ok() ? "" : " (read error)");
    std::fflush(stdout);
    _exit(s.ok() ? 0 : 1);
  }
  int status = 0;
  rusage ru{};
  wait4(child, &status, 0, &ru);
  // CPU time, not only wall: on a shared machine the wall time says as much about the neighbours.
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  std::printf("peak RSS of the importing process: %.1f MiB; its CPU time %.2f s (user + system)\n",
              static_cast<double>(ru.ru_maxrss) / 1024.0, cpu);
  if (argc <= 3) std::remove(path.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
