// What every part of the simulator shares (cluster/sim_backend.h lists the parts): the borrowed
// topology, clock and event sink, the options, the observation sinks, and the two ways out of the
// model: observations (symptoms, delivered when the site's poll or heartbeat would reveal them) and
// ground-truth events (PhysicsChanged, JobChanged, ...) recorded at the clock's now.
//
// Ownership: the topology, clock and event sink are borrowed and must outlive the context; the sinks
// must outlive their use. Not thread-safe (the run's event loop).
#pragma once

#include <functional>
#include <limits>
#include <utility>

#include <vector>

#include "cluster/observation.h"
#include "cluster/topology.h"
#include "core/clock.h"
#include "core/event.h"
#include "core/rng.h"

namespace rackchaos::cluster {

struct SimOptions {
  Duration heartbeat_period = Duration::Seconds(10);  // node agent heartbeat
  Duration telemetry_period = Duration::Seconds(10);  // DCGM field polling as exported
  Duration link_poll_period = Duration::Seconds(1);   // IB/NVLink counters visible within ~1 s (RACK-FACTS)
  Duration log_delay = Duration::Seconds(2);          // kernel log line to the collector
  // Step reports: a job's profiler reports every period while some rank is off nominal speed (and once
  // more when they are all back), listing those ranks and summarizing the rest (observation.h); a job
  // whose ranks all run at full speed reports nothing the straggler test could flag, so it costs nothing.
  // The report phase is drawn per job from the seeded generator.
  Duration step_report_period = Duration::Seconds(60);
  double step_jitter = 0.01;  // relative stddev of a rank's compute time in one report
  // remediation.shrink: a requeued elastic job too big for the free trays restarts on fewer GPUs (down
  // to its min_gpus), its steps gpus/placed_gpus times longer; it grows back when trays are free again.
  bool shrink_elastic = false;
  // cluster.spares.racks: the last N racks are spare racks. Jobs are placed on them only when they come
  // back to the queue from a lost NVLink domain (switch tray UNHEALTHY, CDU or pumps, power beyond the
  // shelves' redundancy); any other requeue waits for regular trays or hot spares.
  int spare_racks = 0;
  // With regions (Topology::regions()): the spare racks of each region, its last N racks (spare_racks is
  // then their sum). Jobs are placed inside one region, their own region first (cluster/placement.h).
  std::vector<int> region_spare_racks;
  // A region's health probe (object store, checkpoint store, the region itself) runs every period, at a
  // phase drawn per region from the seeded generator [guess: a load balancer's 10 s health check].
  Duration probe_period = Duration::Seconds(10);
  // cluster.region_link_gbytes_per_s: the link from each region to the next, shared by the far copies
  // of checkpoints with a size (JobConfig::checkpoint_size_gb); 0 = each copy takes checkpoint_copy.
  double region_link_gbytes_per_s = 0;
  // cluster.region_link_background_percent / 100: the share of each region link other traffic takes,
  // from 0 (the copies have it all) to below 1.
  double region_link_background = 0;
  // cluster.object_store_gbytes_per_s: each region's object store read capacity, shared by the jobs
  // streaming from it (sim_storage.cpp); 0 = unlimited (each GPU reads at the catalogue's rate).
  double object_store_gbytes_per_s = 0;
  // The lowest GPU temperature any reader of the run's telemetry acts on: the runner passes the lowest
  // of the healer's detectors' lines (healer::Detector::GpuTemperatureLineC) and the abort limits'
  // (runner::Watch::GpuTemperatureLineC). A tray at full flow whose GPUs neither throttle, shut down nor sit at a power
  // cap, each warming or cooling along a trajectory that stays below it (and below slowdown), is polled no
  // more: no sample on that path can cross a reader's line, so the first minutes of a month, every tray
  // warming from idle to its job's heat, cost one poll a tray instead of five or six. -infinity (the
  // default) polls every change to within 0.5 C of its steady state, as before.
  double telemetry_interest_c = -std::numeric_limits<double>::infinity();
  // A requeued job that gets back all its trays but a few touches only those (sim_restart.cpp), with
  // the same result as releasing and placing every tray. Tests turn it off to compare the two.
  bool restart_in_place = true;
};

class SimContext {
 public:
  // `part_phases`: the stream each controller's poll phase is forked from (PartPollPhase).
  SimContext(const Topology& topology, VirtualClock& clock, EventSink& events, SimOptions options, Rng part_phases);
  SimContext(const SimContext&) = delete;
  SimContext& operator=(const SimContext&) = delete;

  const Topology& topo() const { return topo_; }
  VirtualClock& clock() const { return clock_; }
  const SimOptions& opt() const { return opt_; }
  void Subscribe(ObservationSink* sink) { sinks_.push_back(sink); }

  // Delivers `body` to every sink at `at` (a timer of its own).
  void Emit(ObservationBody body, Time at);
  // Emits the samples in order as one timer (a telemetry tick's): the same observations at the same
  // instant as a timer each, without a heap entry and a std::function per sample. Delivery stops once a
  // sink stops the run (ObservationSink::StopsRun), where the run loop would have stopped.
  void EmitSamples(std::vector<TelemetrySample> samples, Time at);
  // Ground truth, at the clock's now.
  void Record(EventBody body) { events_.Record({clock_.Now(), std::move(body)}); }
  void Physics(ComponentId c, const char* what, double value, FaultId cause);
  // The first time phase + k*period strictly after `after` (a poll or heartbeat slot).
  static Time NextSlot(Duration phase, Duration period, Time after);
  // The poll phase of the controller that reports a part's health (a PSU's shelf BMC, a pump's CDU
  // controller, a DPU's BMC, a spine's fabric manager, a switch tray's management controller): drawn
  // from the seeded generator per controller, so it depends on the seed and the controller only, not
  // on what happened before.
  Duration PartPollPhase(ComponentId controller) const;
  // The part's controller reports its health (Metric::kPartOk) at its next poll: a pump by its CDU's
  // controller, any other part by its own.
  void PartHealth(ComponentId part, bool ok);

  // A crashed job's trays are released lazily (Scheduler::CrashProcesses): at its requeue in place when
  // the healer's requeue is the next thing that happens, else by the first timer or verb of any part
  // that runs before it, all at the crash's instant. Every part's timer calls SettleOwed first.
  void OweRelease(std::function<void()> settle) { settle_ = std::move(settle); }
  // const: a reader (SimBackend's getters) settles it too before it looks.
  void SettleOwed() const {
    if (settle_) std::exchange(settle_, nullptr)();
  }
  void Forgive() { settle_ = nullptr; }  // the requeue took the owed release itself

 private:
  mutable std::function<void()> settle_;
  const Topology& topo_;
  VirtualClock& clock_;
  EventSink& events_;
  const SimOptions opt_;
  std::vector<ObservationSink*> sinks_;
  Rng part_phases_;
};

}  // namespace rackchaos::cluster
