// The CDU's pumps in the simulated cluster. A CDU has `pumps` pumps of which `pumps_needed` carry the
// rack's full coolant flow (N+1 in the shipped catalogues, a [guess]). A pump failure within that
// redundancy changes no flow: only the CDU's controller reports the pump failed. Beyond it the rack's
// flow falls to running / needed and every tray heats through the thermal model, as after cdu_fail;
// the healer then sees the flow and temperature it already watches.
#include <algorithm>
#include <bit>

#include "cluster/sim_backend.h"

namespace rackchaos::cluster {

double SimBackend::CduFlowOf(const Rack& r) const {
  if (r.cdu_failed) return 0;
  const RackModel& m = topo_.model();
  if (m.cdu_pumps_needed <= 0) return 1;
  const int running = m.cdu_pumps - std::popcount(r.pump_failed);
  return std::min(1.0, static_cast<double>(running) / m.cdu_pumps_needed);
}

Duration SimBackend::PartPollPhase(ComponentId controller) const {
  Rng own = part_phases_.Fork(std::to_string(controller));
  return Duration{static_cast<int64_t>(own.Below(static_cast<uint64_t>(opt_.telemetry_period.us)))};
}

void SimBackend::PartHealth(ComponentId part, bool ok) {
  // A pump is reported by its CDU's controller; a DPU or a spine by its own.
  const ComponentId controller = topo_.at(part).kind == Kind::kPump ? topo_.CduOfRack(topo_.RackOf(part)) : part;
  Emit(TelemetrySample{part, Metric::kPartOk, ok ? 1.0 : 0.0},
       NextSlot(PartPollPhase(controller), opt_.telemetry_period, clock_.Now()));
}

Status SimBackend::SetPump(ComponentId pump, bool failed, FaultId cause) {
  Rack& r = rack_of(pump);
  const uint64_t bit = uint64_t{1} << topo_.at(pump).index;
  if (((r.pump_failed & bit) != 0) == failed) return Status::Ok();
  r.pump_failed = failed ? r.pump_failed | bit : r.pump_failed & ~bit;
  Physics(pump, failed ? "pump_failed" : "pump_up", 0, cause);
  PartHealth(pump, !failed);
  return SetCdu(topo_.CduOfRack(topo_.RackOf(pump)), CduFlowOf(r), cause);
}

}  // namespace rackchaos::cluster
