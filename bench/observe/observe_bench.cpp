// observe_bench [LINES]: parses LINES lines (default 2,000,000) of nvidia-smi CSV, of journalctl
// -o export and of -o json, and prints lines per second by wall time and by CPU time (the process'
// CLOCK_PROCESS_CPUTIME_ID, so a loaded machine shows in wall time only).
//   nvidia-smi: one poll of an 8-GPU tray host is 8 lines (the standard query, no header); each
//               poll is parsed as the monitor would, against the host's map.
//   journald:   polls of 100 entries through one JournalReader (--cursor answers: each repeats the
//               previous poll's last entry), one line in 50 an Xid line as the driver prints it.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runner/site/observe/journal_reader.h"
#include "runner/site/observe/nvsmi_query.h"

namespace ob = rackchaos::observe;

namespace {

struct Clocks {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = Cpu();
  static double Cpu() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  void Report(const char* what, long long lines, long long bytes, size_t sink) const {
    double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    double c = Cpu() - cpu;
    std::printf("%-22s %10lld lines %8.1f MiB  wall %6.2f s  %12.0f lines/s  cpu %6.2f s  %12.0f lines/s  (%zu)\n", what,
                lines, static_cast<double>(bytes) / (1 << 20), w, static_cast<double>(lines) / w, c,
                static_cast<double>(lines) / c, sink);
  }
};

void Nvsmi(long long lines) {
  ob::HostMap host;
  host.host = "tray07";
  host.node = 7;
  const char* buses[] = {"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"};
  std::string poll;
  for (int g = 0; g < 8; ++g) {
    ob::GpuAddress a;
    a.gpu = static_cast<rackchaos::ComponentId>(100 + g);
    a.index = g;
    a.pci = std::string("0000:") + buses[g] + ":00";
    host.gpus.push_back(a);
    char line[160];
    std::snprintf(line, sizeof line, "%d, 00000000:%s:00.0, %d, %.2f, 1000.00, %d, 1980, 0x%016x\n", g, buses[g], 40 + g,
                  600.5 + g, 1900 + g, g == 5 ? 0x44 : 0);
    poll += line;
  }
  const long long polls = lines / 8;
  size_t sink = 0;
  Clocks t;
  for (long long i = 0; i < polls; ++i) sink += ob::ParseNvidiaSmiQuery(poll, host).observations.size();
  t.Report("nvidia-smi csv", polls * 8, polls * static_cast<long long>(poll.size()), sink);
}

std::string Entry(long long i, bool json) {
  char msg[200];
  if (i % 50 == 0)
    std::snprintf(msg, sizeof msg, "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  else
    std::snprintf(msg, sizeof msg, "mlx5_core 0000:1a:00.0 ibp26s0: Link %s, seq %lld", i % 2 ? "up" : "down", i);
  char cursor[160];
  std::snprintf(cursor, sizeof cursor, "s=6ebcbdddf7844dd0910c935466859e6c;i=%llx;b=4d3c2b1a00ff11ee8a9b0242ac120002;m=%llx;t=%llx;x=eb4a75f81eaa947c",
                i + 1, 5000000 + i * 1000, 0x6617317482000 + i * 1000);
  long long rt = 1795996800000000LL + i * 1000;
  char buf[1024];
  if (json)
    std::snprintf(buf, sizeof buf,
                  "{\"__CURSOR\":\"%s\",\"__REALTIME_TIMESTAMP\":\"%lld\",\"__MONOTONIC_TIMESTAMP\":\"%lld\",\"_BOOT_ID\":\"4d3c2b1a00ff11ee8a9b0242ac120002\",\"_TRANSPORT\":\"kernel\",\"PRIORITY\":\"4\",\"SYSLOG_FACILITY\":\"0\",\"SYSLOG_IDENTIFIER\":\"kernel\",\"_HOSTNAME\":\"tray07\",\"MESSAGE\":\"%s\"}\n",
                  cursor, rt, 5000000 + i * 1000, msg);
  else
    std::snprintf(buf, sizeof buf,
                  "__CURSOR=%s\n__REALTIME_TIMESTAMP=%lld\n__MONOTONIC_TIMESTAMP=%lld\n_BOOT_ID=4d3c2b1a00ff11ee8a9b0242ac120002\n_TRANSPORT=kernel\nPRIORITY=4\nSYSLOG_FACILITY=0\nSYSLOG_IDENTIFIER=kernel\n_HOSTNAME=tray07\nMESSAGE=%s\n\n",
                  cursor, rt, 5000000 + i * 1000, msg);
  return buf;
}

void Journal(long long lines, bool json) {
  const long long per_poll = 100;
  // The polls are generated before the clock starts: the bench times the reader, not snprintf.
  std::vector<std::string> polls;
  long long bytes = 0;
  for (long long start = 0; start < lines; start += per_poll) {
    std::string p;
    for (long long i = start == 0 ? 0 : start - 1; i < start + per_poll; ++i) p += Entry(i, json);
    bytes += static_cast<long long>(p.size());
    polls.push_back(std::move(p));
  }
  ob::JournalReader reader("tray07", 7, json ? ob::JournalFormat::kJson : ob::JournalFormat::kExport);
  (void)reader.OnOutput("");  // an empty journal at the first poll: everything after is read
  size_t sink = 0;
  Clocks t;
  for (const std::string& p : polls) sink += reader.OnOutput(p).observations.size();
  t.Report(json ? "journalctl -o json" : "journalctl -o export", reader.lines_read(), bytes, sink);
  if (reader.lines_read() != static_cast<long long>(polls.size()) * per_poll) std::printf("  LINES LOST OR REPEATED\n");
}

}  // namespace

int main(int argc, char** argv) {
  long long lines = argc > 1 ? std::atoll(argv[1]) : 2000000;
  Nvsmi(lines);
  Journal(lines, false);
  Journal(lines, true);
  return 0;
}
