// Shared by the observe fuzz targets: a host map for the parsers, and the invariant every answer
// keeps whatever the input: each observation error names its host, source and what was wrong.
#pragma once

#include <cstdlib>
#include <string>

#include "runner/site/observe/host_map.h"
#include "runner/site/observe/observed.h"

namespace rackchaos::observe::fuzz {

inline HostMap Tray() {
  HostMap h;
  h.host = "tray07";
  h.aliases = {"127.0.0.1:19400"};
  h.node = 7;
  h.nvlink_ports = 18;
  const char* pcis[] = {"0000:3b:00", "0000:5e:00", "0008:01:00", ""};
  for (int i = 0; i < 4; ++i) {
    GpuAddress a;
    a.gpu = static_cast<ComponentId>(100 + i);
    a.index = i;
    a.pci = pcis[i];
    h.gpus.push_back(a);
  }
  h.nics.push_back({200, "ibp26s0"});
  return h;
}

inline void CheckErrors(const Observed& o) {
  for (const ObservationError& e : o.errors)
    if (e.host.empty() || e.what.empty() || e.ToString().empty()) std::abort();
}

}  // namespace rackchaos::observe::fuzz
