#include "cluster/thermal.h"

#include <algorithm>
#include <cmath>

namespace rackchaos::cluster {

double TemperatureAt(const ThermalState& s, Time now) {
  double dt = (now - s.since).Seconds();
  if (dt <= 0) return s.t0_c;
  return s.steady_c + (s.t0_c - s.steady_c) * std::exp(-dt / s.tau_s);
}

std::optional<Time> TimeToReach(const ThermalState& s, double level) {
  double from = s.t0_c - s.steady_c;
  double to = level - s.steady_c;
  if (from == 0 || to == 0) return std::nullopt;
  if ((from > 0) != (to > 0)) return std::nullopt;       // level is beyond the steady state
  if (std::fabs(to) >= std::fabs(from)) return std::nullopt;  // already at or past the level
  double dt = s.tau_s * std::log(from / to);
  // Round up so that at the returned time the level has been reached.
  return s.since + Duration{static_cast<int64_t>(std::ceil(dt * 1e6))};
}

ThermalState Retarget(const ThermalState& s, Time now, double power_w, double conductance_w_per_k,
                      double heat_capacity_j_per_k, double inlet_c) {
  ThermalState n;
  n.t0_c = TemperatureAt(s, now);
  n.since = now;
  n.steady_c = inlet_c + power_w / conductance_w_per_k;
  n.tau_s = heat_capacity_j_per_k / conductance_w_per_k;
  return n;
}

double SpeedAtPower(double power_w, double tdp_w) {
  if (power_w <= 0 || tdp_w <= 0) return 0;
  if (power_w >= tdp_w) return 1.0;  // the common case, per rank per step report: skip the cbrt
  return std::cbrt(power_w / tdp_w);
}

}  // namespace rackchaos::cluster
