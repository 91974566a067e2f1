// Failure catalogues: published interruption counts turned into per-component failure rates for the
// chaos processes of a plan. Shipped as data (cluster/catalogue/failures-*.yaml, embedded).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/units.h"

namespace rackchaos::cluster {

enum class FailureClass { kGpu, kNic, kNode };
const char* FailureClassName(FailureClass c);

struct FailureCause {
  std::string name;          // "faulty GPU"
  int count = 0;             // interruptions in the reference run
  FailureClass cls = FailureClass::kGpu;
  std::string injector;      // "gpu_fail", "process_crash", "link_down", "tray_pull"
  int xid = 0;               // for gpu_fail: the Xid the driver prints
  Duration repair{};         // how long until the part is back (the fault's duration)
  double rate_per_hour = 0;  // per component of its class, derived from count and the reference
};

struct FailureCatalogue {
  std::string name;
  std::string source;
  int reference_gpus = 0;
  int reference_gpus_per_node = 0;
  double reference_days = 0;
  std::vector<FailureCause> causes;
};

std::vector<std::string> FailureCatalogueNames();
Result<FailureCatalogue> LoadFailureCatalogue(const std::string& name);

}  // namespace rackchaos::cluster
