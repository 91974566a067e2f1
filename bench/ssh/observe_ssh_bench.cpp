// Cost of one observation period over SSH (issue 21): the `observe.gpu` source (nvidia-smi's query on
// every tray host, parsed by rackchaos) on N OpenSSH endpoints on loopback (16 per sshd, the tests' sshd
// fixture), each host's PATH starting with a stub nvidia-smi that prints four GPUs' rows. Sessions are
// opened first (a run keeps them open); then `periods` periods are timed, each from the asks to the
// last host's parsed answer: wall time and this process's CPU time (user + system; the sshd processes
// and the stub are not the runner's). Needs root.
//   ./build/bench/ssh/observe_ssh_bench [N=256] [periods=10]
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cluster/catalogue.h"
#include "runner/site/host_maps.h"
#include "runner/site/inventory.h"
#include "runner/site/ssh_sources.h"
#include "runner/site/wall_clock.h"
#include "runner/ssh/command_template.h"
#include "tests/ssh/sshd_fixture.h"

namespace {

using rackchaos::ssh::testing::SshdFixture;

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rackchaos;
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  const int periods = argc > 2 ? std::atoi(argv[2]) : 10;
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  auto sshd = SshdFixture::Start(n);
  if (!sshd.ok()) {
    std::fprintf(stderr, "fixture: %s\n", sshd.status().ToString().c_str());
    return 1;
  }
  // The stub nvidia-smi, in a directory the test user can read.
  const std::string bin = (*sshd)->dir() + "/obsbin";
  ::mkdir(bin.c_str(), 0755);
  ::chmod((*sshd)->dir().c_str(), 0755);
  std::ofstream(bin + "/nvidia-smi") << "#!/bin/sh\nprintf '%s\\n' "
                                        "'0, 00000000:3B:00.0, 45, 612.50, 1200.00, 1980, 1980, 0x0000000000000000' "
                                        "'1, 00000000:3C:00.0, 46, 598.10, 1200.00, 1980, 1980, 0x0000000000000000' "
                                        "'2, 00000000:3D:00.0, 47, 601.33, 1200.00, 1980, 1980, 0x0000000000000000' "
                                        "'3, 00000000:3E:00.0, 45, 588.02, 1200.00, 1980, 1980, 0x0000000000000000'\n";
  ::chmod((bin + "/nvidia-smi").c_str(), 0755);
  // An inventory of N trays of enough GB200 racks, one endpoint each.
  auto model = cluster::LoadRackModel("gb200-nvl72");
  const int racks = (n + model->compute_trays - 1) / model->compute_trays;
  auto topo = cluster::Topology::Build(*model, racks, 0);
  if (!topo.ok()) return 1;
  const auto hosts = (*sshd)->Hosts((*sshd)->known_hosts());
  std::ostringstream y;
  y << "site: bench\nmodel: gb200-nvl72\nracks: " << racks << "\nssh: {max_concurrent: " << std::max(256, n)
    << "}\ndefaults: {user: " << SshdFixture::kUser << ", identity_file: " << (*sshd)->user_key()
    << ", known_hosts: " << (*sshd)->known_hosts() << ", env: {PATH: \"" << bin << ":/usr/bin:/bin\"}}\nhosts:\n";
  for (const auto& h : hosts) y << "  - {name: " << h.name << ", address: " << h.address << ", port: " << h.port << "}\n";
  y << "trays:\n";
  int i = 0;
  for (ComponentId tray : topo->trays())
    if (i < n) y << "  " << topo->at(tray).name << ": " << hosts[static_cast<size_t>(i++)].name << "\n";
  y << "observe: {gpu: {timeout: 30s}}\n";
  auto inv = runner::ParseInventory(y.str(), "bench.yaml");
  if (!inv.ok()) {
    std::fprintf(stderr, "%s\n", inv.status().ToString().c_str());
    return 1;
  }
  boost::asio::io_context io;
  ssh::SshPool pool(io, ssh::PoolOptions{.max_concurrent = std::max(256, n)});
  std::vector<ssh::HostSpec> specs;
  for (const auto& [name, h] : inv->hosts) specs.push_back(h.spec);
  if (Status s = pool.ConnectAll(specs); !s.ok()) std::fprintf(stderr, "connect: %s\n", s.ToString().c_str());
  runner::WallClock clock(io);
  const auto maps = runner::BuildHostMaps(*inv, *topo);
  auto render = [&](const std::string& tmpl, const std::string& host, const std::map<std::string, std::string>& values)
      -> Result<std::string> {
    RC_ASSIGN_OR_RETURN(std::string cmd, ssh::RenderTemplate(tmpl, values));
    return "export PATH=" + ssh::ShellQuote(inv->hosts.at(host).env.at("PATH")) + "; " + cmd;
  };
  auto sources = runner::MakeSshSources({*inv, *topo, pool, clock, render, maps});
  runner::ObservationSource& gpu = *sources.at(0);
  std::vector<double> wall, cpu;
  for (int p = 0; p <= periods; ++p) {  // period 0 warms up (first channel on each session)
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = CpuSeconds();
    gpu.Ask(clock.Now());
    size_t answers = 0, samples = 0, errors = 0;
    ssh::testing::RunIoUntil(io, [&] {
      for (const auto& o : gpu.Take()) {
        ++answers;
        samples += o.observations.size();
        errors += o.errors.size();
      }
      return answers >= maps.size();
    }, 60);
    const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), c = CpuSeconds() - c0;
    std::printf("period %d: %zu hosts answered, %zu samples, %zu errors: wall %.3f s, runner CPU %.3f s\n", p, answers,
                samples, errors, w, c);
    if (p > 0) {
      wall.push_back(w);
      cpu.push_back(c);
    }
  }
  std::printf("%d hosts, %d periods: wall p50 %.3f s p90 %.3f s; runner CPU p50 %.3f s p90 %.3f s per period\n", n,
              periods, Pct(wall, 0.5), Pct(wall, 0.9), Pct(cpu, 0.5), Pct(cpu, 0.9));
  gpu.Stop();
  return 0;
}
