// The rig's node tools (rig-gpu nvidia-smi / journalctl, tests/rig/rig_gpu.cpp) read by rackchaos' own
// parsers (runner/site/observe): what a tray's stubs print for its injected state must parse, without
// errors, into the observations the simulator makes for that state. The binary is run as the rig runs it;
// RIG_NOW steps its clock so the temperature curve is checked at known times.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cluster/thermal.h"
#include "healer/xid.h"
#include "runner/site/observe/journal_reader.h"
#include "runner/site/observe/nvlink_status.h"
#include "runner/site/observe/nvsmi_query.h"
#include "tests/rig/rig_gpu_model.h"

namespace ob = rackchaos::observe;
namespace fs = std::filesystem;
using rackchaos::cluster::Metric;

namespace {

struct Run {
  int status = -1;
  std::string out;
};

// Runs `command` followed by `args` (shell-quoted here: the arguments are ours), with its output and exit code.
Run Shell(std::string command, const std::vector<std::string>& args) {
  for (const std::string& a : args) command += " '" + a + "'";
  Run r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t k; (k = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, k);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// Runs rig-gpu with `args` at time `now`.
Run RigGpu(const std::vector<std::string>& args, double now) {
  return Shell("RIG_NOW=" + std::to_string(now) + " '" RIG_GPU_BIN "'", args);
}

struct Tray {
  fs::path dir;
  explicit Tray(const std::string& name) {
    dir = fs::temp_directory_path() / ("rcrig-stubs-" + std::to_string(getpid())) / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Tray() { fs::remove_all(dir.parent_path()); }
  void Put(const std::string& file, const std::string& text) const { std::ofstream(dir / file) << text << "\n"; }
  void Busy(double now) const { Put("rank.status", "heartbeat " + std::to_string(now) + "\nstep 1 0.18 0.2 0.001"); }
};

// The rig's tray as the engine maps it: GPUs 100..103 at the model's bus ids, 18 NVLink ports each.
ob::HostMap Map() {
  const auto& m = rackchaos::rig::RigModel();
  ob::HostMap h;
  h.host = "tray3";
  h.node = 7;
  h.nvlink_ports = m.nvlink_links_per_gpu;
  for (int i = 0; i < m.gpus_per_tray; ++i) {
    ob::GpuAddress a;
    a.gpu = static_cast<rackchaos::ComponentId>(100 + i);
    a.index = i;
    a.pci = m.gpu_pci_bus_ids[static_cast<size_t>(i)];
    h.gpus.push_back(a);
  }
  return h;
}

double SampleOf(const ob::Observed& o, rackchaos::ComponentId c, Metric metric) {
  for (const auto& b : o.observations)
    if (const auto* s = std::get_if<rackchaos::cluster::TelemetrySample>(&b); s && s->component == c && s->metric == metric)
      return s->value;
  return -1;
}

std::string Errors(const ob::Observed& o) {
  std::string s;
  for (const auto& e : o.errors) s += e.ToString() + "\n";
  return s;
}

ob::Observed Query(const Tray& t, double now, bool header) {
  Run r = RigGpu({"nvidia-smi", t.dir.string(), "--query-gpu=" + std::string(ob::kNvsmiQueryFields),
                  header ? "--format=csv" : "--format=csv,noheader,nounits"},
                 now);
  INFO(r.out);
  REQUIRE(r.status == 0);
  return ob::ParseNvidiaSmiQuery(r.out, Map());
}

// The simulator's temperature for a tray whose valve shut at `shut` while busy at full power.
double ValveShutTemperature(double shut, double now) {
  const auto& m = rackchaos::rig::RigModel();
  const double g_full = m.conductance_w_per_k + m.residual_conductance_w_per_k;
  rackchaos::cluster::ThermalState s{m.inlet_c + m.gpu_tdp_w / g_full, rackchaos::Time{}, 0, 1};
  s = rackchaos::cluster::Retarget(s, rackchaos::Time{}, m.gpu_tdp_w, m.residual_conductance_w_per_k,
                                   m.gpu_heat_capacity_j_per_k, m.inlet_c);
  return rackchaos::cluster::TemperatureAt(s, rackchaos::Time{} + rackchaos::Duration::FromSecondsF(now - shut));
}

}  // namespace

TEST_CASE("rig stubs: a busy, uncapped tray's nvidia-smi parses into full-clock, steady telemetry") {
  Tray t("tray3");
  const double now = 1e9;
  t.Busy(now);
  for (bool header : {true, false}) {
    ob::Observed o = Query(t, now, header);
    INFO(Errors(o));
    CHECK(o.errors.empty());
    CHECK(o.devices.empty());
    for (rackchaos::ComponentId g = 100; g < 104; ++g) {
      CHECK(SampleOf(o, g, Metric::kGpuClockFraction) == doctest::Approx(1.0));
      CHECK(SampleOf(o, g, Metric::kGpuPower) == doctest::Approx(1200));
      CHECK(SampleOf(o, g, Metric::kGpuTemperature) == doctest::Approx(64).epsilon(0.02));  // 35 + 1200/42
      CHECK(SampleOf(o, g, Metric::kThermalThrottle) == 0);
    }
  }
}

TEST_CASE("rig stubs: a 300 W cap lowers the clock by the simulator's factor and the power to the cap") {
  Tray t("tray3");
  const double now = 1e9;
  t.Busy(now);
  t.Put("power_cap", "300");
  ob::Observed o = Query(t, now, true);
  INFO(Errors(o));
  CHECK(o.errors.empty());
  const double speed = rackchaos::cluster::SpeedAtPower(300, 1200);  // 0.630
  CHECK(SampleOf(o, 101, Metric::kGpuClockFraction) == doctest::Approx(speed).epsilon(0.002));
  CHECK(SampleOf(o, 101, Metric::kGpuPower) == doctest::Approx(300));
  CHECK(SampleOf(o, 101, Metric::kThermalThrottle) == 0);  // a power cap, not heat
  CHECK(SampleOf(o, 101, Metric::kPowerCapped) == 1);      // what the clock detector reads with the clock
}

TEST_CASE("rig stubs: a shut valve heats the GPUs along the simulator's curve, then they throttle") {
  Tray t("tray3");
  const double t0 = 1e9;
  t.Busy(t0);
  Query(t, t0, true);  // steady at full flow
  t.Put("valve", "0");
  Query(t, t0, true);  // the valve shuts at t0
  for (double dt : {2.0, 5.0, 8.0}) {
    t.Busy(t0 + dt);
    ob::Observed o = Query(t, t0 + dt, true);
    INFO("t0 + " << dt << " s: " << Errors(o));
    CHECK(o.errors.empty());
    // nvidia-smi prints whole degrees
    CHECK(std::fabs(SampleOf(o, 100, Metric::kGpuTemperature) - ValveShutTemperature(t0, t0 + dt)) <= 0.5);
    CHECK(SampleOf(o, 100, Metric::kThermalThrottle) == 0);
  }
  // 87 C (slowdown) is reached 8.4 s after the valve shut: throttling, at the minimum power, still heating.
  t.Busy(t0 + 12);
  ob::Observed o = Query(t, t0 + 12, true);
  INFO(Errors(o));
  CHECK(SampleOf(o, 100, Metric::kThermalThrottle) == 1);
  CHECK(SampleOf(o, 100, Metric::kGpuPower) == doctest::Approx(300));
  CHECK(SampleOf(o, 100, Metric::kGpuTemperature) >= 87);
  CHECK(SampleOf(o, 100, Metric::kGpuClockFraction) < 0.7);
}

TEST_CASE("rig stubs: a GPU that fell off the bus is a device report and its Xid comes through journald") {
  Tray t("tray3");
  const double now = 1e9;
  t.Busy(now);
  t.Put("kernel.log", "999999000000 NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.124.06");
  ob::JournalReader reader("tray3", 7);
  auto journal = [&] {
    std::vector<std::string> args{"journalctl", t.dir.string()};
    for (const std::string& a : reader.NextArgs()) args.push_back(a);
    Run r = RigGpu(args, now);
    INFO(r.out);
    REQUIRE(r.status == 0);
    return reader.OnOutput(r.out);
  };
  ob::Observed first = journal();  // the starting point: the boot line is history
  CHECK(first.errors.empty());
  CHECK(first.observations.empty());
  // What `rig gpu tray3 fail 2 79` writes.
  const std::string pci = "00000000:41:00.0";
  Run line = RigGpu({"xid-line", pci, "79"}, now);
  std::ofstream(t.dir / "kernel.log", std::ios::app) << "1000000000000000 " << line.out;
  t.Put("gpu2.lost", "");
  t.Put("gpu2.xid", "79");
  ob::Observed o = journal();
  INFO(Errors(o));
  CHECK(o.errors.empty());
  REQUIRE(o.observations.size() == 1);
  const auto* k = std::get_if<rackchaos::cluster::KernelLogLine>(&o.observations[0]);
  REQUIRE(k != nullptr);
  CHECK(k->node == 7);
  auto xid = rackchaos::healer::ParseXidLine(k->line);
  REQUIRE(xid);
  CHECK(xid->code == 79);
  CHECK(xid->pci == "0000:41:00");
  CHECK(journal().observations.empty());  // read once: the cursor moved past it
  ob::Observed q = Query(t, now, true);
  REQUIRE(q.devices.size() == 1);
  CHECK(q.devices[0].state == ob::DeviceState::kGpuLost);
  CHECK(q.devices[0].component == 102);
  CHECK(SampleOf(q, 102, Metric::kGpuTemperature) == -1);
  CHECK(SampleOf(q, 101, Metric::kGpuTemperature) > 0);
  // nvlink -s lists the GPUs nvidia-smi still reaches; each live GPU's 18 ports are up.
  Run nv = RigGpu({"nvidia-smi", t.dir.string(), "nvlink", "-s"}, now);
  REQUIRE(nv.status == 0);
  ob::Observed links = ob::ParseNvlinkStatus(nv.out, Map());
  size_t up = 0;
  for (const auto& b : links.observations)
    if (const auto* l = std::get_if<rackchaos::cluster::LinkStateChange>(&b)) up += l->up ? 1 : 0;
  CHECK(up == 3 * 18);
}

namespace {

// Runs rig-rank with `args`.
Run RigRank(const std::vector<std::string>& args) { return Shell("'" RIG_RANK_BIN "'", args); }

}  // namespace

TEST_CASE("rig stubs: rig-rank refuses an option value out of range before it starts, naming the option") {
  const Tray tray("rank");  // the rank's status file goes there
  const std::vector<std::string> base = {"--hosts", "127.0.0.1,127.0.0.2", "--rank", "0", "--timeout", "1",
                                         "--dir", tray.dir.string()};
  struct Bad {
    std::string option, value;
  };
  for (const Bad& bad : std::vector<Bad>{{"--work-ms", "-1"}, {"--work-ms", "nan"}, {"--work-ms", "1e300"},
                                         {"--work-ms", "15ms"}, {"--work-ms", ""}, {"--compute-ms", "inf"},
                                         {"--rank", "abc"}, {"--rank", "1.5"}, {"--port", "0"},
                                         {"--port", "70000"}, {"--ckpt-every", "0"}, {"--timeout", "-5"},
                                         {"--bytes", "99999999999"}, {"--start", "-1"}}) {
    CAPTURE(bad.option);
    CAPTURE(bad.value);
    std::vector<std::string> args = base;
    args.push_back(bad.option);
    args.push_back(bad.value);
    const Run r = RigRank(args);
    CHECK(r.status == 2);
    CHECK(r.out.find("rig-rank: " + bad.option + " must be") != std::string::npos);
  }
  const Run dangling = RigRank({"--hosts", "127.0.0.1,127.0.0.1", "--work-ms"});
  CHECK(dangling.status == 2);
  CHECK(dangling.out.find("--work-ms has no value") != std::string::npos);
  // In range, the options are taken: the rank gets as far as its ring and times out there (exit 3): its
  // neighbour on 127.0.0.2 never started. 0 ms of work per step and a whole-number port are in range.
  const int port = 20000 + static_cast<int>(getpid() % 20000);
  std::vector<std::string> good = base;
  for (const char* a : {"--work-ms", "0", "--compute-ms", "12.5", "--port"}) good.push_back(a);
  good.push_back(std::to_string(port));
  const Run ok = RigRank(good);
  CHECK(ok.status == 3);
  CHECK(ok.out.find("collective timeout") != std::string::npos);
}
