// The real-mode action table: everything a site inventory's command templates may carry out, one row
// per action (docs/inventory-reference.md is generated from it).
//
// A row names the inventory key, the Backend verb the action carries out, the fault kind that uses it,
// what its target is (which decides the host its commands run on and the placeholders the target
// provides) and how it is checked. The inventory loader, plan validation, the SSH backend's verbs
// (runner/site/ssh_backend.h), `rackchaos explain` and the generated reference all read this table,
// so making a fault kind or a healer verb work on real hosts is one row here (and, for a fault kind,
// the real_mode() text of its injector). Plain data; no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/backend.h"
#include "cluster/topology.h"

namespace rackchaos::injectors {

// What an action's target is: where its commands run and which placeholders the target provides
// (besides {host} {address} {tray} {bmc} {serial} and the site's vars).
enum class RealTarget {
  kNic,         // a NIC of a compute tray: {iface} {nic}; on the tray's host
  kNvlinkPort,  // an NVLink port of a GPU: {gpu} {port}; on the tray's host
  kGpu,         // a GPU: {gpu}; on the tray's host
  kValve,       // a compute tray's coolant valve: {valve_endpoint} {valve_object}
  kTray,        // a compute tray; on its host
  kSite,        // no component (jobs, site-wide observations): on the action's run_on host
};

// How an action's effect is checked.
enum class RealCheck {
  kVerify,    // on/off: `verify` exits 0 while the fault is in effect and 1 when it is not
  kBaseline,  // a value: `baseline` prints it; read before apply, read back after apply and revert
  kExit,      // one command (a healer action): its exit status
  kOutput,    // an observation: its output lines (formats in docs/real-mode.md)
};

struct RealAction {
  std::string name;                   // the inventory key: injectors.<name>, or healer.<name>
  bool healer = false;                // in the inventory's `healer:` section: `apply` (and `run_on`) only
  std::optional<cluster::Verb> verb;  // the Backend verb it carries out; none for observe_* and *_job
  std::string injector;               // the fault kind whose faults use it; "healer" for healer actions
  RealTarget target = RealTarget::kTray;
  std::string target_text;                // for people: "a NIC", "a tray", "the site"; "" = every target
  std::vector<std::string> placeholders;  // what the target and the verb provide (docs, template checks)
  RealCheck check = RealCheck::kVerify;
  std::string checked_by;  // for people: "verify", "baseline", "exit 0 = drained", ...
  // Value actions (kBaseline): the placeholder carrying the value, and the command's units per model
  // unit (a valve opening is a fraction in the model and a percent on the wire).
  std::string value;
  double wire_scale = 1;
};

// Every action, fault actions first, in documentation order.
const std::vector<RealAction>& RealActions();
// nullptr when unknown.
const RealAction* FindRealAction(std::string_view name);
// The action that carries out `verb`; nullptr when no action does (the verb is simulator-only).
const RealAction* RealActionFor(cluster::Verb verb);
// True when `target` is of the kind `kind` describes (a NIC for kNic, a GPU's port for kNvlinkPort, ...).
bool TargetFits(RealTarget kind, const cluster::Topology& topo, const cluster::Target& target);
// The fault actions of fault kind `injector` that fit `target`, or when none fits, all of its fault
// actions (so that binding one can say what it takes); empty for a kind with no real-mode action.
std::vector<const RealAction*> RealActionsOf(std::string_view injector, const cluster::Topology& topo,
                                             const cluster::Target& target);

}  // namespace rackchaos::injectors
