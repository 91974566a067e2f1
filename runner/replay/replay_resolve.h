// Where an imported event points in the model: the host map (--gpu-map, the site inventory) and the
// model's own PCI bus ids, for the replay builder (runner/replay/replay.cpp).
//
// A line that names no host (plain dmesg, dmesg -T) is resolved when its address is unique: one
// mapped target with that PCI id or interface on any host, or a map of a single tray. Otherwise the
// reason says to give --host. Names in the map may use any zero padding (runner/site/padded_names.h).
// Not thread-safe (caches).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "cluster/topology.h"
#include "core/status.h"
#include "runner/incident/host_map.h"
#include "runner/incident/incident.h"

namespace rackchaos::runner {

class ReplayNames {
 public:
  ReplayNames(const cluster::Topology& topo, const incident::HostMap& map);

  // The compute tray a host (Slurm node) is mapped to ("*" maps any host).
  std::optional<ComponentId> Tray(const std::string& host) const;
  // The compute tray of a model target name (kNoComponent when it has none), cached.
  ComponentId TrayOfTarget(const std::string& target);

  // The GPU of an Xid, the NIC of a link change, the component of a generic timeline row; a not-found
  // status that says what to add to the map (or that --host is missing) otherwise.
  Result<std::string> Gpu(const incident::IncidentEvent& e) const;
  Result<std::string> Nic(const incident::IncidentEvent& e);
  Result<std::string> Component(const incident::IncidentEvent& e) const;

 private:
  std::optional<std::string> Mapped(const std::string& host, const std::string& address) const;
  // The one target mapped for `address` on any host; a status naming the hosts when there are several.
  Result<std::optional<std::string>> Unique(const std::string& address) const;
  std::optional<ComponentId> OnlyTray() const;

  const cluster::Topology& topo_;
  incident::HostMap map_;
  std::map<std::string, ComponentId> tray_of_target_;
  std::map<std::string, std::string> nic_by_pci_;  // "HOST PCI" -> NIC target seen with its interface
};

// Why a host-less line was not replayed, and what to do about it.
extern const char* const kNoHostHint;

}  // namespace rackchaos::runner
