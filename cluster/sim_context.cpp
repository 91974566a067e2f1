#include "cluster/sim_context.h"

#include <algorithm>
#include <string>

namespace rackchaos::cluster {

SimContext::SimContext(const Topology& topology, VirtualClock& clock, EventSink& events, SimOptions options,
                       Rng part_phases)
    : topo_(topology), clock_(clock), events_(events), opt_(std::move(options)), part_phases_(part_phases) {}

void SimContext::Emit(ObservationBody body, Time at) {
  // A timer fires once, so its body moves into the observation (a step report is one entry per rank).
  clock_.CallAt(at, [this, body = std::move(body)]() mutable {
    Observation obs{clock_.Now(), std::move(body)};
    for (ObservationSink* s : sinks_) s->OnObservation(obs);
  });
}

void SimContext::EmitSamples(std::vector<TelemetrySample> samples, Time at) {
  clock_.CallAt(at, [this, samples = std::move(samples)] {
    for (const TelemetrySample& sample : samples) {
      const Observation obs{clock_.Now(), sample};
      for (ObservationSink* s : sinks_) s->OnObservation(obs);
      if (std::any_of(sinks_.begin(), sinks_.end(), [](const ObservationSink* s) { return s->StopsRun(); })) return;
    }
  });
}

void SimContext::Physics(ComponentId c, const char* what, double value, FaultId cause) {
  Record(PhysicsChanged{c, what, value, cause});
}

Time SimContext::NextSlot(Duration phase, Duration period, Time after) {
  // Link polls (1 s) run on the telemetry phase (up to 10 s): reduce it first, or a change early in the
  // run waits for the full phase.
  phase.us %= period.us;
  int64_t k = (after.us - phase.us) / period.us + 1;
  if (after.us < phase.us) k = 0;
  Time t{phase.us + k * period.us};
  return t > after ? t : t + period;
}

Duration SimContext::PartPollPhase(ComponentId controller) const {
  Rng own = part_phases_.Fork(std::to_string(controller));
  return Duration{static_cast<int64_t>(own.Below(static_cast<uint64_t>(opt_.telemetry_period.us)))};
}

void SimContext::PartHealth(ComponentId part, bool ok) {
  const ComponentId controller = topo_.at(part).kind == Kind::kPump ? topo_.CduOfRack(topo_.RackOf(part)) : part;
  Emit(TelemetrySample{part, Metric::kPartOk, ok ? 1.0 : 0.0},
       NextSlot(PartPollPhase(controller), opt_.telemetry_period, clock_.Now()));
}

}  // namespace rackchaos::cluster
