// Rack-level part failures, one fault kind each over the backend's SetComponentFailed verb:
//   switch_fail  an NVLink switch tray (r01.switch3): the NVLink domain goes UNHEALTHY in full-bandwidth
//                mode, BANDWIDTH in adaptive mode (every GPU at (S-1)/S)
//   cdu_fail     a rack's CDU or its pumps (r01.cdu, or the rack r01): every tray's coolant flow stops
//   leak         a tray's coolant zone (r01.tray05.valve, or the tray): its leak sensor trips and the CDU
//                shuts the zone's valve
//   leaf_fail    a scale-out leaf switch (rail2.leaf01) or a whole rail (rail2): the NICs behind it lose
//                their links
//   power_fail   a PSU or a whole power shelf (r01.shelf2.psu3, r01.shelf2): an alert within the PSU
//                redundancy, beyond it every tray of the rack loses power
//   pump_fail    one of a CDU's pumps (r01.cdu.pump1): seen by the CDU's controller; within the pump
//                redundancy nothing else changes, beyond it the rack's coolant flow drops
//   spine_fail   a spine switch (spine02): cross-leaf traffic re-routes over the other spines
//   dpu_fail     a tray's BlueField DPU (r01.tray03.dpu0): the NICs it fronts lose their links
// Revert repairs the part. They share the class below; only their tables differ.
#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

using cluster::Kind;

struct PartFault {
  std::string_view name, summary, targets, simulation, real_mode;
  std::vector<Kind> kinds;  // what the target may be; a rack stands for its CDU, a tray for its valve
  std::string_view example;
};

class ComponentFailInjector : public Injector {
 public:
  explicit ComponentFailInjector(PartFault f) : f_(std::move(f)) {}
  std::string_view name() const override { return f_.name; }
  std::string_view summary() const override { return f_.summary; }
  std::string_view targets() const override { return f_.targets; }
  std::string_view simulation() const override { return f_.simulation; }
  std::string_view real_mode() const override { return f_.real_mode; }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kNone;
    return kNone;
  }
  std::vector<cluster::Verb> verbs() const override { return {cluster::Verb::kComponentFailure}; }

  ComponentId PartOf(const cluster::Topology& topo, const cluster::Target& t) const {
    if (t.port >= 0) return kNoComponent;
    Kind kind = topo.at(t.component).kind;
    for (Kind k : f_.kinds) {
      if (k == kind) return t.component;
      if (k == Kind::kCdu && kind == Kind::kRack) return topo.CduOfRack(t.component);
      if (k == Kind::kValve && kind == Kind::kComputeTray) return topo.ValveOfTray(t.component);
    }
    return kNoComponent;
  }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    if (PartOf(topo, t) != kNoComponent) return Status::Ok();
    return WrongTarget(f_.name, f_.targets, f_.example, topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology& topo, const cluster::Target& t, const Params&,
                        FaultId fault) const override {
    RC_RETURN_IF_ERROR(b.SetComponentFailed(PartOf(topo, t), true, fault));
    return Applied{1, "failed"};
  }

  Status Revert(cluster::Backend& b, const cluster::Topology& topo, const cluster::Target& t, const Applied&,
                FaultId fault) const override {
    return b.SetComponentFailed(PartOf(topo, t), false, fault);
  }

 private:
  PartFault f_;
};

}  // namespace

const Injector& SwitchFail() {
  static const ComponentFailInjector kInjector(
      {"switch_fail",
       "fail an NVLink switch tray (the domain goes UNHEALTHY or BANDWIDTH by the rack's mode)",
       "an NVLink switch tray (r01.switch3)",
       "Every GPU of the rack's NVLink domain loses the ports wired to that switch tray (L/S of them; link "
       "state observations within the link poll). Full-bandwidth mode: the domain is UNHEALTHY, its jobs hang "
       "until the healer moves them or the collective timeout fires. Adaptive mode (cluster.nvlink_mode: "
       "adaptive): the domain is BANDWIDTH, every GPU keeps (S-lost)/S of its NVLink bandwidth and jobs slow "
       "down by their NVLink share. Revert repairs the tray.",
       "Not available on real racks: a switch tray is failed in a lab by powering it off from its BMC, which "
       "no inventory action covers yet.",
       {Kind::kSwitchTray},
       "r01.switch3"});
  return kInjector;
}

const Injector& CduFail() {
  static const ComponentFailInjector kInjector(
      {"cdu_fail",
       "stop a rack's CDU (its pumps): every tray of the rack loses coolant flow",
       "a rack's CDU (r01.cdu); the rack (r01) stands for it",
       "Coolant flow of every tray of the rack falls to zero (each tray's flow is its valve opening times the "
       "CDU's flow); every GPU heats through the thermal model, throttles at its slowdown temperature and "
       "shuts down at its limit. Revert restarts the pumps.",
       "Not available on real racks: stopping a CDU is a facility action (lab only, by hand).",
       {Kind::kCdu},
       "r01.cdu"});
  return kInjector;
}

