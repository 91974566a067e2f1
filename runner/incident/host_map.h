// Where the names in incident logs (hosts, Slurm nodes, PCI bus ids, interface names) point in the
// model, and the --gpu-map text format that says so. Plain values; pure parsing.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/status.h"

namespace rackchaos::incident {

// Where the names in the logs point in the model.
struct HostMap {
  std::map<std::string, std::string> trays;    // host (Slurm node) -> compute tray, "r01.tray03"; "*" = any host
  std::map<std::string, std::string> targets;  // "HOST ADDRESS" (host may be "*") -> target, "r01.tray03.gpu2"
};

// The --gpu-map format, one mapping a line ('#' starts a comment):
//   HOST TRAY                 node07 r01.tray03
//   HOST ADDRESS TARGET       node07 0000:3b:00 r01.tray03.gpu2    (PCI bus id or interface name; HOST may be *)
// Errors name FILE:LINE:COL. Targets are checked against the topology when they are used.
Result<HostMap> ParseGpuMap(std::string_view text, const std::string& path);
Result<HostMap> LoadGpuMap(const std::string& path);
// A PCI bus id ("0000:3B:00", "0000:1a:00.0": hex digits, ':' and '.') is lower-cased, as the
// importers print it; interface names are kept as they are.
bool IsPciAddress(const std::string& s);
std::string MapAddress(std::string address);
// `from`'s entries replace `into`'s.
void MergeHostMap(HostMap& into, const HostMap& from);

}  // namespace rackchaos::incident
