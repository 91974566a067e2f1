#include "runner/site/observe/nvsmi_query.h"

#include <array>
#include <set>
#include <vector>

#include "runner/site/observe/gpu_reading.h"
#include "runner/site/observe/text.h"

namespace rackchaos::observe {

namespace {

enum Column { kIndex, kBusId, kTemperature, kPowerDraw, kPowerLimit, kSmClock, kSmMax, kReasons, kOther };

Column ColumnOf(std::string_view name) {
  name = Trim(name.substr(0, name.find(" [")));  // "power.draw [W]" -> "power.draw"
  if (name == "index") return kIndex;
  if (name == "pci.bus_id" || name == "gpu_bus_id") return kBusId;
  if (name == "temperature.gpu") return kTemperature;
  if (name == "power.draw") return kPowerDraw;
  if (name == "power.limit") return kPowerLimit;
  if (name == "clocks.sm" || name == "clocks.current.sm") return kSmClock;
  if (name == "clocks.max.sm" || name == "clocks.max.sm_clock") return kSmMax;
  if (name == "clocks_event_reasons.active" || name == "clocks_throttle_reasons.active") return kReasons;
  return kOther;
}

std::vector<std::string_view> Cells(std::string_view line) {
  std::vector<std::string_view> cells;
  while (true) {
    size_t comma = line.find(',');
    cells.push_back(Trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return cells;
}

// A header names known fields; a data row never does (its first cell is a value).
bool IsHeader(const std::vector<std::string_view>& cells) {
  for (std::string_view c : cells)
    if (ColumnOf(c) != kOther) return true;
  return false;
}

// "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "612.50 W", "1980", "0x...04".
Value ReadCell(std::string_view cell, bool bitmask) {
  if (cell == "[N/A]" || cell == "N/A" || cell.empty()) return Value::Absent(Problem::kMissing, std::string(cell));
  if (cell == "[Not Supported]") return Value::Absent(Problem::kNotSupported, std::string(cell));
  if (cell.front() == '[') return Value::Absent(Problem::kToolError, std::string(cell));
  if (bitmask) {
    uint64_t bits = 0;
    if (ParseBits(cell, bits)) return Value::Bits(bits);
    return Value::Absent(Problem::kUnreadable, "unreadable \"" + std::string(cell) + "\"");
  }
  std::string_view number = cell;
  if (size_t space = number.find(' '); space != std::string_view::npos) {
    std::string_view unit = number.substr(space + 1);
    if (unit == "W" || unit == "MHz" || unit == "C" || unit == "%") number = number.substr(0, space);
  }
  double v = 0;
  if (ParseNumber(number, v)) return Value::Number(v);
  return Value::Absent(Problem::kUnreadable, "unreadable \"" + std::string(cell) + "\"");
}

constexpr FieldNames kNvsmiNames{"temperature.gpu", "power.draw", "clocks.sm", "clocks.max.sm", "clocks_event_reasons.active"};

}  // namespace

std::optional<NvsmiNotice> MatchNvsmiNotice(std::string_view line) {
  line = Trim(line);
  if (line.starts_with("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver") ||
      line.starts_with("Failed to initialize NVML")) {
    return NvsmiNotice{DeviceState::kDriverDown, false, "", std::string(line)};
  }
  constexpr std::string_view kHandle = "Unable to determine the device handle for ";
  if (!line.starts_with(kHandle)) return std::nullopt;
  std::string_view rest = line.substr(kHandle.size());
  // "GPU 0000:02:00.0: GPU is lost..." or "GPU0000:3B:00.0: Unknown Error" (both forms are printed).
  if (rest.starts_with("GPU") || rest.starts_with("gpu")) rest.remove_prefix(3);
  rest = Trim(rest);
  size_t sep = rest.find(": ");
  NvsmiNotice n;
  n.state = DeviceState::kGpuLost;
  n.pci = NormalizePci(rest.substr(0, sep));
  n.reason = sep == std::string_view::npos ? "" : std::string(Trim(rest.substr(sep + 2)));
  n.lost = Contains(n.reason, "GPU is lost");
  return n;
}

Observed ParseNvidiaSmiQuery(std::string_view output, const HostMap& host, std::string_view fields) {
  Observed out;
  const Source src = Source::kNvidiaSmi;
  std::vector<Column> columns;
  for (std::string_view f : Cells(fields)) columns.push_back(ColumnOf(f));
  std::set<ComponentId> seen;
  bool driver_down = false;
  int line_no = 0;
  for (std::string_view line : SplitLines(output)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    if (auto notice = MatchNvsmiNotice(line)) {
      if (notice->state == DeviceState::kDriverDown) {
        driver_down = true;
        out.devices.push_back({host.host, src, host.node, DeviceState::kDriverDown, notice->reason});
        continue;
      }
      const GpuAddress* gpu = host.FindGpu(-1, notice->pci);
      if (!gpu) {
        out.Error(host.host, src, Problem::kUnmapped, kNoComponent, "line " + std::to_string(line_no) + ": " +
                                                                        std::string(Trim(line)));
        continue;
      }
      seen.insert(gpu->gpu);
      if (notice->lost)
        out.devices.push_back({host.host, src, gpu->gpu, DeviceState::kGpuLost, std::string(Trim(line))});
      else
        out.Error(host.host, src, Problem::kToolError, gpu->gpu, HostMap::Describe(gpu->index, notice->pci) + ": " +
                                                                     notice->reason);
      continue;
    }
    if (Trim(line) == "No devices were found") continue;  // every GPU is then reported missing below
    std::vector<std::string_view> cells = Cells(line);
    if (IsHeader(cells)) {
      columns.clear();
      for (std::string_view c : cells) columns.push_back(ColumnOf(c));
      continue;
    }
    if (cells.size() != columns.size()) {
      out.Error(host.host, src, Problem::kUnreadable, kNoComponent,
                "line " + std::to_string(line_no) + " has " + std::to_string(cells.size()) + " cells, expected " +
                    std::to_string(columns.size()) + ": \"" + std::string(Trim(line)).substr(0, 200) + "\"");
      continue;
    }
    GpuReading r;
    std::array<Value*, kOther> slot{nullptr, nullptr, &r.temperature_c, &r.power_w, &r.power_limit_w,
                                    &r.sm_mhz,  &r.sm_max_mhz, &r.reasons};
    for (Value* v : slot)
      if (v) *v = Value::Absent(Problem::kUnreadable, "column not in the output");
    bool has_index = false, has_bus = false;
    for (size_t i = 0; i < cells.size(); ++i) {
      Column c = columns[i];
      if (c == kIndex) {
        uint64_t idx = 0;
        if (ParseCount(cells[i], idx) && idx < 1u << 16) r.index = static_cast<int>(idx), has_index = true;
      } else if (c == kBusId) {
        r.pci = NormalizePci(cells[i]);
        has_bus = !r.pci.empty();
      } else if (c != kOther) {
        *slot[c] = ReadCell(cells[i], c == kReasons);
      }
    }
    if (!has_index && !has_bus) {
      out.Error(host.host, src, Problem::kUnreadable, kNoComponent,
                "line " + std::to_string(line_no) + " has no readable index or pci.bus_id: \"" +
                    std::string(Trim(line)).substr(0, 200) + "\"");
      continue;
    }
    const GpuAddress* gpu = host.FindGpu(r.index, r.pci);
    if (!gpu) {
      out.Error(host.host, src, Problem::kUnmapped, kNoComponent,
                HostMap::Describe(r.index, r.pci) + " is not a GPU of this host in the inventory");
      continue;
    }
    if (!seen.insert(gpu->gpu).second) {
      out.Error(host.host, src, Problem::kUnreadable, gpu->gpu,
                HostMap::Describe(r.index, r.pci) + " has a second row (line " + std::to_string(line_no) + ")");
      continue;
    }
    ToObservations(r, *gpu, host.host, src, kNvsmiNames, out);
  }
  for (const GpuAddress& g : host.gpus) {
    if (seen.count(g.gpu)) continue;
    out.Error(host.host, src, driver_down ? Problem::kUnavailable : Problem::kMissing, g.gpu,
              HostMap::Describe(g.index, g.pci) +
                  (driver_down ? ": no reading, the driver does not answer" : ": not in the output"));
  }
  return out;
}

}  // namespace rackchaos::observe
