// One whole-site observation period through the site's Prometheus (issue 21): R racks of gb200-nvl72
// (128: 2,304 tray hosts, 9,216 GPUs) exported in dcgm-exporter's format by generated scrape targets
// (python3's file server on loopback, one target per 8 racks), scraped by Debian's real prometheus,
// and read by PrometheusSource with one range query per period. Measures, per query: latency (Ask to
// the answer parsed and ready for Take), the runner's CPU (whole process: HTTP, JSON parse, mapping),
// the parse-and-map CPU alone (the client thread's), the answer's size, and prometheus' own CPU.
//
//   prometheus_bench [--racks R] [--queries K] [--scrape S] [--max-age S] [--period S] [--keep]
//
// Defaults: 128 racks, 30 queries, 10 s scrapes, max_age 30 s (the query reads 60 s back), a 10 s
// period for the "% of one core" column. The bench waits until every series has a full window of
// samples before measuring.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/catalogue.h"
#include "runner/site/prometheus_source.h"
#include "tests/site/loopback_services.h"

namespace rr = rackchaos::runner;
namespace ob = rackchaos::observe;
namespace cl = rackchaos::cluster;
namespace rt = rackchaos::testing;
namespace fs = std::filesystem;

namespace {

double ProcessCpu() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// utime + stime of another process, seconds.
double ChildCpu(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> f;
  std::string cur;
  for (char c : stat.substr(close + 2)) {
    if (c == ' ') {
      f.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (f.size() < 13) return 0;
  return (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}
double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

std::string HostOf(const std::string& tray) {
  std::string h = tray;
  std::replace(h.begin(), h.end(), '.', '-');
  return h;
}

// dcgm-exporter's exposition of every GPU of `trays`, its labels as render_metrics.go prints them.
void WriteTarget(const fs::path& path, const cl::Topology& topo, const std::vector<rackchaos::ComponentId>& trays) {
  struct M {
    const char *name, *help;
  };
  const M metrics[] = {
      {"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz)."},
      {"DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz)."},
      {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."},
      {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."},
      {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."},
      {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."},
      {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Current clock throttle reasons."},
      {"DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered."},
  };
  std::ofstream out(path);
  int n = 0;
  for (const M& m : metrics) {
    out << "# HELP " << m.name << " " << m.help << "\n# TYPE " << m.name << " gauge\n";
    for (rackchaos::ComponentId tray : trays) {
      const std::string host = HostOf(topo.at(tray).name);
      int g = 0;
      for (rackchaos::ComponentId gpu : topo.GpusOfTray(tray)) {
        char pci[32];
        std::snprintf(pci, sizeof pci, "%08X:01:00.0", g == 0 ? 8 : g == 1 ? 9 : g == 2 ? 0x18 : 0x19);
        double v = 0;
        const std::string name = m.name;
        if (name == "DCGM_FI_DEV_SM_CLOCK") v = 1965 - (gpu % 7) * 15;
        if (name == "DCGM_FI_DEV_MEM_CLOCK") v = 3996;
        if (name == "DCGM_FI_DEV_GPU_TEMP") v = 38 + static_cast<double>(gpu % 23);
        if (name == "DCGM_FI_DEV_POWER_USAGE") v = 580.5 + static_cast<double>(gpu % 97);
        if (name == "DCGM_FI_DEV_GPU_UTIL") v = 97;
        if (name == "DCGM_FI_DEV_FB_USED") v = 171234;
        if (name == "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS") v = gpu % 101 == 0 ? 64 : 0;
        out << m.name << "{gpu=\"" << g << "\",UUID=\"GPU-" << host << "-" << g << "\",pci_bus_id=\"" << pci
            << "\",device=\"nvidia" << g << "\",modelName=\"NVIDIA GB200\",Hostname=\"" << host << "\"} " << v << "\n";
        ++g;
        ++n;
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int racks = 128, queries = 30, scrape_s = 10, max_age_s = 30, period_s = 10;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--racks") racks = next();
    else if (a == "--queries") queries = next();
    else if (a == "--scrape") scrape_s = next();
    else if (a == "--max-age") max_age_s = next();
    else if (a == "--period") period_s = next();
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: prometheus_bench [--racks R] [--queries K] [--scrape S] [--max-age S] [--period S] [--keep]\n");
      return 2;
    }
  }
  if (rt::FindProgram("prometheus").empty() || rt::FindProgram("python3").empty()) {
    std::fprintf(stderr, "needs prometheus and python3 (apt-get install prometheus)\n");
    return 2;
  }
  auto model = cl::LoadRackModel("gb200-nvl72");
  auto topo = model.ok() ? cl::Topology::Build(*model, racks, 0) : rackchaos::Result<cl::Topology>(model.status());
  if (!topo.ok()) {
    std::fprintf(stderr, "%s\n", topo.status().message().c_str());
    return 1;
  }
  const fs::path work = fs::temp_directory_path() / ("prometheus-bench-" + std::to_string(getpid()));
  fs::create_directories(work / "targets");
  const auto t_gen = std::chrono::steady_clock::now();
  const std::vector<rackchaos::ComponentId>& trays = topo->trays();
  const size_t per_target = static_cast<size_t>(8 * model->compute_trays);
  std::vector<std::string> paths;
  for (size_t first = 0; first < trays.size(); first += per_target) {
    const std::string name = "racks" + std::to_string(first / per_target) + ".prom";
    WriteTarget(work / "targets" / name,
                *topo, std::vector<rackchaos::ComponentId>(trays.begin() + static_cast<long>(first),
                                                          trays.begin() + static_cast<long>(std::min(first + per_target, trays.size()))));
    paths.push_back("/" + name);
  }
  uintmax_t bytes = 0;
  for (const auto& e : fs::directory_iterator(work / "targets")) bytes += e.file_size();
  std::fprintf(stderr, "%d racks, %zu trays, %zu GPUs: %zu scrape targets, %.1f MiB of exposition text (%.1f s)\n", racks,
               trays.size(), topo->gpus().size(), paths.size(), static_cast<double>(bytes) / (1 << 20),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t_gen).count());

  const int target_port = rt::FreeLoopbackPort(), prom_port = rt::FreeLoopbackPort();
  const std::string log = (work / "services.log").string();
  std::ofstream(work / "prometheus.yml") << rt::PrometheusConfig(target_port, paths, std::to_string(scrape_s) + "s");
  rt::ChildProcess files, prom;
  rt::StartFileServer(files, (work / "targets").string(), target_port, log);
  rt::StartPrometheus(prom, (work / "prometheus.yml").string(), (work / "data").string(), prom_port, log);
  if (!rt::WaitForPort(target_port, std::chrono::seconds(10)) || !rt::WaitForPort(prom_port, std::chrono::seconds(60))) {
    std::fprintf(stderr, "services did not start; see %s\n", log.c_str());
    return 1;
  }

  rr::Inventory inv;
  inv.model = "gb200-nvl72";
  inv.racks = racks;
  for (rackchaos::ComponentId tray : trays) {
    const std::string name = topo->at(tray).name;
    rr::InventoryHost h;
    h.spec.name = HostOf(name);
    h.spec.address = h.spec.name;
    inv.hosts[h.spec.name] = h;
    rr::TrayMapping m;
    m.tray = name;
    m.host = h.spec.name;
    inv.trays[name] = m;
  }
  rr::PrometheusConfig pc;
  pc.url = "http://127.0.0.1:" + std::to_string(prom_port);
  pc.max_age = rackchaos::Duration::Seconds(max_age_s);
  pc.timeout = rackchaos::Duration::Seconds(60);
  pc.max_sm_clock_mhz = 1980;
  inv.prometheus = pc;
  auto made = rr::MakePrometheusSource(inv, *topo);
  auto* source = static_cast<rr::PrometheusSource*>(made.get());

  auto ask = [&](double& latency, double& cpu, ob::Observed& got) {
    const double c0 = ProcessCpu();
    const auto t0 = std::chrono::steady_clock::now();
    source->Ask(rackchaos::Time{});
    for (;;) {
      auto v = source->Take();
      if (!v.empty()) {
        got = std::move(v.back());
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    latency = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu = ProcessCpu() - c0;
  };
  auto temps = [](const ob::Observed& o) {
    size_t n = 0;
    for (const auto& b : o.observations)
      if (const auto* s = std::get_if<cl::TelemetrySample>(&b); s && s->metric == cl::Metric::kGpuTemperature) ++n;
    return n;
  };
  // Every GPU read, then a full window of samples behind each series (2 x max_age) before measuring.
  const auto t_wait = std::chrono::steady_clock::now();
  ob::Observed o;
  double lat = 0, cpu = 0;
  for (;;) {
    ask(lat, cpu, o);
    if (temps(o) == topo->gpus().size()) break;
    if (std::chrono::steady_clock::now() - t_wait > std::chrono::minutes(5)) {
      std::fprintf(stderr, "not every GPU read after 5 minutes: %zu of %zu; %zu errors, first: %s\n", temps(o),
                   topo->gpus().size(), o.errors.size(), o.errors.empty() ? "-" : o.errors[0].ToString().c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::fprintf(stderr, "every GPU read after %.0f s; waiting %d s for a full %d s window\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t_wait).count(), 2 * max_age_s,
               2 * max_age_s);
  std::this_thread::sleep_for(std::chrono::seconds(2 * max_age_s));

  std::vector<double> latency, runner_cpu, parse_cpu, http, prom_cpu;
  size_t answer_bytes = 0, samples = 0, errors = 0;
  for (int q = 0; q < queries; ++q) {
    const double p0 = ChildCpu(prom.pid());
    ask(lat, cpu, o);
    prom_cpu.push_back(ChildCpu(prom.pid()) - p0);
    const rr::PrometheusSource::Costs c = source->costs();
    latency.push_back(lat);
    runner_cpu.push_back(cpu);
    parse_cpu.push_back(c.parse_cpu_s);
    http.push_back(c.http_s);
    answer_bytes = c.bytes;
    samples = o.observations.size();
    errors = o.errors.size();
    if (temps(o) != topo->gpus().size())
      std::fprintf(stderr, "query %d: %zu GPUs read of %zu (%zu errors)\n", q, temps(o), topo->gpus().size(), o.errors.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  source->Stop();
  std::printf("racks %d, GPUs %zu, hosts %zu, scrape %d s, max_age %d s (query window %d s), %d queries\n", racks,
              topo->gpus().size(), trays.size(), scrape_s, max_age_s, 2 * max_age_s, queries);
  std::printf("query: %s\n", source->query().c_str());
  std::printf("answer %.1f MiB, %zu observations, %zu observation errors\n", static_cast<double>(answer_bytes) / (1 << 20),
              samples, errors);
  std::printf("| figure | p50 | p99 | mean |\n|---|---|---|---|\n");
  auto row = [](const char* what, const std::vector<double>& v) {
    std::printf("| %s | %.3f s | %.3f s | %.3f s |\n", what, Percentile(v, 0.5), Percentile(v, 0.99), Mean(v));
  };
  row("latency (Ask to parsed answer)", latency);
  row("HTTP exchange (connect, query, read)", http);
  row("runner CPU per period (process)", runner_cpu);
  row("parse + map CPU (client thread)", parse_cpu);
  row("prometheus CPU per query", prom_cpu);
  std::printf("runner CPU per %d s period: %.2f%% of one core (mean), %.2f%% (p99)\n", period_s,
              100 * Mean(runner_cpu) / period_s, 100 * Percentile(runner_cpu, 0.99) / period_s);
  prom.Kill();
  files.Kill();
  if (!keep) fs::remove_all(work);
  else std::fprintf(stderr, "kept %s\n", work.string().c_str());
  return 0;
}
