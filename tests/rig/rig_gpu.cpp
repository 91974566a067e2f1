// rig-gpu: the rig's GPU model on the command line (tests/rig/rig_gpu_model.h), and the node tools a real
// tray offers, answering from the tray's injected state in the formats of the real tools:
//   rig-gpu speed WATTS            "<speed> <slowdown>": cluster::SpeedAtPower of a cap and 1/speed
//   rig-gpu tdp                    the model's TDP in watts (an uncapped tray's power cap)
//   rig-gpu state TRAY_DIR         one line per GPU: index pci temperature power limit sm_mhz reasons xid lost
//   rig-gpu hot TRAY_DIR           the GPUs at or above the model's slowdown temperature, one line each
//   rig-gpu xid-line PCI XID       the driver's kernel log line for an Xid
//   rig-gpu nvidia-smi TRAY_DIR ARGS...   `nvidia-smi --query-gpu=F,... --format=csv[,noheader][,nounits]`
//                                  and `nvidia-smi nvlink -s`, as nvidia-smi 570 prints them
//   rig-gpu journalctl TRAY_DIR ARGS...   `journalctl _TRANSPORT=kernel --no-pager -o export [-n N]
//                                  [--cursor=C] [--since=@S]` over the tray's kernel.log, with cursors
//   rig-gpu exporter TRAY_DIR HOSTNAME ADDR PORT   dcgm-exporter's /metrics over HTTP (runs until killed)
// The stubs on a tray's PATH ($RIG_DIR/node-bin/nvidia-smi, journalctl) call this with their tray's dir.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/rig/rig_gpu_model.h"

namespace rig = rackchaos::rig;

namespace {

// The time the model is read at: now, or RIG_NOW (Unix seconds) for the tests, which step the clock.
double Now() {
  const char* at = std::getenv("RIG_NOW");
  return at && *at ? std::atof(at) : rig::UnixNow();
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

// --- nvidia-smi ---------------------------------------------------------------------------------------

struct Field {
  const char* unit;  // "" = none
  std::function<std::string(const rig::GpuState&, bool units)> value;
};

std::string Num(double v, const char* fmt, const char* unit, bool units) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return units && *unit ? std::string(buf) + " " + unit : std::string(buf);
}

const Field* FindField(const std::string& name) {
  static const std::vector<std::pair<std::vector<std::string>, Field>> fields = {
      {{"index"}, {"", [](const rig::GpuState& g, bool) { return std::to_string(g.index); }}},
      {{"name", "gpu_name"}, {"", [](const rig::GpuState&, bool) { return std::string("NVIDIA GB200"); }}},
      {{"uuid", "gpu_uuid"}, {"", [](const rig::GpuState& g, bool) { return g.uuid; }}},
      {{"pci.bus_id", "gpu_bus_id"}, {"", [](const rig::GpuState& g, bool) { return g.pci; }}},
      {{"temperature.gpu"}, {"", [](const rig::GpuState& g, bool) { return Num(g.temperature_c, "%.0f", "", false); }}},
      {{"power.draw"}, {"W", [](const rig::GpuState& g, bool u) { return Num(g.power_w, "%.2f", "W", u); }}},
      {{"power.limit", "enforced.power.limit"}, {"W", [](const rig::GpuState& g, bool u) { return Num(g.limit_w, "%.2f", "W", u); }}},
      {{"clocks.sm", "clocks.current.sm"}, {"MHz", [](const rig::GpuState& g, bool u) { return Num(g.sm_mhz, "%.0f", "MHz", u); }}},
      {{"clocks.max.sm", "clocks.max.sm"}, {"MHz", [](const rig::GpuState&, bool u) { return Num(rig::kMaxSmMhz, "%.0f", "MHz", u); }}},
      {{"clocks_event_reasons.active", "clocks_throttle_reasons.active"},
       {"", [](const rig::GpuState& g, bool) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "0x%016" PRIX64, g.reasons);
          return std::string(buf);
        }}},
  };
  for (const auto& [names, f] : fields)
    for (const std::string& n : names)
      if (n == name) return &f;
  return nullptr;
}

