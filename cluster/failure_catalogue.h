// Failure catalogues: published interruption counts turned into per-component failure rates for the
// chaos processes of a plan. Shipped as data (cluster/catalogue/failures-*.yaml, embedded).
#pragma once

#include <string>
#include <vector>

#include "core/rng.h"
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
  // Weibull shape of the time between failures of one component, per class (index: FailureClass):
  // 1 is exponential (a Poisson process), below 1 infant mortality, above 1 wear-out.
  double shape[3] = {1, 1, 1};
  double ShapeOf(FailureClass c) const { return shape[static_cast<int>(c)]; }
};

// Hours until a component's next failure when its class fails `rate_per_hour` times an hour on average:
// exponential for shape 1 (the same draw as Rng::Exponential), else Weibull with the same mean.
double HoursToNextFailure(Rng& rng, double rate_per_hour, double shape);

std::vector<std::string> FailureCatalogueNames();
Result<FailureCatalogue> LoadFailureCatalogue(const std::string& name);
// Parses a catalogue from YAML text (a shipped one or a test's); `origin` names it in errors.
Result<FailureCatalogue> ParseFailureCatalogue(const std::string& yaml_text, const std::string& origin);

}  // namespace rackchaos::cluster
