// rig-observe-check: rackchaos' observation parsers (runner/site/observe) on what the rig's real parts
// answer, for tests/rig/observe_test.sh. Trays are tray1..trayN with the rig's map: node k, GPU i = 10k + i.
//   rig-observe-check nvsmi HOST               stdin: `nvidia-smi --query-gpu=<kNvsmiQueryFields> --format=csv,noheader,nounits`
//   rig-observe-check journal HOST 'CMD' 'ACTION'   runs CMD (an ssh command: the arguments are quoted for
//                                              the remote shell) + the journal reader's arguments (the first
//                                              poll), then ACTION (sh -c), then CMD + the next poll's arguments
//   rig-observe-check prom TRAYS NOW           stdin: a Prometheus /api/v1/query answer for TRAYS trays, asked at NOW
// Prints one line per observation: "sample HOST.gpuI METRIC VALUE", "device HOST.gpuI STATE",
// "xid HOST.gpuI CODE" (a Prometheus gauge), "kernel HOST LINE", and "error TEXT" per observation error.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "runner/site/observe/journal_reader.h"
#include "runner/site/observe/nvsmi_query.h"
#include "runner/site/observe/prometheus_query.h"
#include "tests/rig/rig_gpu_model.h"

namespace ob = rackchaos::observe;

namespace {

ob::HostMap Map(const std::string& host) {
  const auto& m = rackchaos::rig::RigModel();
  ob::HostMap h;
  h.host = host;
  const int k = std::atoi(host.c_str() + 4);
  h.node = static_cast<rackchaos::ComponentId>(k);
  h.nvlink_ports = m.nvlink_links_per_gpu;
  for (int i = 0; i < m.gpus_per_tray; ++i) {
    ob::GpuAddress a;
    a.gpu = static_cast<rackchaos::ComponentId>(10 * k + i);
    a.index = i;
    a.pci = m.gpu_pci_bus_ids[static_cast<size_t>(i)];
    a.max_sm_mhz = rackchaos::rig::kMaxSmMhz;
    h.gpus.push_back(a);
  }
  return h;
}

std::string Name(rackchaos::ComponentId c) {
  if (c < 10) return "tray" + std::to_string(c);
  return "tray" + std::to_string(c / 10) + ".gpu" + std::to_string(c % 10);
}

void Print(const ob::Observed& o) {
  for (const auto& b : o.observations) {
    if (const auto* s = std::get_if<rackchaos::cluster::TelemetrySample>(&b))
      std::printf("sample %s %s %.4f\n", Name(s->component).c_str(), rackchaos::cluster::MetricName(s->metric), s->value);
    else if (const auto* k = std::get_if<rackchaos::cluster::KernelLogLine>(&b))
      std::printf("kernel %s %s\n", Name(k->node).c_str(), k->line.c_str());
  }
  for (const auto& d : o.devices) std::printf("device %s %s\n", Name(d.component).c_str(), ob::DeviceStateName(d.state));
  for (const auto& x : o.xid_gauges) std::printf("xid %s %d\n", Name(x.gpu).c_str(), x.code);
  for (const auto& e : o.errors) std::printf("error %s\n", e.ToString().c_str());
}

std::string Stdin() { return std::string(std::istreambuf_iterator<char>(std::cin), {}); }

std::string Run(const std::string& cmd, int& status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t k; (k = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, k);
  status = pclose(p);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "nvsmi" && argc == 3) {
    Print(ob::ParseNvidiaSmiQuery(Stdin(), Map(argv[2])));
    return 0;
  }
  if (cmd == "journal" && argc == 5) {
    const ob::HostMap h = Map(argv[2]);
    ob::JournalReader reader(h.host, h.node);
    for (int poll = 0; poll < 2; ++poll) {
      std::string line = argv[3];
      // Quoted for the shell popen starts and again for the remote one ssh hands the words to (a cursor has ';').
      for (const std::string& a : reader.NextArgs()) line += " \"'" + a + "'\"";
      int status = 0;
      const std::string out = Run(line, status);
      Print(status == 0 ? reader.OnOutput(out) : reader.OnFailure(status, out));
      if (poll == 0 && std::system(argv[4]) != 0) return 1;
    }
    return 0;
  }
  if (cmd == "prom" && argc == 4) {
    std::vector<ob::HostMap> hosts;
    for (int k = 1; k <= std::atoi(argv[2]); ++k) hosts.push_back(Map("tray" + std::to_string(k)));
    ob::PromQuery q;
    q.server = "rig";
    q.now_s = std::atof(argv[3]);
    Print(ob::ParsePrometheusQuery(Stdin(), hosts, q));
    return 0;
  }
  std::fprintf(stderr, "usage: rig-observe-check nvsmi HOST | journal HOST CMD ACTION | prom TRAYS NOW\n");
  return 2;
}