int NvidiaSmi(const std::string& dir, const std::vector<std::string>& args) {
  const rig::TrayState tray = rig::ReadTray(dir, Now());
  if (args.size() == 2 && args[0] == "nvlink" && args[1] == "-s") {
    const int links = rig::RigModel().nvlink_links_per_gpu;
    for (const rig::GpuState& g : tray.gpus) {
      if (g.lost) continue;  // nvidia-smi enumerates only the GPUs it can reach
      std::printf("GPU %d: NVIDIA GB200 (UUID: %s)\n", g.index, g.uuid.c_str());
      for (int l = 0; l < links; ++l) std::printf("         Link %d: 53.125 GB/s\n", l);
    }
    return 0;
  }
  std::string query, format;
  for (const std::string& a : args) {
    if (a.rfind("--query-gpu=", 0) == 0) query = a.substr(12);
    else if (a.rfind("--format=", 0) == 0) format = a.substr(9);
    else {
      std::printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n");
      return 2;
    }
  }
  const std::vector<std::string> fmt = Split(format, ',');
  auto has = [&](const char* f) { return std::find(fmt.begin(), fmt.end(), f) != fmt.end(); };
  if (query.empty() || !has("csv")) {
    std::printf("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n");
    return 2;
  }
  const bool header = !has("noheader"), units = !has("nounits");
  std::vector<std::pair<std::string, const Field*>> cols;
  for (const std::string& name : Split(query, ',')) {
    const Field* f = FindField(name);
    if (!f) {
      std::printf("Field \"%s\" is not a valid field to query.\n\n", name.c_str());
      return 2;
    }
    cols.emplace_back(name, f);
  }
  if (header) {
    std::string line;
    for (const auto& [name, f] : cols) {
      if (!line.empty()) line += ", ";
      line += name;
      if (*f->unit) line += std::string(" [") + f->unit + "]";
    }
    std::printf("%s\n", line.c_str());
  }
  for (const rig::GpuState& g : tray.gpus) {
    if (g.lost) {
      std::printf("Unable to determine the device handle for GPU %s: GPU is lost. Reboot the system to recover this GPU\n",
                  g.pci.substr(4).c_str());
      continue;
    }
    std::string line;
    for (const auto& [name, f] : cols) line += (line.empty() ? "" : ", ") + f->value(g, units);
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

// --- journalctl ---------------------------------------------------------------------------------------

struct Entry {
  int64_t realtime_us = 0;
  std::string message, cursor;
  int64_t seq = 0;
};

// The tray's kernel log; one fixed journal and boot per tray, a cursor per line as journald makes them.
std::vector<Entry> ReadLog(const std::string& dir, std::string& boot) {
  std::vector<Entry> out;
  const std::string tray = dir.substr(dir.find_last_of('/') + 1);
  uint64_t h = 1469598103934665603u;  // FNV-1a of the tray name: a stable id per tray
  for (char c : tray) h = (h ^ static_cast<unsigned char>(c)) * uint64_t{1099511628211};
  char seqid[40], b[40];
  std::snprintf(seqid, sizeof seqid, "%016" PRIx64 "%016" PRIx64, h, h ^ uint64_t{0x5a5a5a5a5a5a5a5a});
  std::snprintf(b, sizeof b, "%016" PRIx64 "%016" PRIx64, h ^ uint64_t{0x1234567890abcdef}, h);
  boot = b;
  std::ifstream in(dir + "/kernel.log");
  int64_t first_us = -1;
  for (std::string line; std::getline(in, line);) {
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    Entry e;
    e.realtime_us = std::strtoll(line.c_str(), nullptr, 10);
    e.message = line.substr(sp + 1);
    e.seq = static_cast<int64_t>(out.size()) + 1;
    if (first_us < 0) first_us = e.realtime_us;
    const int64_t mono = e.realtime_us - first_us + 5000000;
    char c[200];
    std::snprintf(c, sizeof c, "s=%s;i=%" PRIx64 ";b=%s;m=%" PRIx64 ";t=%" PRIx64 ";x=%016" PRIx64, seqid,
                  static_cast<uint64_t>(e.seq), b, static_cast<uint64_t>(mono), static_cast<uint64_t>(e.realtime_us),
                  h ^ static_cast<uint64_t>(e.seq) * uint64_t{0x9e3779b97f4a7c15});
    e.cursor = c;
    out.push_back(e);
  }
  return out;
}

int Journalctl(const std::string& dir, const std::vector<std::string>& args) {
  std::string boot, cursor;
  std::vector<Entry> log = ReadLog(dir, boot);
  const std::string tray = dir.substr(dir.find_last_of('/') + 1);
  long last_n = -1;
  double since = -1;
  bool kernel_only = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "_TRANSPORT=kernel") kernel_only = true;
    else if (a == "--no-pager" || a == "-q" || a == "--quiet") continue;
    else if (a == "-o" && i + 1 < args.size() && args[i + 1] == "export") ++i;
    else if (a == "-n" && i + 1 < args.size()) last_n = std::atol(args[++i].c_str());
    else if (a.rfind("--cursor=", 0) == 0) cursor = a.substr(9);
    else if (a.rfind("--since=@", 0) == 0) since = std::atof(a.c_str() + 9);
    else {
      std::fprintf(stderr, "journalctl (rig): unsupported argument %s\n", a.c_str());
      return 1;
    }
  }
  (void)kernel_only;  // the tray's log holds kernel lines only
  size_t from = 0;
  if (!cursor.empty()) {
    from = log.size() + 1;
    for (size_t i = 0; i < log.size(); ++i)
      if (log[i].cursor == cursor) from = i;
    if (from > log.size()) {
      std::fprintf(stderr, "Failed to seek to cursor: Invalid argument\n");
      return 1;
    }
  } else if (since >= 0) {
    while (from < log.size() && static_cast<double>(log[from].realtime_us) / 1e6 < since - 1e-7) ++from;
  } else if (last_n >= 0 && static_cast<size_t>(last_n) < log.size()) {
    from = log.size() - static_cast<size_t>(last_n);
  }
  for (size_t i = from; i < log.size(); ++i) {
    const Entry& e = log[i];
    std::printf("__CURSOR=%s\n__REALTIME_TIMESTAMP=%" PRId64 "\n__MONOTONIC_TIMESTAMP=%" PRId64
                "\n_BOOT_ID=%s\n_TRANSPORT=kernel\nPRIORITY=3\nSYSLOG_FACILITY=0\nSYSLOG_IDENTIFIER=kernel\n"
                "_HOSTNAME=%s\nMESSAGE=%s\n\n",
                e.cursor.c_str(), e.realtime_us, e.realtime_us - log.front().realtime_us + 5000000, boot.c_str(),
                tray.c_str(), e.message.c_str());
  }
  return 0;
}

