// Injectors: one fault kind each, found through one explicit name -> injector table.
//
// An injector validates its parameters and target, applies the fault through the Backend (after
// reading the baseline it will restore), and reverts it to that baseline. It never talks to the
// healer. Injectors are stateless: what a revert needs is returned by Apply() as an Applied value.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/backend.h"
#include "cluster/topology.h"
#include "core/ids.h"
#include "core/status.h"

namespace rackchaos::injectors {

enum class ParamType { kWatts, kFraction, kDuration, kInteger };
const char* ParamTypeName(ParamType t);  // "power (W, kW)", ...

struct ParamInfo {
  std::string name;
  ParamType type;
  std::string default_text;  // empty = no default
  std::string description;
};

// Parsed parameters: watts, fractions in [0, 1], durations in seconds, integers.
using Params = std::map<std::string, double>;

// What Apply() did and what Revert() restores.
struct Applied {
  double baseline = 0;  // e.g. the power limit before the cap, the valve opening before the failure
  std::string detail;   // for the report: "power_cap=600W baseline=1200W"
};

class Injector {
 public:
  virtual ~Injector() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;  // one line for `rackchaos list injectors`
  // For `rackchaos explain KIND` (a test checks every injector fills all three): which targets it takes,
  // what the simulated cluster does on apply and revert, and what a site's real command templates must do.
  virtual std::string_view targets() const { return ""; }
  virtual std::string_view simulation() const { return ""; }
  virtual std::string_view real_mode() const { return ""; }
  virtual const std::vector<ParamInfo>& params() const = 0;
  virtual std::vector<cluster::Verb> verbs() const = 0;  // backend verbs it needs
  // Whether the target is of a kind this fault applies to; the error says which kinds are.
  virtual Status CheckTarget(const cluster::Topology& topo, const cluster::Target& target) const = 0;
  virtual Result<Applied> Apply(cluster::Backend& backend, const cluster::Topology& topo,
                                const cluster::Target& target, const Params& params, FaultId fault) const = 0;
  virtual Status Revert(cluster::Backend& backend, const cluster::Topology& topo, const cluster::Target& target,
                        const Applied& applied, FaultId fault) const = 0;
};

// The table, in a fixed order.
const std::vector<const Injector*>& AllInjectors();
// nullptr if unknown.
const Injector* FindInjector(std::string_view name);
// "link_down, link_degrade, gpu_throttle, valve_fail, tray_pull, gpu_fail, process_crash"
std::string InjectorNames();

// CheckTarget's refusal: "<injector> needs <wanted> (e.g. <example>); <target> is a <its kind>", or
// "... is an NVLink port" for a port target.
Status WrongTarget(std::string_view injector, std::string_view wanted, std::string_view example,
                   const cluster::Topology& topo, const cluster::Target& target);
// CheckTarget for an injector that takes one component of `kind` (not a port): Ok, or WrongTarget.
Status NeedKind(std::string_view injector, cluster::Kind kind, std::string_view wanted, std::string_view example,
                const cluster::Topology& topo, const cluster::Target& target);

// Parses one parameter value by its declared type; the error says what would be valid.
Result<double> ParseParamValue(const ParamInfo& info, std::string_view text);
// Parses a plan's raw parameter map, filling defaults. Unknown names list the known ones.
Result<Params> ParseParams(const Injector& injector, const std::map<std::string, std::string>& raw);

}  // namespace rackchaos::injectors
