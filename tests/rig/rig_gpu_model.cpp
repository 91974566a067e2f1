#include "tests/rig/rig_gpu_model.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cluster/thermal.h"

namespace rackchaos::rig {

const cluster::RackModel& RigModel() {
  static const cluster::RackModel model = [] {
    auto m = cluster::LoadRackModel("gb200-nvl72");
    if (!m.ok()) {
      std::fprintf(stderr, "rig: cannot load the gb200-nvl72 model\n");
      std::exit(2);
    }
    return std::move(m).value();
  }();
  return model;
}

double SpeedAtCap(double cap_w) { return cluster::SpeedAtPower(cap_w, RigModel().gpu_tdp_w); }

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

bool ReadNumber(const std::string& path, double& out) {
  std::ifstream in(path);
  return static_cast<bool>(in >> out);
}

bool Exists(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0;
}

Time AtUnix(double s) { return Time{} + Duration::FromSecondsF(s); }

// The stored trajectory and what it was made for.
struct Trajectory {
  cluster::ThermalState th;
  double demand = -1, conductance = -1, power = 0;
  bool throttling = false;
};

bool Load(const std::string& path, Trajectory& t) {
  std::ifstream in(path);
  double since = 0;
  int throttling = 0;
  if (!(in >> t.th.t0_c >> since >> t.th.steady_c >> t.th.tau_s >> t.demand >> t.conductance >> t.power >> throttling))
    return false;
  t.th.since = AtUnix(since);
  t.throttling = throttling != 0;
  return true;
}

void Store(const std::string& path, const Trajectory& t) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%.9g %.6f %.9g %.9g %.9g %.9g %.9g %d\n", t.th.t0_c,
                (t.th.since - Time{}).Seconds(), t.th.steady_c, t.th.tau_s, t.demand, t.conductance, t.power,
                t.throttling ? 1 : 0);
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << buf;
  std::rename(tmp.c_str(), path.c_str());
}

// The simulator's UpdateThermal for one tray's GPUs (they share power, cap and coolant on the rig).
Trajectory Advance(Trajectory t, double demand, double conductance, double now_s) {
  const cluster::RackModel& m = RigModel();
  const Time now = AtUnix(now_s);
  const double hold = conductance * (m.gpu_slowdown_c - m.inlet_c);  // power that keeps T at slowdown
  auto retarget = [&](Time at, double power) {
    t.th = cluster::Retarget(t.th, at, power, conductance, m.gpu_heat_capacity_j_per_k, m.inlet_c);
    t.power = power;
  };
  if (t.demand < 0) {  // first reading: the GPUs have sat at this demand long enough to be steady
    t.th = cluster::ThermalState{m.inlet_c + demand / conductance, now, m.inlet_c + demand / conductance,
                                 m.gpu_heat_capacity_j_per_k / conductance};
    t.power = demand;
  }
  if (t.demand != demand || t.conductance != conductance) {
    const double temp = cluster::TemperatureAt(t.th, now);
    if (t.throttling && demand <= hold) t.throttling = false;
    if (!t.throttling && demand > hold && temp >= m.gpu_slowdown_c - 1e-9) t.throttling = true;
    t.demand = demand;
    t.conductance = conductance;
    retarget(now, t.throttling ? std::max(hold, std::min(m.gpu_min_power_w, demand)) : demand);
    if (t.throttling && t.power <= hold + 1e-9 && temp <= m.gpu_slowdown_c) t.th.t0_c = t.th.steady_c = temp;
  }
  if (!t.throttling && demand > hold) {  // crossed the slowdown temperature since: throttle from then on
    if (auto at = cluster::TimeToReach(t.th, m.gpu_slowdown_c); at && *at <= now) {
      t.throttling = true;
      retarget(*at, std::max(hold, std::min(m.gpu_min_power_w, demand)));
      if (t.power <= hold + 1e-9) t.th.t0_c = t.th.steady_c = m.gpu_slowdown_c;
    }
  }
  return t;
}

}  // namespace

double ReadCap(const std::string& tray_dir) {
  double w = 0;
  if (ReadNumber(tray_dir + "/power_cap", w) && w > 0) return w;
  return RigModel().gpu_tdp_w;
}

