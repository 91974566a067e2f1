#include "runner/site/observe/host_map.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "core/strings.h"

namespace rackchaos::observe {

const GpuAddress* HostMap::FindGpu(int index, std::string_view pci) const {
  if (!pci.empty()) {
    for (const GpuAddress& g : gpus)
      if (g.pci == pci) return &g;
    // Only a GPU whose address is unknown here may still be matched by index: one with a known,
    // different address is another GPU, whatever its index says.
    for (const GpuAddress& g : gpus)
      if (g.pci.empty() && index >= 0 && g.index == index) return &g;
    return nullptr;
  }
  if (index < 0) return nullptr;
  for (const GpuAddress& g : gpus)
    if (g.index == index) return &g;
  return nullptr;
}

const GpuAddress* HostMap::FindUuid(std::string_view uuid) const {
  if (uuid.empty()) return nullptr;
  for (const GpuAddress& g : gpus)
    if (g.uuid == uuid) return &g;
  return nullptr;
}

const NicAddress* HostMap::FindNic(std::string_view device) const {
  for (const NicAddress& n : nics)
    if (n.device == device) return &n;
  return nullptr;
}

bool HostMap::Answers(std::string_view name) const {
  if (name.empty()) return false;
  if (name == host) return true;
  for (const std::string& a : aliases) {
    if (name == a) return true;
    if (size_t colon = a.rfind(':'); colon != std::string::npos && a.find(':') == colon && name == a.substr(0, colon))
      return true;
  }
  return false;
}

std::string HostMap::Describe(int index, std::string_view pci) {
  std::string s = "GPU " + (index >= 0 ? std::to_string(index) : std::string("?"));
  if (!pci.empty()) s += " (" + std::string(pci) + ")";
  return s;
}

namespace {

bool AllHex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::string NormalizePci(std::string_view text) {
  if (text.substr(0, 4) == "PCI:" || text.substr(0, 4) == "pci:") text.remove_prefix(4);
  // domain:bus:device[.function]
  size_t c1 = text.find(':');
  if (c1 == std::string_view::npos) return "";
  size_t c2 = text.find(':', c1 + 1);
  if (c2 == std::string_view::npos) return "";
  std::string_view domain = text.substr(0, c1), bus = text.substr(c1 + 1, c2 - c1 - 1);
  std::string_view rest = text.substr(c2 + 1);
  std::string_view device = rest.substr(0, rest.find('.'));
  if (rest.size() > device.size()) {
    std::string_view function = rest.substr(device.size() + 1);
    if (function.size() != 1 || !AllHex(function)) return "";
  }
  if (!AllHex(domain) || domain.size() > 8 || !AllHex(bus) || bus.size() != 2 || !AllHex(device) || device.size() != 2)
    return "";
  unsigned long d = std::strtoul(std::string(domain).c_str(), nullptr, 16);
  char buf[32];
  if (d <= 0xffff)
    std::snprintf(buf, sizeof buf, "%04lx", d);
  else
    std::snprintf(buf, sizeof buf, "%08lx", d);
  std::string out = buf;
  out += ':';
  out += ToLower(bus);
  out += ':';
  out += ToLower(device);
  return out;
}

}  // namespace rackchaos::observe
