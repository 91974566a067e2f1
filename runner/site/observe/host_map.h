// Which rackchaos components stand behind one real host's devices, as the parsers need it: a tray
// host's GPUs by the index and PCI address the tools print, its NICs by interface name, and how many
// NVLink ports each GPU has. The engine builds one HostMap per tray host from the inventory and the
// topology; the parsers only read it.
//
// GPU lookup prefers the PCI address: nvidia-smi renumbers its indexes when a GPU falls off the bus,
// so index 3 may name another GPU after a failure, while the bus address does not move. A GPU whose
// address is unknown here is found by index.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"

namespace rackchaos::observe {

struct GpuAddress {
  ComponentId gpu = kNoComponent;
  int index = -1;        // the index nvidia-smi and DCGM print; -1 = unknown
  std::string pci;       // NormalizePci form, "" = unknown
  std::string uuid;      // "GPU-...", "" = unknown (Prometheus' UUID label)
  double max_sm_mhz = 0;  // the site's nominal maximum SM clock, used when a source does not print one
};

struct NicAddress {
  ComponentId nic = kNoComponent;
  std::string device;  // interface name as node_exporter labels it, e.g. "ibp26s0"
};

struct HostMap {
  std::string host;                  // inventory host name; Prometheus' Hostname label must equal it
  std::vector<std::string> aliases;  // other names the host goes by (a scrape target's "10.0.0.7:9400")
  ComponentId node = kNoComponent;   // the compute tray
  std::vector<GpuAddress> gpus;
  std::vector<NicAddress> nics;
  int nvlink_ports = 0;  // NVLink ports per GPU (18 on GB200); 0 = the model has none

  // The GPU a tool's row names: by PCI address when the row has one (empty pci = none), by index
  // otherwise. nullptr when no GPU of this host matches.
  const GpuAddress* FindGpu(int index, std::string_view pci) const;
  const GpuAddress* FindUuid(std::string_view uuid) const;
  const NicAddress* FindNic(std::string_view device) const;
  // True when `name` is the host or one of its aliases (a "host:port" alias also matches "host").
  bool Answers(std::string_view name) const;
  // "GPU 3 (0000:3b:00)" for messages; "GPU ?" parts left out when unknown.
  static std::string Describe(int index, std::string_view pci);
};

// A PCI address as the tools print it -> "dddd:bb:dd", lower case, the function dropped: nvidia-smi's
// "00000000:3B:00.0", dcgm-exporter's "00000008:01:00.0", the driver's "PCI:0000:3b:00" or "0000:3b:00".
// An 8-digit domain that fits in 16 bits is shortened. "" when `text` is not a PCI address.
std::string NormalizePci(std::string_view text);

}  // namespace rackchaos::observe
