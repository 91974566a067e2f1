#include "runner/site/observe/dcgmi_dmon.h"

#include <map>
#include <vector>

#include "runner/site/observe/gpu_reading.h"
#include "runner/site/observe/text.h"

namespace rackchaos::observe {

namespace {

enum DmonField { kDmonTemp, kDmonPower, kDmonLimit, kDmonSm, kDmonSmMax, kDmonReasons, kDmonXid, kDmonIgnored };

DmonField FieldOf(std::string_view short_name) {
  if (short_name == "TMPTR") return kDmonTemp;
  if (short_name == "POWER") return kDmonPower;
  if (short_name == "PMLMT" || short_name == "EPLMT") return kDmonLimit;
  if (short_name == "SMCLK") return kDmonSm;
  if (short_name == "SMMAX") return kDmonSmMax;
  if (short_name == "DVCCTR") return kDmonReasons;
  if (short_name == "XIDER") return kDmonXid;
  return kDmonIgnored;
}

struct ColumnAt {
  size_t start = 0;
  DmonField field = kDmonIgnored;
};

std::vector<ColumnAt> HeaderColumns(std::string_view header) {
  std::vector<ColumnAt> cols;
  size_t i = std::string_view("#Entity").size();
  while (i < header.size()) {
    while (i < header.size() && header[i] == ' ') ++i;
    if (i >= header.size()) break;
    size_t end = header.find(' ', i);
    if (end == std::string_view::npos) end = header.size();
    cols.push_back({i, FieldOf(header.substr(i, end - i))});
    i = end;
  }
  return cols;
}

Value ReadDmonCell(std::string_view cell, bool bitmask) {
  if (cell.empty()) return Value::Absent(Problem::kMissing, "blank (the host engine returned no value)");
  if (cell == "N/A") return Value::Absent(Problem::kMissing, "N/A");
  if (bitmask) {
    uint64_t bits = 0;
    if (ParseBits(cell, bits)) return Value::Bits(bits);
  } else if (double v = 0; ParseNumber(cell, v)) {
    return Value::Number(v);
  }
  return Value::Absent(Problem::kUnreadable, "unreadable \"" + std::string(cell) + "\"");
}

constexpr FieldNames kDmonNames{"TMPTR (150)", "POWER (155)", "SMCLK (100)", "SMMAX (113)", "DVCCTR (112)"};

}  // namespace

Observed ParseDcgmiDmon(std::string_view output, const HostMap& host) {
  Observed out;
  const Source src = Source::kDcgmi;
  std::vector<ColumnAt> cols;
  bool have_header = false, engine_down = false;
  std::map<int, GpuReading> rows;  // by GPU id; the last sample wins
  int line_no = 0;
  for (std::string_view line : SplitLines(output)) {
    ++line_no;
    std::string_view t = Trim(line);
    if (t.empty() || t.starts_with("ID ") || t == "ID") continue;
    if (line.starts_with("#Entity")) {
      cols = HeaderColumns(line);
      have_header = true;
      continue;
    }
    if (t.starts_with("Error")) {
      bool no_engine = Contains(t, "unable to establish a connection");
      engine_down |= no_engine;
      out.Error(host.host, src, no_engine ? Problem::kUnavailable : Problem::kToolError, host.node, std::string(t));
      continue;
    }
    if (Contains(t, "dmon was stopped")) continue;
    // "GPU 0 ..." rows; GPU-I, GPU-CI, Switch, CPU, link rows are other entities.
    if (!line.starts_with("GPU ") || !have_header) {
      if (line.starts_with("GPU-") || line.starts_with("Switch ") || line.starts_with("CPU") ||
          line.starts_with("vGPU ") || line.starts_with("SW ") || line.starts_with("Link "))
        continue;
      out.Error(host.host, src, Problem::kUnreadable, kNoComponent,
                "line " + std::to_string(line_no) + (have_header ? " is not a dmon row: \"" : " comes before any header: \"") +
                    std::string(t).substr(0, 200) + "\"");
      continue;
    }
    std::string_view after = line.substr(4);
    size_t space = after.find(' ');
    std::string_view id_text = after.substr(0, space);
    if (space != std::string_view::npos && Trim(after.substr(space)).starts_with("LINK")) continue;  // a link entity
    uint64_t id = 0;
    if (!ParseCount(id_text, id) || id > 0xffff) {
      out.Error(host.host, src, Problem::kUnreadable, kNoComponent,
                "line " + std::to_string(line_no) + " has no GPU id: \"" + std::string(t).substr(0, 200) + "\"");
      continue;
    }
    GpuReading r;
    r.index = static_cast<int>(id);
    const std::string absent = "field not in the dmon header";
    r.temperature_c = r.power_w = r.power_limit_w = r.sm_mhz = r.sm_max_mhz = r.reasons = r.xid =
        Value::Absent(Problem::kMissing, absent);
    for (size_t c = 0; c < cols.size(); ++c) {
      size_t start = cols[c].start, end = c + 1 < cols.size() ? cols[c + 1].start : line.size();
      std::string_view cell = start < line.size() ? Trim(line.substr(start, end - start)) : std::string_view();
      Value v = ReadDmonCell(cell, cols[c].field == kDmonReasons || cols[c].field == kDmonXid);
      switch (cols[c].field) {
        case kDmonTemp: r.temperature_c = v; break;
        case kDmonPower: r.power_w = v; break;
        case kDmonLimit: r.power_limit_w = v; break;
        case kDmonSm: r.sm_mhz = v; break;
        case kDmonSmMax: r.sm_max_mhz = v; break;
        case kDmonReasons: r.reasons = v; break;
        case kDmonXid: r.xid = v; break;
        case kDmonIgnored: break;
      }
    }
    rows[r.index] = std::move(r);
  }
  std::map<ComponentId, bool> seen;
  for (auto& [id, r] : rows) {
    const GpuAddress* gpu = host.FindGpu(id, "");
    if (!gpu) {
      out.Error(host.host, src, Problem::kUnmapped, kNoComponent,
                HostMap::Describe(id, "") + " is not a GPU of this host in the inventory");
      continue;
    }
    seen[gpu->gpu] = true;
    ToObservations(r, *gpu, host.host, src, kDmonNames, out);
    if (r.xid.present)
      out.xid_gauges.push_back({host.host, src, gpu->gpu, host.node, gpu->pci, static_cast<int>(r.xid.bits & 0xffff)});
  }
  for (const GpuAddress& g : host.gpus)
    if (!seen.count(g.gpu))
      out.Error(host.host, src, engine_down ? Problem::kUnavailable : Problem::kMissing, g.gpu,
                HostMap::Describe(g.index, g.pci) + (engine_down ? ": no reading, no DCGM host engine" : ": not in the output"));
  return out;
}

}  // namespace rackchaos::observe