const Injector& Leak() {
  static const ComponentFailInjector kInjector(
      {"leak",
       "a coolant leak in a tray's zone: its leak sensor trips and the CDU shuts the zone's valve",
       "a tray's coolant valve (r01.tray05.valve); the tray (r01.tray05) stands for it",
       "The zone's leak sensor reads wet at the tray's next telemetry poll and the CDU's leak response shuts the "
       "zone's valve at once: coolant flow stops and the tray's GPUs heat, throttle and shut down as with "
       "valve_fail at 0%. Revert (the leak repaired) dries the sensor and reopens the valve fully.",
       "Not available on real racks: a leak is simulated in a lab by wetting the zone's sensor by hand.",
       {Kind::kValve},
       "r01.tray05.valve"});
  return kInjector;
}

const Injector& LeafFail() {
  static const ComponentFailInjector kInjector(
      {"leaf_fail",
       "fail a scale-out leaf switch or a whole rail: the NICs behind it lose their links",
       "a leaf switch (rail2.leaf01) or a rail (rail2)",
       "Every NIC cabled to the leaf (one per tray of the rail, for the racks the leaf serves) or to any leaf of "
       "the rail goes link down, seen within the link poll; each GPU behind one loses scale-out, so every job "
       "spanning trays on them hangs until the healer moves it or the collective timeout fires. Revert brings "
       "the links back.",
       "Not available on real racks: a leaf is failed in a lab by shutting its ports from the switch CLI, which "
       "no inventory action covers yet.",
       {Kind::kLeaf, Kind::kRail},
       "rail2.leaf01"});
  return kInjector;
}

const Injector& PowerFail() {
  static const ComponentFailInjector kInjector(
      {"power_fail",
       "fail a PSU or a whole power shelf (trays lose power beyond the PSU redundancy)",
       "a PSU (r01.shelf2.psu3) or a whole power shelf",
       "The shelf's BMC reports the PSU(s) failed (a telemetry sample per PSU). While the rack's remaining PSU "
       "capacity carries its GPUs at TDP nothing else happens; below it every tray of the rack loses power: "
       "heartbeats stop, jobs hang, and the trays boot when power returns (revert).",
       "Not available on real racks: pulling PSUs is done by hand in a lab.",
       {Kind::kPsu, Kind::kPowerShelf},
       "r01.shelf2.psu3"});
  return kInjector;
}

const Injector& PumpFail() {
  static const ComponentFailInjector kInjector(
      {"pump_fail",
       "fail one of a rack CDU's pumps (the rack heats only beyond the pump redundancy)",
       "a CDU pump (r01.cdu.pump1)",
       "The CDU's controller reports the pump failed (a telemetry sample at its next poll). While the pumps left "
       "number at least the model's cooling.pumps_needed the flow stays nominal and nothing else happens; beyond "
       "that the CDU's flow falls to running / needed, every tray of the rack loses that much coolant flow and its "
       "GPUs heat, throttle and shut down through the thermal model (as with cdu_fail). Revert restarts the pump.",
       "Not available on real racks: stopping a CDU pump is a facility action (lab only, by hand).",
       {Kind::kPump},
       "r01.cdu.pump1"});
  return kInjector;
}

const Injector& SpineFail() {
  static const ComponentFailInjector kInjector(
      {"spine_fail",
       "fail a scale-out spine switch: traffic between leaf groups re-routes over the other spines",
       "a spine switch (spine02), or a super-spine (superspine01) of a three-tier fabric",
       "The fabric manager reports the spine down at its next poll. A job's DP or PP groups that span two or "
       "more leaf groups (a job without parallelism: the job, if its trays do) send their traffic over the "
       "spines left (ECMP): they keep (S - lost) / S of their scale-out bandwidth and the steps grow by that "
       "kind's share; with no spine left the job hangs. Groups inside one leaf group are untouched. With "
       "cluster.fabric.tiers 3 a spine carries only its pod's traffic, and a super-spine the traffic of groups "
       "spanning pods (they keep (SS - lost) / SS). Revert repairs the spine.",
       "Not available on real racks: a spine is failed in a lab by shutting its ports from the switch CLI, which "
       "no inventory action covers yet.",
       {Kind::kSpine, Kind::kSuperSpine},
       "spine02"});
  return kInjector;
}

const Injector& DpuFail() {
  static const ComponentFailInjector kInjector(
      {"dpu_fail",
       "fail a tray's BlueField DPU: the NICs it fronts lose their scale-out (and storage) path",
       "a tray's DPU (r01.tray03.dpu0)",
       "The DPU's BMC reports it failed at its next poll and the NICs it fronts (an equal block of the tray's NICs: "
       "on a GB200 tray dpu0 fronts nic0-1, dpu1 nic2-3) go link down within the link poll: each of their GPUs "
       "loses scale-out as after link_down, so jobs spanning trays hang until the healer moves them or the "
       "collective timeout fires. Revert repairs the DPU and brings the links back.",
       "Not available on real racks: no inventory action powers a DPU off yet.",
       {Kind::kDpu},
       "r01.tray03.dpu0"});
  return kInjector;
}

}  // namespace rackchaos::injectors
