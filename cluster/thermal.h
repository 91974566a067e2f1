// First-order thermal model of a liquid-cooled GPU, solved in closed form between events.
//
//   C dT/dt = P - G (T - T_in)    =>    T(t) = T_ss + (T_0 - T_ss) e^(-t/tau),
//   T_ss = T_in + P / G,  tau = C / G,  G = G_residual + G_full * valve_opening.
//
// With the valve shut, G falls to the residual conductance, T_ss rises far above the slowdown
// temperature, and the GPU throttles (holding T at slowdown by cutting power to G (T_slow - T_in)) or,
// when even its lowest power is too much, heats on to the shutdown temperature.
#pragma once

#include <optional>

#include "core/units.h"

namespace rackchaos::cluster {

struct ThermalState {
  double t0_c = 0;      // temperature at `since`
  Time since{};
  double steady_c = 0;  // T_ss for the current power and flow
  double tau_s = 1;     // time constant for the current flow
};

// Temperature at `now`.
double TemperatureAt(const ThermalState& s, Time now);
// When the trajectory reaches `level`, or nullopt if it never does (approaches from the other side).
std::optional<Time> TimeToReach(const ThermalState& s, double level);
// Restarts the trajectory at `now` for a new power and conductance.
ThermalState Retarget(const ThermalState& s, Time now, double power_w, double conductance_w_per_k,
                      double heat_capacity_j_per_k, double inlet_c);
// Relative speed of a GPU limited to `power_w` of its `tdp_w`: dynamic power goes as f^3 under
// voltage-frequency scaling, so speed = (P / TDP)^(1/3), capped at 1 [derived].
double SpeedAtPower(double power_w, double tdp_w);

}  // namespace rackchaos::cluster
