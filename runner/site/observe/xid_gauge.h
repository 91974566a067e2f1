// DCGM's last-Xid gauge (DCGM_FI_DEV_XID_ERRORS through dcgm-exporter and Prometheus, XIDER in
// dcgmi dmon) -> the kernel log line the xid detector reads.
//
// The gauge holds the code of the last Xid a GPU raised, not an event: the same 79 is read every
// period until another Xid replaces it. XidGauge remembers each GPU's last code and reports a change
// to a non-zero code once, as a driver-format line ("NVRM: Xid (PCI:0000:3b:00): 79, ...", made by
// cluster/kernel_log.h) for the GPU's node, so the xid detector and its catalogue work as they do on
// journald lines. The first sample of a GPU is its baseline, not reported: a code from before the run
// is history, as the journal reader's first line is. The same code raised twice in a row is one
// change only (a gauge cannot show the repeat). A GPU without a known PCI address cannot be named
// in a driver line: kMissing error. Threading: the caller's thread.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runner/site/observe/observed.h"

namespace rackchaos::observe {

class XidGauge {
 public:
  Observed Update(const std::vector<XidGaugeSample>& samples);

 private:
  std::map<std::pair<std::string, ComponentId>, int> last_;  // (host, GPU) -> last code seen
};

}  // namespace rackchaos::observe
