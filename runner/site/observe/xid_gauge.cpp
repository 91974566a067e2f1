#include "runner/site/observe/xid_gauge.h"

#include "cluster/kernel_log.h"

namespace rackchaos::observe {

Observed XidGauge::Update(const std::vector<XidGaugeSample>& samples) {
  Observed out;
  for (const XidGaugeSample& s : samples) {
    auto [it, first] = last_.try_emplace({s.host, s.gpu}, s.code);
    if (first) continue;  // the baseline
    if (it->second == s.code) continue;
    it->second = s.code;
    if (s.code == 0) continue;  // the counter was reset (GPU reset, exporter restart): no new Xid
    if (s.pci.empty()) {
      out.Error(s.host, s.source, Problem::kMissing, s.gpu,
                "Xid " + std::to_string(s.code) + " on a GPU without a known PCI address: no driver line can name it");
      continue;
    }
    cluster::XidLine line{s.pci, s.code, std::nullopt, "", "reported by DCGM as the GPU's last Xid", true};
    out.Add(cluster::KernelLogLine{s.node, cluster::FormatXidLine(line, cluster::LogStyle::kBare, 0, "")});
  }
  return out;
}

}  // namespace rackchaos::observe
