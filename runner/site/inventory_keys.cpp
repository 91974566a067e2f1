// The inventory's key table: the loader accepts exactly these keys, and docs/inventory-reference.md is
// generated from it (with the action table, injectors/real_actions.cpp), so they cannot drift.
#include "runner/site/inventory.h"

#include <cstdlib>

namespace rackchaos::runner {
namespace {

using N = InventoryKey::Number;
constexpr int64_t kMilli = 1000, kSecond = 1000 * kMilli, kMinute = 60 * kSecond, kHour = 60 * kMinute,
                  kDay = 24 * kHour;

}  // namespace

// Bounds: what a real site could mean, with room; a zero where something repeats (observe_period) or
// must take time (timeouts) is refused, and the relations between the ssh durations are checked by the
// loader (CheckLeads).
const std::vector<InventoryKey>& InventoryKeys() {
  static const std::vector<InventoryKey> kKeys = {
      {"", "site", "Site name; component serials default to `<site>-<component>` in reports."},
      {"", "model",
       "The catalogue rack model the inventory maps (`rackchaos list models`); must equal the plan's `cluster.model`."},
      {"", "racks", "How many racks of the model it maps (default 1); must equal the plan's `cluster.racks`.", N::kInt, 1, 100000},
      {"", "ssh", "Transport limits (map, see `ssh`)."},
      {"", "expiry_grace",
       "Duration: the host-side expiry of a fault with `for:` fires this long after its planned end, so the runner's "
       "own revert comes first (default 30s).", N::kDuration, 0, kDay},
      {"", "defaults", "Host fields every host inherits (map, see `defaults`)."},
      {"", "hosts", "List of hosts rackchaos connects to over SSH (see `hosts[]`)."},
      {"", "trays",
       "Map from a model compute tray (`r01.tray03`) to what it is on the site (see `trays.<tray>`); short form "
       "`r01.tray03: host03`. Only mapped trays can be targeted."},
      {"", "injectors",
       "Map from a fault action (see Fault actions below) to its command templates (see `injectors.<action>`)."},
      {"", "healer",
       "Real mode's healer: how it observes the site (`observe_*`, every `observe_period`) and carries out its "
       "actions (see Healer actions below): a map from a healer action to `{apply, run_on}` (docs/real-mode.md)."},
      {"", "prometheus",
       "The site's Prometheus as an observation source: one PromQL query per period for the whole site over "
       "dcgm-exporter's and node_exporter's metrics (map, see `prometheus`; docs/real-mode.md)."},
      {"", "observe",
       "Observation sources beyond the healer's `observe_*` commands: GPU telemetry, NVLink port state, the kernel "
       "log and BMC sensors, read and parsed by rackchaos (map, see `observe`; docs/real-mode.md)."},
      {"healer", "observe_period", "Duration between two observation polls of every tray (default 1s).", N::kDuration, 100 * kMilli, kHour},
      {"ssh", "connect_timeout", "Duration allowed to connect and authenticate to one host (default 10s).", N::kDuration, kSecond, kHour},
      {"ssh", "command_timeout", "Duration one command may run before it counts as failed (default 60s).", N::kDuration, kSecond, kDay},
      {"ssh", "max_concurrent", "SSH sessions open at once (default 256).", N::kInt, 1, 100000},
      {"ssh", "arm_lead",
       "Duration before their `at` at which faults sharing it start on their hosts, armed and waiting (default 3s; "
       "longer than `fire_lead`, at least 1s shorter than `command_timeout`).", N::kDuration, 20 * kMilli, kHour},
      {"ssh", "fire_lead",
       "Duration before `at` at which the armed hosts are told the instant to land on their own clocks (default "
       "250ms): it must cover one write to every host.", N::kDuration, 10 * kMilli, kMinute},
      {"defaults", "port", "SSH port (default 22).", N::kInt, 1, 65535},
      {"defaults", "user", "SSH user; nvidia-smi -pl and ip link need root."},
      {"defaults", "identity_file",
       "Private key file; relative to the inventory, `~/` is `$HOME`. There is no password field."},
      {"defaults", "agent", "true: authenticate with ssh-agent instead of an identity file."},
      {"defaults", "known_hosts", "known_hosts file checked strictly (first contact: `--accept-new-host-keys`)."},
      {"defaults", "env", "Map of environment variables exported before every command."},
      {"defaults", "vars", "Map of extra template values (`{name}` in command templates)."},
      {"host", "name", "Host name used by `trays.<tray>.host` and `run_on` (required)."},
      {"host", "address", "Address or DNS name to connect to (required)."},
      {"host", "port", "As in `defaults`.", N::kInt, 1, 65535},
      {"host", "user", "As in `defaults`."},
      {"host", "identity_file", "As in `defaults`."},
      {"host", "agent", "As in `defaults`."},
      {"host", "known_hosts", "As in `defaults`."},
      {"host", "env", "As in `defaults`; merged over the defaults."},
      {"host", "vars", "As in `defaults`; merged over the defaults."},
      {"tray", "host", "The host (a `hosts[].name`) that runs commands for this tray's GPUs and NICs."},
      {"tray", "bmc", "BMC address, the `{bmc}` of Redfish templates."},
      {"tray", "serial", "Tray serial, used in reports and `rackchaos history`."},
      {"tray", "gpus", "List: `gpu<i>` of the tray -> the index or PCI bus id nvidia-smi takes (`{gpu}`)."},
      {"tray", "nics",
       "List: `nic<i>` of the tray -> its Linux interface name (`{iface}`); never the SSH/management interface."},
      {"tray", "valve", "The tray's coolant valve (map, see `trays.<tray>.valve`)."},
      {"tray", "vars", "Map of extra template values for commands on this tray."},
      {"valve", "endpoint", "The CDU or BMC endpoint that controls the valve (`{valve_endpoint}`)."},
      {"valve", "object", "The valve's object there, e.g. a Redfish path (`{valve_object}`)."},
      {"observe", "gpu",
       "GPU telemetry from every tray host: temperature, power, SM clock, clock event reasons (`tool: nvidia-smi`, "
       "the default, runs `nvidia-smi --query-gpu=... --format=csv,noheader,nounits`; `tool: dcgmi` runs `dcgmi dmon "
       "-e ... -c 1`). Map, see `observe.<source>`; `{}` takes every default."},
      {"observe", "nvlink", "NVLink port state of every tray host's GPUs (`nvidia-smi nvlink -s`)."},
      {"observe", "kernel_log",
       "The kernel log of every tray host through journald with a cursor (`journalctl _TRANSPORT=kernel -o export "
       "...`): Xid lines reach the xid detector."},
      {"observe", "bmc",
       "BMC and CDU sensors over Redfish, one GET per distinct `points[].url` run on `run_on` (temperatures, coolant "
       "flow, leak detectors, PSU and pump health)."},
      {"source", "tool", "`gpu` only: `nvidia-smi` (default) or `dcgmi`."},
      {"source", "period", "Duration between two polls of this source (default `healer.observe_period`).",
       N::kDuration, 100 * kMilli, kHour},
      {"source", "timeout",
       "Duration one poll may take on one host before it counts as an observation error (`unavailable`; default 10s).",
       N::kDuration, kSecond, kHour},
      {"source", "command",
       "Command template of the program, to which rackchaos appends its own arguments (default the tool's name, e.g. "
       "`sudo -n nvidia-smi`, `/opt/dcgm/bin/dcgmi`); for `bmc` the whole GET, which must print the body and then the "
       "HTTP status on a line of its own, with `{url}` (default `curl -sS -k --max-time 10 -w '\\n%{{http_code}}' "
       "{url}`). The output is always parsed by rackchaos."},
      {"source", "run_on", "`bmc` only (required): the host (a `hosts[].name`) that runs the Redfish GETs."},
      {"source", "points", "`bmc` only: the Redfish points to read (list, see `observe.bmc.points[]`)."},
      {"point", "url", "The Redfish URL whose body holds the point (a Sensor, a collection with `$expand`, ...)."},
      {"point", "component", "The model component it reads, e.g. `r01.tray01.gpu0` or a PSU."},
      {"point", "metric",
       "What it reads: `gpu_temperature`, `switch_temperature`, `coolant_flow`, `leak`, `psu_ok` or `part_ok`."},
      {"action", "apply", "Command template that puts the fault in place."},
      {"action", "revert", "Command template that undoes it; value actions get `{baseline}`."},
      {"action", "verify",
       "On/off actions: exits 0 while the fault is in effect and 1 when not; runs after apply and after revert."},
      {"action", "baseline",
       "Value actions: prints the current value (the first number on stdout counts); read before apply and to verify "
       "apply and revert."},
      {"action", "run_on",
       "A host name that runs these commands (e.g. a management host for Redfish); default the target's tray host."},
      {"prometheus", "url",
       "Prometheus' base URL, `http://host:port` with an optional path prefix (required). Plain http: for https put "
       "a TLS-terminating reverse proxy on the runner's side."},
      {"prometheus", "period", "Duration between two queries (default 10s).", N::kDuration, 100 * kMilli, kHour},
      {"prometheus", "max_age",
       "Duration: a series whose newest sample is older is stale, an observation error (default 30s; the query "
       "reads twice this far back).", N::kDuration, kSecond, kHour},
      {"prometheus", "timeout", "Duration allowed for one query's whole answer once connected (default 5s).",
       N::kDuration, 100 * kMilli, 10 * kMinute},
      {"prometheus", "connect_timeout", "Duration allowed to connect (default 2s).", N::kDuration, 100 * kMilli, kMinute},
      {"prometheus", "max_sm_clock",
       "The GPUs' maximum SM clock in MHz, for the clock fraction; 0 (default): read DCGM_FI_DEV_MAX_SM_CLOCK, which "
       "dcgm-exporter publishes only when its counters list it.", N::kInt, 0, 100000},
      {"prometheus", "provides",
       "List of the observations read from Prometheus: `gpu_telemetry` (temperature, power, SM clock, clock event "
       "reasons), `xid` (DCGM's last Xid), `nic_links` (node_exporter's carrier of `trays.<tray>.nics`); default "
       "[gpu_telemetry, xid]."},
  };
  return kKeys;
}

const InventoryKey& InventoryKeyOf(std::string_view section, std::string_view key) {
  for (const InventoryKey& k : InventoryKeys())
    if (k.section == section && k.key == key) return k;
  std::abort();  // every caller names a key of the table above
}

std::string DescribeRange(const InventoryKey& key) {
  if (key.number == N::kInt) return "from " + std::to_string(key.min) + " to " + std::to_string(key.max);
  return "from " + FormatDuration(Duration::Micros(key.min)) + " to " + FormatDuration(Duration::Micros(key.max));
}

const std::vector<std::string>& ObserveSourceNames() {
  static const std::vector<std::string> kNames = {"gpu", "nvlink", "kernel_log", "bmc"};
  return kNames;
}

const std::vector<std::string>& CommonPlaceholders() {
  static const std::vector<std::string> kNames = {"host", "address", "tray", "bmc", "serial"};
  return kNames;
}

}  // namespace rackchaos::runner
