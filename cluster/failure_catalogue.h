// Failure catalogues: per-component failure rates for the chaos processes of a plan, as data. Shipped ones
// (cluster/catalogue/failures-*.yaml, embedded) turn published interruption counts into rates; a site's own
// is a YAML file a plan names by path (`chaos.catalogue: site.yaml`), written by hand or by
// `rackchaos catalogue fit` from the site's logs. docs/catalogue.md documents the format; its key table is
// generated from FailureCatalogueKeys(), the table the loader reads against.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "core/source_pos.h"
#include "core/status.h"
#include "core/units.h"

namespace rackchaos::cluster {

enum class FailureClass { kGpu, kNic, kNode };
const char* FailureClassName(FailureClass c);
// "gpu", "nic" or "node" -> the class; nullopt for anything else.
std::optional<FailureClass> ParseFailureClass(std::string_view name);
inline constexpr FailureClass kFailureClasses[] = {FailureClass::kGpu, FailureClass::kNic, FailureClass::kNode};

struct FailureCause {
  std::string name;          // "faulty GPU"
  int count = 0;             // interruptions in the reference run (0 when the cause gives a rate or an MTBF)
  FailureClass cls = FailureClass::kGpu;
  std::string injector;      // "gpu_fail", "process_crash", "link_down", "tray_pull"
  int xid = 0;               // for gpu_fail: the Xid the driver prints
  Duration repair{};         // how long until the part is back (the fault's duration)
  double rate_per_hour = 0;  // per component of its class: from count and the reference, or rate, or mtbf
  // Where a fitted rate came from (`rackchaos catalogue fit`): events seen, and the rate's 95% interval
  // per component-day. Information only: the draws use rate_per_hour.
  std::optional<int> events;
  std::optional<double> interval_low, interval_high;
  SourcePos pos;  // where the cause is written (its `injector`), for errors found after loading
};

struct FailureCatalogue {
  std::string name;
  std::string source;
  std::string file;  // where it was read from: "cluster/catalogue/failures-llama3.yaml" or the user's path
  int reference_gpus = 0;  // 0 when no cause gives a count
  int reference_gpus_per_node = 0;
  double reference_days = 0;
  std::vector<FailureCause> causes;
  // Weibull shape of the time between failures of one component, per class (index: FailureClass):
  // 1 is exponential (a Poisson process), below 1 infant mortality, above 1 wear-out.
  double shape[3] = {1, 1, 1};
  double ShapeOf(FailureClass c) const { return shape[static_cast<int>(c)]; }
  // The class's failures per component-hour: the sum of its causes' rates.
  double ClassRatePerHour(FailureClass c) const;
};

// One key of the catalogue format. The loader checks files against this table (unknown keys, required
// ones) and docs/catalogue.md's key table is generated from it, so the two cannot drift.
struct CatalogueKey {
  std::string_view section;  // "" top level, "reference", "shape", "causes[]"
  std::string_view key;
  std::string_view type;     // how the value reads in docs: "a string", "a duration (4h, 90m)"
  bool required = false;
  std::string_view example;
  std::string_view description;
};
const std::vector<CatalogueKey>& FailureCatalogueKeys();

// Hours until a component's next failure when its class fails `rate_per_hour` times an hour on average:
// exponential for shape 1 (the same draw as Rng::Exponential), else Weibull with the same mean.
double HoursToNextFailure(Rng& rng, double rate_per_hour, double shape);

// The shipped catalogues' names ("burn-in", "llama3").
std::vector<std::string> FailureCatalogueNames();
// Whether `name_or_path` names a file rather than a shipped catalogue: it ends in .yaml or .yml or holds a
// '/'. A plan resolves such a name relative to its own folder.
bool IsCataloguePath(std::string_view name_or_path);
// A shipped catalogue by name, or (IsCataloguePath) the file at that path, read through core/user_file.h
// (a regular file of at most its kMaxCatalogueBytes, 1 MiB). NotFound names the shipped ones and the path form.
Result<FailureCatalogue> LoadFailureCatalogue(const std::string& name_or_path);
// Parses a catalogue from YAML text (a shipped one, a file's or a test's); `origin` names it in errors,
// which read "ORIGIN:LINE:COL: what is wrong".
Result<FailureCatalogue> ParseFailureCatalogue(const std::string& yaml_text, const std::string& origin);
// The shipped catalogue's YAML text, or nullopt for an unknown name.
std::optional<std::string_view> ShippedFailureCatalogueText(std::string_view name);

}  // namespace rackchaos::cluster
