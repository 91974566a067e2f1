#include "runner/cli/init_cmd.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster/catalogue.h"
#include "core/exit_code.h"

namespace rackchaos::runner {
namespace {

namespace fs = std::filesystem;

std::string Two(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d", n);
  return buf;
}

std::string Tray(int rack, int tray) { return "r" + Two(rack) + ".tray" + Two(tray); }

std::string PlanText(const cluster::RackModel& m, int racks) {
  const int spares = m.compute_trays >= 4 ? 2 : 0;
  const int gpus = racks * (m.compute_trays - spares) * m.gpus_per_tray;
  const int t2 = std::min(2, m.compute_trays), t3 = std::min(3, m.compute_trays);
  std::ostringstream p;
  p << "# A burn-in plan for " << racks << " x " << m.name << ", written by `rackchaos init`.\n"
    << "#   rackchaos validate plan.yaml     # check it and print the resolved fault timeline\n"
    << "#   rackchaos run plan.yaml          # run it on the simulated cluster; report in rackchaos.db\n"
    << "# Every key: docs/plan-reference.md. Any name below: `rackchaos explain NAME`.\n"
    << "name: " << m.name << "-burn-in\n"
    << "description: one fault of each common kind on " << m.name << " running one training job\n"
    << "seed: 1                     # same plan + seed = same report; `run --seed N` overrides it\n"
    << "duration: 4h                # simulated time the run covers\n\n"
    << "cluster:\n"
    << "  model: " << m.name << "          # `rackchaos list models`; `rackchaos explain " << m.name << "`\n"
    << "  racks: " << racks << "\n"
    << "  spare_trays: " << spares << "              # per rack, the last N compute trays stay free as hot spares\n"
    << "  # inventory: site.yaml      # uncomment to run the faults on real hosts over SSH (fill in site.yaml "
       "first)\n\n"
    << "workload:\n  jobs:\n"
    << "    - name: train\n"
    << "      gpus: " << gpus << "                # every GPU that is not a spare\n"
    << "      step_time: 6s           # compute per step at full speed\n"
    << "      checkpoint: {interval: 30m, write_time: 40s}\n"
    << "      restart_overhead: 5m    # scheduling, loading and warm-up after a restart\n"
    << "      collective_timeout: 10m # NCCL watchdog\n\n"
    << "faults:                       # `rackchaos list injectors`; `rackchaos explain link_down`\n"
    << "  # A scale-out NIC link goes down for 20 minutes.\n"
    << "  - at: 20m\n    kind: link_down\n    target: " << Tray(1, 1) << ".nic0\n    for: 20m\n\n"
    << "  # A GPU's power is capped at half its TDP: it slows, and the synchronous job with it.\n"
    << "  - at: 1h20m\n    kind: gpu_throttle\n    target: " << Tray(1, t2) << ".gpu1\n"
    << "    params: {share: 50%}\n    for: 30m\n";
  if (spares > 0)
    p << "\n  # A compute tray is powered off (pulled); it comes back after an hour and boots.\n"
      << "  - at: 2h20m\n    kind: tray_pull\n    target: " << Tray(1, t3) << "\n    for: 1h\n";
  p << "\nhealer:\n  policy: default             # `rackchaos list policies`; or a path to your own policy YAML\n\n"
    << "expect:                       # gates: exit 1 when one fails; `rackchaos list metrics`\n";
  if (spares == 0)  // one tray is more than the circuit breaker's share: the healer rightly holds back
    p << "  # One tray per rack: isolating it exceeds the default circuit breaker (20% of the GPUs per hour),\n"
      << "  # so the healer alerts instead of isolating and isolation or recall gates would fail here.\n";
  else
    p << "  - ttd.max < 10m             # every fault detected within 10 minutes\n";
  p << "  - ttr.max < 1h              # and recovered from within an hour\n";
  if (spares > 0) p << "  - healer.recall == 1        # everything broken was isolated\n";
  return p.str();
}

std::string SiteText(const cluster::RackModel& m, int racks) {
  std::ostringstream s;
  s << "# Site inventory for " << racks << " x " << m.name << ", written by `rackchaos init`.\n"
    << "# Every key: docs/inventory-reference.md. Addresses (192.0.2.0/24 is a documentation range), interface\n"
    << "# names and BMC addresses below are placeholders: replace them with your site's before a real run.\n"
    << "site: my-site\nmodel: " << m.name << "\nracks: " << racks << "\n\n"
    << "ssh: {connect_timeout: 10s, command_timeout: 60s, max_concurrent: 256}\n"
    << "expiry_grace: 30s             # a host-side timer reverts a fault this long after its planned end\n\n"
    << "defaults:                     # every host inherits these; keys or ssh-agent only, no passwords\n"
    << "  user: root                  # nvidia-smi -pl and ip link need root\n"
    << "  identity_file: ~/.ssh/rackchaos_ed25519\n"
    << "  known_hosts: ~/.ssh/known_hosts   # checked strictly; first contact: run --accept-new-host-keys\n\n"
    << "hosts:\n";
  int n = 10;
  for (int r = 1; r <= racks; ++r)
    for (int t = 1; t <= m.compute_trays; ++t)
      s << "  - {name: r" << Two(r) << "-t" << Two(t) << ", address: 192.0.2." << (n++ % 250) + 1 << "}\n";
  s << "  - {name: mgmt01, address: 192.0.2.254, vars: {netrc: /etc/rackchaos/bmc.netrc}}  # runs Redfish commands\n\n"
    << "# Model tray -> host. gpus[i]: the nvidia-smi index of gpu<i>; nics[i]: the netdev of nic<i> (never the\n"
    << "# interface that carries SSH). Only trays listed here can be targeted in real mode.\n"
    << "trays:\n";
  for (int r = 1; r <= racks; ++r)
    for (int t = 1; t <= m.compute_trays; ++t) {
      s << "  " << Tray(r, t) << ": {host: r" << Two(r) << "-t" << Two(t) << ", bmc: 192.0.2.1, gpus: [";
      for (int g = 0; g < m.gpus_per_tray; ++g) s << (g ? ", " : "") << g;
      s << "], nics: [";
      for (int i = 0; i < m.nics_per_tray; ++i) s << (i ? ", " : "") << "enp" << i + 3 << "s0np0";
      s << "]}\n";
    }
  s << "\n# Command templates per fault action (`rackchaos explain KIND` says what each must do). {values} are\n"
    << "# quoted by rackchaos as one shell word each. On/off actions: verify exits 0 while the fault is in\n"
    << "# effect, 1 when not. Value actions: baseline prints the current value, revert restores {baseline}.\n"
    << "injectors:\n"
    << "  link_down:\n"
    << "    apply: ip link set dev {iface} down\n"
    << "    verify: >-\n"
    << "      out=$(ip -o link show dev {iface}) || exit 2;\n"
    << "      case \"$out\" in *'<UP'*|*',UP,'*|*',UP>'*) exit 1;; *) exit 0;; esac\n"
    << "    revert: ip link set dev {iface} up\n"
    << "  gpu_throttle:\n"
    << "    baseline: nvidia-smi -i {gpu} --query-gpu=power.limit --format=csv,noheader,nounits\n"
    << "    apply: nvidia-smi -i {gpu} -pl {watts}\n"
    << "    revert: nvidia-smi -i {gpu} -pl {baseline}\n"
    << "  tray_pull:                  # Redfish power off / on through the tray's BMC, from the management host\n"
    << "    run_on: mgmt01\n"
    << "    apply: >-\n"
    << "      curl -sSfk --netrc-file {netrc} -H 'Content-Type: application/json' -X POST\n"
    << "      https://{bmc}/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset -d "
       "'{{\"ResetType\":\"ForceOff\"}}'\n"
    << "      && sleep 20\n"
    << "    verify: >-\n"
    << "      curl -sSfk --netrc-file {netrc} https://{bmc}/redfish/v1/Systems/System_0 | grep -q '\"PowerState\": "
       "*\"Off\"'\n"
    << "    revert: >-\n"
    << "      curl -sSfk --netrc-file {netrc} -H 'Content-Type: application/json' -X POST\n"
    << "      https://{bmc}/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset -d '{{\"ResetType\":\"On\"}}'\n"
    << "      && sleep 20\n";
  return s.str();
}

}  // namespace

Result<InitFiles> ScaffoldFiles(const std::string& model, int racks) {
  if (racks < 1 || racks > 1000)
    return Status::Invalid("init: --racks " + std::to_string(racks) + " is out of range; give 1 to 1000");
  auto m = cluster::LoadRackModel(model);
  if (!m.ok()) return m.status().WithContext("init --model");
  if (racks % m->domain_racks != 0)
    return Status::Invalid("init: --racks " + std::to_string(racks) + " splits an NVLink domain: a " + model +
                           " domain spans " + std::to_string(m->domain_racks) + " racks (e.g. --racks " +
                           std::to_string((racks / m->domain_racks + 1) * m->domain_racks) + ")");
  return InitFiles{PlanText(*m, racks), SiteText(*m, racks)};
}

int CmdInit(const std::string& model, int racks, const std::string& dir) {
  auto files = ScaffoldFiles(model, racks);
  if (!files.ok()) {
    std::fprintf(stderr, "rackchaos: %s\n", files.status().message().c_str());
    return ToInt(ExitCode::kBadInput);
  }
  const fs::path plan = fs::path(dir) / "plan.yaml", site = fs::path(dir) / "site.yaml";
  for (const fs::path& p : {plan, site})
    if (fs::exists(p)) {
      std::fprintf(stderr, "rackchaos: init: %s already exists; remove it or choose another --dir\n", p.c_str());
      return ToInt(ExitCode::kBadInput);
    }
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const auto& [path, text] : {std::pair{plan, files->plan}, std::pair{site, files->site}}) {
    std::ofstream out(path);
    out << text;
    if (ec || !out.flush()) {
      std::fprintf(stderr, "rackchaos: init: cannot write %s; check that %s is a writable directory\n", path.c_str(),
                   dir.c_str());
      return ToInt(ExitCode::kRuntimeError);
    }
  }
  std::printf(
      "wrote %s (a plan for %d x %s) and %s (its site inventory)\nnext:\n  rackchaos validate %s\n"
      "  rackchaos run %s\n",
      plan.c_str(), racks, model.c_str(), site.c_str(), plan.c_str(), plan.c_str());
  return 0;
}

}  // namespace rackchaos::runner
