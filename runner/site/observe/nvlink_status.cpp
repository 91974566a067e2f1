#include "runner/site/observe/nvlink_status.h"

#include <map>
#include <set>

#include "runner/site/observe/nvsmi_query.h"
#include "runner/site/observe/text.h"

namespace rackchaos::observe {

namespace {

// "GPU 3: Tesla V100-SXM2-32GB (UUID: ...)" -> 3.
bool GpuHeader(std::string_view line, int& index) {
  if (!line.starts_with("GPU ")) return false;
  std::string_view rest = line.substr(4);
  size_t colon = rest.find(':');
  uint64_t idx = 0;
  if (colon == std::string_view::npos || !ParseCount(rest.substr(0, colon), idx) || idx > 0xffff) return false;
  index = static_cast<int>(idx);
  return true;
}

// "Link 12: <rest>" -> 12, rest.
bool LinkLine(std::string_view line, int& port, std::string_view& rest) {
  if (!line.starts_with("Link ")) return false;
  std::string_view s = line.substr(5);
  size_t colon = s.find(':');
  uint64_t p = 0;
  if (colon == std::string_view::npos || !ParseCount(s.substr(0, colon), p) || p > 0xffff) return false;
  port = static_cast<int>(p);
  rest = Trim(s.substr(colon + 1));
  return true;
}

struct Block {
  const GpuAddress* gpu = nullptr;
  int index = -1;
  std::set<int> ports;
  bool whole_gpu_line = false;  // a line that speaks for all its ports
};

}  // namespace

Observed ParseNvlinkStatus(std::string_view output, const HostMap& host) {
  Observed out;
  const Source src = Source::kNvlink;
  std::map<int, Block> blocks;
  Block* cur = nullptr;
  int line_no = 0;
  auto unreadable = [&](std::string_view why, std::string_view line) {
    out.Error(host.host, src, Problem::kUnreadable, cur && cur->gpu ? cur->gpu->gpu : kNoComponent,
              "line " + std::to_string(line_no) + " " + std::string(why) + ": \"" + std::string(line).substr(0, 200) +
                  "\"");
  };
  for (std::string_view raw : SplitLines(output)) {
    ++line_no;
    std::string_view line = Trim(raw);
    if (line.empty()) continue;
    int index = -1, port = -1;
    std::string_view rest;
    if (GpuHeader(line, index)) {
      cur = &blocks[index];
      cur->index = index;
      cur->gpu = host.FindGpu(index, "");
      if (!cur->gpu)
        out.Error(host.host, src, Problem::kUnmapped, kNoComponent,
                  HostMap::Describe(index, "") + " is not a GPU of this host in the inventory");
      continue;
    }
    if (auto notice = MatchNvsmiNotice(line)) {
      const GpuAddress* gpu = notice->state == DeviceState::kGpuLost ? host.FindGpu(-1, notice->pci) : nullptr;
      if (notice->state == DeviceState::kDriverDown)
        out.devices.push_back({host.host, src, host.node, DeviceState::kDriverDown, notice->reason});
      else if (gpu && notice->lost)
        out.devices.push_back({host.host, src, gpu->gpu, DeviceState::kGpuLost, std::string(line)});
      else
        out.Error(host.host, src, gpu ? Problem::kToolError : Problem::kUnmapped, gpu ? gpu->gpu : kNoComponent,
                  std::string(line));
      cur = nullptr;
      continue;
    }
    if (!cur) {
      unreadable("is outside any GPU block", line);
      continue;
    }
    if (!cur->gpu) continue;  // reported once at its header
    const ComponentId gpu = cur->gpu->gpu;
    if (Contains(line, "all links are inActive")) {
      cur->whole_gpu_line = true;
      if (host.nvlink_ports <= 0) continue;  // a GPU without NVLink says the same
      for (int p = 0; p < host.nvlink_ports; ++p) out.Add(cluster::LinkStateChange{gpu, p, false});
      continue;
    }
    if (Contains(line, "does not have or support Nvlink")) {
      cur->whole_gpu_line = true;
      if (host.nvlink_ports > 0)
        out.Error(host.host, src, Problem::kToolError, gpu,
                  HostMap::Describe(cur->index, cur->gpu->pci) + ": " + std::string(line));
      continue;
    }
    if (Contains(line, "not supported for Devices in MIG mode")) {
      cur->whole_gpu_line = true;
      out.Error(host.host, src, Problem::kNotSupported, gpu,
                HostMap::Describe(cur->index, cur->gpu->pci) + ": " + std::string(line));
      continue;
    }
    if (!LinkLine(line, port, rest)) {
      unreadable("is not a link line", line);
      continue;
    }
    bool up = false;
    size_t space = rest.find(' ');
    double gbps = 0;
    if (rest == "<inactive>") {
      up = false;
    } else if (space != std::string_view::npos && rest.substr(space + 1) == "GB/s" &&
               ParseNumber(rest.substr(0, space), gbps)) {
      up = gbps > 0;
    } else {
      unreadable("has no state", line);
      continue;
    }
    if (!cur->ports.insert(port).second) {
      unreadable("repeats a port", line);
      continue;
    }
    out.Add(cluster::LinkStateChange{gpu, port, up});
  }
  for (const GpuAddress& g : host.gpus) {
    auto it = blocks.find(g.index);
    if (it == blocks.end() || !it->second.gpu) {
      bool lost = false;
      for (const DeviceReport& d : out.devices) lost |= d.component == g.gpu || d.state == DeviceState::kDriverDown;
      if (!lost)
        out.Error(host.host, src, Problem::kMissing, g.gpu, HostMap::Describe(g.index, g.pci) + ": not in the output");
      continue;
    }
    const Block& b = it->second;
    if (b.whole_gpu_line || host.nvlink_ports <= 0) continue;
    std::string missing;
    for (int p = 0; p < host.nvlink_ports; ++p)
      if (!b.ports.count(p)) missing += (missing.empty() ? "" : ",") + std::to_string(p);
    if (!missing.empty())
      out.Error(host.host, src, Problem::kMissing, g.gpu,
                HostMap::Describe(g.index, g.pci) + ": no state for port(s) " + missing);
  }
  return out;
}

NvlinkCounters ParseNvlinkErrors(std::string_view output, const HostMap& host) {
  NvlinkCounters out;
  Observed errs;
  const Source src = Source::kNvlink;
  const GpuAddress* gpu = nullptr;
  bool in_block = false;
  std::map<std::pair<ComponentId, int>, size_t> at;
  int line_no = 0;
  for (std::string_view raw : SplitLines(output)) {
    ++line_no;
    std::string_view line = Trim(raw);
    if (line.empty()) continue;
    int index = -1, port = -1;
    std::string_view rest;
    if (GpuHeader(line, index)) {
      in_block = true;
      gpu = host.FindGpu(index, "");
      if (!gpu)
        errs.Error(host.host, src, Problem::kUnmapped, kNoComponent,
                   HostMap::Describe(index, "") + " is not a GPU of this host in the inventory");
      continue;
    }
    size_t colon = rest.npos;
    uint64_t count = 0;
    std::string_view name;
    bool ok = in_block && LinkLine(line, port, rest) && (colon = rest.rfind(':')) != rest.npos &&
              ParseCount(Trim(rest.substr(colon + 1)), count);
    if (ok) name = Trim(rest.substr(0, colon));
    if (!ok || (name != "Replay Errors" && name != "Recovery Errors" && name != "CRC Errors")) {
      errs.Error(host.host, src, Problem::kUnreadable, gpu ? gpu->gpu : kNoComponent,
                 "line " + std::to_string(line_no) + " is not an error counter: \"" + std::string(line).substr(0, 200) +
                     "\"");
      continue;
    }
    if (!gpu) continue;
    auto [it, added] = at.try_emplace({gpu->gpu, port}, out.ports.size());
    if (added) out.ports.push_back({gpu->gpu, port});
    NvlinkPortCounters& c = out.ports[it->second];
    int64_t v = static_cast<int64_t>(count > INT64_MAX ? INT64_MAX : count);
    (name == "Replay Errors" ? c.replay : name == "Recovery Errors" ? c.recovery : c.crc) = v;
  }
  out.errors = std::move(errs.errors);
  return out;
}

}  // namespace rackchaos::observe
