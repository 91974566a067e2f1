// valve_fail: a tray's coolant valve closes to a given opening. Temperature then rises over time;
// the GPUs throttle at their slowdown temperature and shut down at their limit.
// Real mode: Redfish CoolantConnector ValveControl, lab only (REAL-COMMANDS.md §3).
#include <cstdio>

#include "injectors/injector.h"

namespace rackchaos::injectors {
namespace {

std::string Percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", f * 100);
  return buf;
}

class ValveFailInjector : public Injector {
 public:
  std::string_view name() const override { return "valve_fail"; }
  std::string_view summary() const override {
    return "close a compute or NVLink switch tray's coolant valve to an opening (default 0%)";
  }
  std::string_view targets() const override {
    return "a compute tray's coolant valve (r01.tray08.valve), or an NVLink switch tray's (r01.switch3)";
  }
  std::string_view simulation() const override {
    return "The valve closes to `opening`; coolant flow and die-to-coolant conductance fall with it. GPU "
           "temperature follows a first-order model: the GPUs throttle at the model's slowdown temperature "
           "and shut down at its shutdown temperature. A switch tray heats by the same model with its own "
           "numbers (catalogue switch_tray) and is lost at shutdown, as if pulled, until it has cooled. Revert "
           "ends this fault's hold: the valve reopens to its baseline unless a leak or another valve_fail still "
           "holds it.";
  }
  std::string_view real_mode() const override {
    return "Inventory action valve_fail, a value action: baseline prints the valve's current opening in "
           "percent, apply sets {opening} (percent) on {valve_object} at {valve_endpoint} (Redfish "
           "ValveControl on the CDU; lab only), revert sets {baseline}; both are read back.";
  }
  const std::vector<ParamInfo>& params() const override {
    static const std::vector<ParamInfo> kParams = {
        {"opening", ParamType::kFraction, "0%", "how far the valve stays open, 0% = shut"},
    };
    return kParams;
  }
  std::vector<cluster::Verb> verbs() const override { return {cluster::Verb::kValve}; }

  // A tray stands for its valve, so "r01.tray08" and "r01.tray08.valve" both work; a switch tray's
  // valve has no component of its own, the switch tray stands for it.
  static ComponentId ValveOf(const cluster::Topology& topo, const cluster::Target& t) {
    if (topo.at(t.component).kind == cluster::Kind::kValve) return t.component;
    if (topo.at(t.component).kind == cluster::Kind::kComputeTray) return topo.ValveOfTray(t.component);
    if (topo.at(t.component).kind == cluster::Kind::kSwitchTray) return t.component;
    return kNoComponent;
  }

  Status CheckTarget(const cluster::Topology& topo, const cluster::Target& t) const override {
    if (t.port < 0 && topo.at(t.component).kind == cluster::Kind::kSwitchTray && !(topo.model().switch_power_w > 0))
      return Status::Invalid("valve_fail on a switch tray needs switch-tray thermals (the catalogue's switch_tray "
                             "section); " + topo.model().name + " has none: target a compute tray's valve");
    if (t.port < 0 && ValveOf(topo, t) != kNoComponent) return Status::Ok();
    return WrongTarget(name(), "a valve, a compute tray or an NVLink switch tray", "r01.tray08.valve", topo, t);
  }

  Result<Applied> Apply(cluster::Backend& b, const cluster::Topology& topo, const cluster::Target& t, const Params& p,
                        FaultId fault) const override {
    ComponentId valve = ValveOf(topo, t);
    RC_ASSIGN_OR_RETURN(double baseline, b.GetValveOpening(valve));
    double opening = p.count("opening") ? p.at("opening") : 0;
    RC_RETURN_IF_ERROR(b.SetValveOpening(valve, opening, fault));
    return Applied{baseline, "opening=" + Percent(opening) + " baseline=" + Percent(baseline)};
  }

  Status Revert(cluster::Backend& b, const cluster::Topology& topo, const cluster::Target& t, const Applied&,
                FaultId fault) const override {
    return b.Release(cluster::Held::kValveOpening, {ValveOf(topo, t), -1}, fault);
  }
};

}  // namespace

const Injector& ValveFail() {
  static const ValveFailInjector kInjector;
  return kInjector;
}

}  // namespace rackchaos::injectors
