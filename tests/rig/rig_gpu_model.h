// The rig's GPUs: what a tray's injected state means for its four "GPUs", computed with the simulator's
// own functions (cluster/thermal.h) on the shipped gb200-nvl72 model, so that a fault looks and slows on
// the rig as on the simulator (issue 21, "Proven on the rig"). Used by rig-rank (its compute speed) and
// the rig-gpu helper (the tray's nvidia-smi, journalctl and dcgm-exporter stand-ins).
//
// A tray's state lives in its directory ($RIG_DIR/trays.d/<tray>), written by the `rig` script:
//   power_cap     watts; absent = the model's TDP (no cap)                      rig power set
//   valve         the tray's coolant valve opening 0..1; absent = 1 (open)      rig valve
//   gpu<i>.lost   GPU i has fallen off the bus (Xid 79)                          rig gpu NODE fail
//   gpu<i>.xid    the last Xid of GPU i (dcgm-exporter's DCGM_FI_DEV_XID_ERRORS)
//   kernel.log    "<unix microseconds> <message>" per kernel log line (Xid lines in the driver's format)
//   rank.status   the rank's heartbeat (tests/rig/rig_rank.cpp): fresh = the GPUs are busy
//   thermal       the current temperature trajectory (kept by ReadTray under thermal.lock)
// The thermal model is the simulator's (cluster/sim_thermal.cpp, UpdateThermal): demand = TDP when busy,
// idle power otherwise, limited by the cap; conductance = residual + full x valve; T follows the
// first-order curve (Retarget/TemperatureAt) and, on reaching the slowdown temperature, the GPU throttles
// to the power that holds it there (at least the model's minimum power, so with the valve shut it heats
// on towards shutdown). Speed = SpeedAtPower(cap, or the throttled power when lower).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/catalogue.h"

namespace rackchaos::rig {

// The shipped model the rig stands for (gb200-nvl72: tdp 1200 W, ...). Exits 2 if it cannot be loaded.
const cluster::RackModel& RigModel();

// The SM clock of an unthrottled GPU of the rig [guess: B200-class boost clock]; the model has none.
inline constexpr double kMaxSmMhz = 1965;

// Relative compute speed under a power cap of `cap_w`: cluster::SpeedAtPower(cap, the model's TDP), the
// same function the simulator's Thermal::GpuSpeed calls (300 W -> 0.630, a 1.587x longer compute phase).
double SpeedAtCap(double cap_w);

// The tray's power cap in watts from `<tray_dir>/power_cap`; the model's TDP when missing or unreadable.
double ReadCap(const std::string& tray_dir);

struct GpuState {
  int index = 0;
  std::string pci;   // nvidia-smi's form, "00000000:01:00.0"
  std::string uuid;  // "GPU-..." (fixed per tray and index)
  bool lost = false;
  double temperature_c = 0, power_w = 0, limit_w = 0, sm_mhz = 0, speed = 1;
  uint64_t reasons = 0;  // NVML clocks event reasons (idle 0x1, sw power cap 0x4, sw/hw thermal 0x20|0x40)
  int xid = 0;           // the last Xid, 0 = none
};

struct TrayState {
  std::string tray;  // the directory's name, "tray3"
  std::vector<GpuState> gpus;
  double speed = 1;  // the slowest live GPU's (the rank waits for it)
};

// The tray's GPUs at `now_unix` (seconds). Updates <tray_dir>/thermal when the power or coolant changed
// or the GPUs crossed their slowdown temperature (under an flock on <tray_dir>/thermal.lock).
TrayState ReadTray(const std::string& tray_dir, double now_unix);

// A kernel log line of the driver for an Xid on the GPU at `pci` (nvidia-smi's form), as the NVIDIA driver
// prints it: "NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
std::string XidLine(const std::string& pci, int xid);

double UnixNow();

}  // namespace rackchaos::rig