TrayState ReadTray(const std::string& tray_dir, double now_s) {
  const cluster::RackModel& m = RigModel();
  TrayState tray;
  tray.tray = tray_dir.substr(tray_dir.find_last_of('/') + 1);
  const double cap = std::clamp(ReadCap(tray_dir), m.gpu_min_power_w, m.gpu_tdp_w);
  double valve = 1;
  if (!ReadNumber(tray_dir + "/valve", valve)) valve = 1;
  valve = std::clamp(valve, 0.0, 1.0);
  double heartbeat = 0;
  {
    std::ifstream in(tray_dir + "/rank.status");
    std::string key;
    if (!(in >> key >> heartbeat) || key != "heartbeat") heartbeat = 0;
  }
  const bool busy = now_s - heartbeat < 3;  // the rank rewrites its status every 250 ms
  const double demand = std::min(busy ? m.gpu_tdp_w : m.gpu_idle_w, cap);
  const double conductance = m.residual_conductance_w_per_k + m.conductance_w_per_k * valve;

  Trajectory t;
  {
    const int lock = open((tray_dir + "/thermal.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0) flock(lock, LOCK_EX);
    Trajectory stored;
    if (!Load(tray_dir + "/thermal", stored)) stored = Trajectory{};
    t = Advance(stored, demand, conductance, now_s);
    if (lock >= 0) {
      Store(tray_dir + "/thermal", t);
      close(lock);  // releases the lock
    }
  }
  const double temp = std::min(cluster::TemperatureAt(t.th, AtUnix(now_s)), m.gpu_shutdown_c);
  double budget = cap;
  if (t.throttling) budget = std::min(budget, t.power);
  const double speed = cluster::SpeedAtPower(budget, m.gpu_tdp_w);
  uint64_t reasons = 0;
  if (!busy) reasons |= 0x1;                    // gpu_idle
  if (busy && cap < m.gpu_tdp_w) reasons |= 0x4;  // sw_power_cap: the cap holds the clock down
  if (t.throttling) reasons |= 0x20 | 0x40;     // sw and hw thermal slowdown
  tray.speed = 1;
  const int n = m.gpus_per_tray;
  const unsigned tray_no = static_cast<unsigned>(std::strtoul(tray.tray.c_str() + std::min<size_t>(4, tray.tray.size()), nullptr, 10));
  for (int i = 0; i < n; ++i) {
    GpuState g;
    g.index = i;
    const std::string bus = i < static_cast<int>(m.gpu_pci_bus_ids.size()) ? m.gpu_pci_bus_ids[static_cast<size_t>(i)] : "0000:00:00";
    g.pci = "0000" + bus + ".0";  // "0000:01:00" -> nvidia-smi's 8-digit domain "00000000:01:00.0"
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-7a1c0000-0000-4000-8000-%06x%06x", tray_no, static_cast<unsigned>(i));
    g.uuid = uuid;
    g.lost = Exists(tray_dir + "/gpu" + std::to_string(i) + ".lost");
    double xid = 0;
    if (ReadNumber(tray_dir + "/gpu" + std::to_string(i) + ".xid", xid)) g.xid = static_cast<int>(xid);
    g.temperature_c = temp;
    g.power_w = t.power;
    g.limit_w = cap;
    g.speed = speed;
    g.sm_mhz = kMaxSmMhz * speed;
    g.reasons = reasons;
    if (!g.lost) tray.speed = std::min(tray.speed, speed);
    tray.gpus.push_back(g);
  }
  return tray;
}

std::string XidLine(const std::string& pci, int xid) {
  // The driver names the device "PCI:dddd:bb:dd" (domain of 4 digits, no function).
  std::string dev = pci.size() >= 16 ? pci.substr(4, 10) : pci;
  std::string text;
  switch (xid) {
    case 79: text = "pid='<unknown>', name=<unknown>, GPU has fallen off the bus."; break;
    case 48: text = "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0."; break;
    case 94: text = "pid='<unknown>', name=<unknown>, Contained: SM (0x1). RST: No, D-RST: No"; break;
    case 95: text = "pid='<unknown>', name=<unknown>, Uncontained: FBHUB. RST: Yes, D-RST: No"; break;
    case 74: text = "pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"; break;
    default: text = "pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x504648=0x80000000"; break;
  }
  return "NVRM: Xid (PCI:" + dev + "): " + std::to_string(xid) + ", " + text;
}

}  // namespace rackchaos::rig
