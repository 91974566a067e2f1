// A site inventory: which real hosts stand behind a rack model's components, and the command templates
// that apply, verify and revert each fault on them (docs/real-mode.md describes the format).
//
// LoadInventory reads the YAML once into these plain values, checking keys, types and every template's
// syntax and placeholders, with "FILE:LINE:COL: what; what would be valid" errors like the plan loader.
// CheckTarget then answers, per fault target of a validated plan, whether the inventory maps it and has
// the templates its verb needs. Immutable after loading; no I/O besides reading the file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/backend.h"
#include "cluster/topology.h"
#include "core/status.h"
#include "core/units.h"
#include "core/source_pos.h"
#include "runner/ssh/host_spec.h"

namespace rackchaos::runner {

// The command templates of one fault action (see ActionFor). Empty strings are absent templates.
//  apply     puts the fault in place.
//  revert    undoes it (may use {baseline}, the value `baseline` read before apply).
//  verify    (on/off actions) exits 0 while the fault is in effect and 1 when it is not.
//  baseline  (value actions) prints the current value; the first number on stdout is used.
//  run_on    the inventory host that runs the commands; empty = the host of the target's tray.
struct ActionTemplates {
  std::string apply, revert, verify, baseline;
  std::string run_on;
  SourcePos pos;
};

struct InventoryHost {
  ssh::HostSpec spec;
  std::map<std::string, std::string> env;   // exported before every command on this host
  std::map<std::string, std::string> vars;  // extra template values for commands on this host
  SourcePos pos;
};

// One compute tray of the model and what it is on the site.
struct TrayMapping {
  std::string tray;  // model name, e.g. "r01.tray03"
  std::string host;  // an InventoryHost name
  std::string bmc;   // BMC address for Redfish templates ({bmc}); optional
  std::string serial;
  std::vector<std::string> gpus;  // by GPU index in the tray: the device index nvidia-smi takes
  std::vector<std::string> nics;  // by NIC index in the tray: the interface name
  std::string valve_endpoint, valve_object;  // {valve_endpoint}, {valve_object}
  std::map<std::string, std::string> vars;
  SourcePos pos;
};

// The site's Prometheus as an observation source (issue 21; runner/site/prometheus_source.h): one
// range query per `period` for the whole site over dcgm-exporter's and node_exporter's metrics.
struct PrometheusConfig {
  std::string url;  // http://host[:port][/prefix], checked by ParseHttpUrl (no https)
  Duration period = Duration::Seconds(10);
  Duration max_age = Duration::Seconds(30);  // a newer sample than this or the value is stale
  Duration timeout = Duration::Seconds(5);   // for the whole answer, once connected
  Duration connect_timeout = Duration::Seconds(2);
  int max_sm_clock_mhz = 0;  // the GPUs' maximum SM clock; 0 = read DCGM_FI_DEV_MAX_SM_CLOCK
  // Which observations it provides: a subset of PrometheusObservations(), in that order.
  std::vector<std::string> provides = {"gpu_telemetry", "xid"};
  SourcePos pos;
};
// "gpu_telemetry" (temperature, power, SM clock, clock event reasons), "xid" (DCGM's last Xid),
// "nic_links" (node_exporter's carrier of the trays' NICs).
const std::vector<std::string>& PrometheusObservations();
// One point of the BMC source: a Redfish URL and what its reading is (redfish_sensors.h).
struct RedfishPointSpec {
  std::string url;        // the GET's full URL, "https://10.0.0.21/redfish/v1/Chassis/1/Sensors/Inlet"
  std::string component;  // the model component it reads ("r01.tray01.gpu0", "r01.psu_shelf0.psu3")
  std::string metric;     // gpu_temperature, switch_temperature, coolant_flow, leak, psu_ok or part_ok
  SourcePos pos;
};

// One observation source of the `observe:` section (runner/site/ssh_sources.h, docs/real-mode.md): what
// rackchaos runs, how often, and how long a poll may take. The output is always parsed by rackchaos.
struct ObserveSpec {
  std::string tool;     // gpu: "nvidia-smi" (default) or "dcgmi"; the others have one tool each
  std::string command;  // template: the program (gpu, nvlink, kernel_log) or the whole GET (bmc); "" = default
  std::string run_on;   // bmc: the host that runs the GETs (required)
  Duration period{};    // 0 in the file = healer.observe_period (filled in by the loader)
  Duration timeout = Duration::Seconds(10);
  std::vector<RedfishPointSpec> points;  // bmc
  SourcePos pos;
};

// The `observe:` section's sources, in documentation order.
const std::vector<std::string>& ObserveSourceNames();  // gpu, nvlink, kernel_log, bmc

struct Inventory {
  std::string path;  // as loaded
  std::string site;
  std::string model;
  int racks = 1;
  Duration connect_timeout = Duration::Seconds(10);
  Duration command_timeout = Duration::Seconds(60);
  // Host-side expiry fires this long after a fault's planned end, so the runner's own revert comes first.
  Duration expiry_grace = Duration::Seconds(30);
  int max_concurrent = 256;
  // Armed faults (runner/engine/fault_timeline.h): applies start on the hosts `arm_lead` before their `at`, and
  // the hosts are told the instant `fire_lead` before it. fire_lead < arm_lead < command_timeout.
  Duration arm_lead = Duration::Seconds(3);
  Duration fire_lead = Duration::Millis(250);
  // How often the healer's observe_* commands run (healer.observe_period).
  Duration observe_period = Duration::Seconds(1);
  std::map<std::string, InventoryHost> hosts;
  std::map<std::string, TrayMapping> trays;           // by model tray name
  std::map<std::string, ActionTemplates> actions;     // by action name (ActionNames(), HealerActionNames())
  std::optional<PrometheusConfig> prometheus;         // the `prometheus:` section, when present
  std::map<std::string, ObserveSpec> observe;          // by source name (ObserveSourceNames())
  SourcePos pos;                                      // of the document
};

// Reads and checks the inventory at `path`. kNotFound / kIoError when the file cannot be read,
// kInvalidArgument with FILE:LINE:COL for any problem in its content.
Result<Inventory> LoadInventory(const std::string& path);
// The same from text; `path_for_messages` names the file in errors and becomes Inventory::path.
Result<Inventory> ParseInventory(const std::string& text, const std::string& path_for_messages);

// The inventory's keys, section by section in documentation order: the loader accepts exactly these and
// docs/inventory-reference.md is generated from them (a test checks). Sections: "" (top level), ssh,
// defaults, host (hosts[]), tray (trays.<tray>), valve (trays.<tray>.valve), action (injectors.<action>),
// observe, source (observe.<source>), point (observe.bmc.points[]).
// A number's key carries its inclusive bounds (min < max; durations in microseconds): the loader refuses
// a value outside them naming the range, and the reference prints it.
struct InventoryKey {
  enum class Number { kNone, kInt, kDuration };
  std::string section, key, meaning;
  Number number = Number::kNone;
  int64_t min = 0, max = 0;
};
const std::vector<InventoryKey>& InventoryKeys();
// The key `key` of `section`; a programmer error (abort) when the table has none.
const InventoryKey& InventoryKeyOf(std::string_view section, std::string_view key);
// "from 1 to 65535", "from 100ms to 1h": a number key's range as messages and the reference say it.
std::string DescribeRange(const InventoryKey& key);

// The actions an inventory may define, as injectors/real_actions.h lists them (that table is the one
// place a real-mode action is declared): the injector that uses each (healer actions: "healer"), its
// targets, the placeholders they provide (besides CommonPlaceholders() and the site's vars) and how it
// is checked (`verify` for on/off, `baseline` for values; healer actions by exit status or output).
struct ActionInfo {
  std::string name;
  std::string injector;  // the fault kind that uses it
  std::string target;    // which of its targets ("a NIC"), "" = all
  std::vector<std::string> placeholders;
  std::string checked_by;
};
const std::vector<ActionInfo>& InventoryActions();  // the `injectors:` section's
// The `healer:` section's, in the same form; apply only. Their `target` is kTrayAction (runs on the
// tray's host unless run_on), kSiteAction (needs run_on) or a component ("a GPU", on its tray's host).
inline constexpr const char* kTrayAction = "a tray";
inline constexpr const char* kSiteAction = "the site";
const std::vector<ActionInfo>& HealerActions();
const std::vector<std::string>& CommonPlaceholders();  // host, address, tray, bmc, serial

// Action names an inventory may define, in documentation order (link_down, link_degrade, nvlink_down,
// gpu_throttle, valve_fail, tray_pull, ...), and the `healer:` section's (observe_tray, observe_links,
// observe_jobs, drain, resume, ...; docs/real-mode.md).
const std::vector<std::string>& ActionNames();
const std::vector<std::string>& HealerActionNames();
// The action that carries out `verb` (link_down for kNicLink, nvlink_down for kNvlinkPort, drain for
// kDrain, ...); empty for verbs no action provides.
std::string ActionFor(cluster::Verb verb);
// True for actions that set a value and read it back through `baseline` (gpu_throttle, valve_fail).
bool IsValueAction(const std::string& action);

// The verbs a fault of `injector` needs on `target` (link_down needs kNvlinkPort or kNicLink); empty
// for injectors with no real-mode action (use Injector::verbs()).
std::vector<cluster::Verb> VerbsForTarget(std::string_view injector, const cluster::Topology& topo,
                                          const cluster::Target& target);

// What one command on one target is rendered with: the host it runs on and the placeholder values.
struct TargetBinding {
  std::string host;  // InventoryHost name
  std::map<std::string, std::string> values;
};

// Resolves `target` for `action`: the host (the tray's, or the action's run_on) and every placeholder
// the target provides ({host} {address} {tray} {bmc} {gpu} {port} {iface} {valve_endpoint}
// {valve_object} and the host's and tray's vars). NotSupported when the inventory does not define the
// action or the target is not of the kind it takes, NotFound (naming what is missing) when the
// inventory does not map the target.
Result<TargetBinding> BindTarget(const Inventory& inv, const cluster::Topology& topo, const std::string& action,
                                 const cluster::Target& target);

// Binds a site-wide healer action (observe_links, observe_jobs, *_job) to its run_on host: {host} and
// {address} are that host's, plus its vars. NotSupported when the inventory does not define it.
Result<TargetBinding> BindSite(const Inventory& inv, const std::string& action);

}  // namespace rackchaos::runner