// --- dcgm-exporter ------------------------------------------------------------------------------------

std::string Metrics(const std::string& dir, const std::string& host) {
  const rig::TrayState tray = rig::ReadTray(dir, Now());
  struct Metric {
    const char* name;
    const char* help;
    std::function<double(const rig::GpuState&)> value;
  };
  const Metric metrics[] = {
      {"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", [](const rig::GpuState& g) { return g.sm_mhz; }},
      {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", [](const rig::GpuState& g) { return g.temperature_c; }},
      {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", [](const rig::GpuState& g) { return g.power_w; }},
      {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Current clock throttle reasons.",
       [](const rig::GpuState& g) { return static_cast<double>(g.reasons); }},
      {"DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.",
       [](const rig::GpuState& g) { return static_cast<double>(g.xid); }},
  };
  std::string out;
  char buf[512];
  for (const Metric& m : metrics) {
    out += std::string("# HELP ") + m.name + " " + m.help + "\n# TYPE " + m.name + " gauge\n";
    for (const rig::GpuState& g : tray.gpus) {
      if (g.lost) continue;  // DCGM no longer sees a GPU that fell off the bus
      std::snprintf(buf, sizeof buf,
                    "%s{gpu=\"%d\",UUID=\"%s\",pci_bus_id=\"%s\",device=\"nvidia%d\",modelName=\"NVIDIA GB200\","
                    "Hostname=\"%s\"} %.6g\n",
                    m.name, g.index, g.uuid.c_str(), g.pci.c_str(), g.index, host.c_str(), m.value(g));
      out += buf;
    }
  }
  return out;
}

int Exporter(const std::string& dir, const std::string& host, const std::string& addr, int port) {
  std::signal(SIGPIPE, SIG_IGN);
  const int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, addr.c_str(), &a.sin_addr) != 1 || bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      listen(ls, 16) != 0) {
    std::fprintf(stderr, "rig-gpu exporter: cannot listen on %s:%d: %s\n", addr.c_str(), port, std::strerror(errno));
    return 2;
  }
  for (;;) {
    const int c = accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    timeval tv{2, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string req;
    char buf[2048];
    while (req.find("\r\n\r\n") == std::string::npos && req.size() < 16384) {
      const ssize_t k = recv(c, buf, sizeof buf, 0);
      if (k <= 0) break;
      req.append(buf, static_cast<size_t>(k));
    }
    std::string status = "200 OK", body;
    if (req.rfind("GET /metrics", 0) == 0) body = Metrics(dir, host);
    else status = "404 Not Found", body = "404 page not found\n";
    const std::string resp = "HTTP/1.1 " + status + "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n" +
                             "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    for (size_t sent = 0; sent < resp.size();) {
      const ssize_t k = send(c, resp.data() + sent, resp.size() - sent, MSG_NOSIGNAL);
      if (k <= 0) break;
      sent += static_cast<size_t>(k);
    }
    close(c);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  const std::vector<std::string> rest(argv + std::min(argc, 3), argv + argc);
  if (cmd == "speed" && argc == 3) {
    const double s = rig::SpeedAtCap(std::atof(argv[2]));
    std::printf("%.6f %.6f\n", s, s > 0 ? 1 / s : 0.0);
    return 0;
  }
  if (cmd == "tdp" && argc == 2) {
    std::printf("%.0f\n", rig::RigModel().gpu_tdp_w);
    return 0;
  }
  if (cmd == "xid-line" && argc == 4) {
    std::printf("%s\n", rig::XidLine(argv[2], std::atoi(argv[3])).c_str());
    return 0;
  }
  if (cmd == "state" && argc == 3) {
    for (const rig::GpuState& g : rig::ReadTray(argv[2], Now()).gpus)
      std::printf("%d %s %.2f %.2f %.2f %.0f 0x%" PRIx64 " %d %s\n", g.index, g.pci.c_str(), g.temperature_c, g.power_w,
                  g.limit_w, g.sm_mhz, g.reasons, g.xid, g.lost ? "lost" : "ok");
    return 0;
  }
  if (cmd == "hot" && argc == 3) {  // GPUs at or above the model's slowdown temperature
    for (const rig::GpuState& g : rig::ReadTray(argv[2], Now()).gpus)
      if (g.temperature_c >= rig::RigModel().gpu_slowdown_c) std::printf("GPU %d at %.1f C\n", g.index, g.temperature_c);
    return 0;
  }
  if (cmd == "nvidia-smi" && argc >= 3) return NvidiaSmi(argv[2], rest);
  if (cmd == "journalctl" && argc >= 3) return Journalctl(argv[2], rest);
  if (cmd == "exporter" && argc == 6) return Exporter(argv[2], argv[3], argv[4], std::atoi(argv[5]));
  std::fprintf(stderr, "usage: rig-gpu speed WATTS | tdp | xid-line PCI XID | state DIR | nvidia-smi DIR ARGS... |\n"
                       "       journalctl DIR ARGS... | exporter DIR HOSTNAME ADDR PORT\n");
  return 2;
}
