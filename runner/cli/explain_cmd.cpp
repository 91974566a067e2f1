#include "runner/cli/explain_cmd.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cluster/catalogue.h"
#include "cluster/failure_catalogue.h"
#include "healer/detector.h"
#include "healer/policy.h"
#include "injectors/injector.h"
#include "core/exit_code.h"
#include "runner/spec/expect.h"
#include "runner/site/inventory.h"
#include "core/strings.h"  // EditDistance

namespace rackchaos::runner {
namespace {

// The text between the first '(' and the next ')': the example in an injector's targets() line.
std::string ExampleTarget(std::string_view targets) {
  size_t open = targets.find('('), close = targets.find(')', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return "r01.tray01";
  return std::string(targets.substr(open + 1, close - open - 1));
}

std::string Placeholders(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "{" : " {") + n + "}";
  return out.empty() ? "(common only)" : out;
}

void ExplainInjector(const injectors::Injector& inj, std::ostream& out) {
  out << inj.name() << " (fault kind, `faults[].kind`): " << inj.summary() << "\n\n"
      << "Targets: " << inj.targets() << ".\n\nParameters (`params:`):\n";
  if (inj.params().empty()) out << "  none\n";
  for (const injectors::ParamInfo& p : inj.params())
    out << "  " << p.name << ": " << injectors::ParamTypeName(p.type) << "; default "
        << (p.default_text.empty() ? "none" : p.default_text) << ". " << p.description << "\n";
  out << "  `for: DURATION` (on the fault, not in params) reverts it after that long; without it the fault "
         "stays until the run ends.\n\n"
      << "Simulator: " << inj.simulation() << "\n\nReal mode: " << inj.real_mode() << "\n";
  for (const ActionInfo& a : InventoryActions()) {
    if (a.injector != inj.name()) continue;
    out << "  inventory `injectors." << a.name << "`" << (a.target.empty() ? "" : " (for " + a.target + ")")
        << ": placeholders " << Placeholders(a.placeholders) << " plus " << Placeholders(CommonPlaceholders())
        << " and the site's vars; checked by `" << a.checked_by << "`.\n";
  }
  out << "\nExample (a plan's `faults:` list):\n  - {at: 20m, kind: " << inj.name()
      << ", target: " << ExampleTarget(inj.targets()) << ", for: 30m}\n";
}

void ExplainDetector(const healer::DetectorInfo& d, std::ostream& out) {
  out << d.name << " (healer detector): " << d.summary << "\n\n"
      << "Reads: " << d.reads << "\n"
      << "Tuned by policy keys: " << (d.tuned_by.empty() ? "none" : d.tuned_by) << "\n"
      << "Detectors see observations only, never the fault list: detection delay is measured, not configured.\n";
}

void ExplainModel(const std::string& name, std::ostream& out) {
  auto m = cluster::LoadRackModel(name);
  if (!m.ok()) {
    out << name << " (rack model): " << m.status().message() << "\n";
    return;
  }
  out << name << " (rack model, `cluster.model`): " << m->description << "\n\n"
      << "Per rack: " << m->compute_trays << " compute trays x " << m->gpus_per_tray << " GPUs = " << m->gpus()
      << " GPUs, " << m->switch_trays << " NVLink switch trays, " << m->power_shelves << " power shelves.\n"
      << "Targets: r01.tray01 .. r01.tray" << (m->compute_trays < 10 ? "0" : "") << m->compute_trays
      << ", r01.trayNN.gpu0 .. gpu" << m->gpus_per_tray - 1 << ", r01.trayNN.nic0 .. nic" << m->nics_per_tray - 1
      << ", r01.trayNN.gpuN.nvlink0 .. nvlink" << m->nvlink_links_per_gpu - 1 << ", r01.trayNN.valve.\n\n"
      << "Catalogue entry (embedded in the binary; # comments give each number's source, [guess] marks a "
         "labelled default):\n\n"
      << cluster::ShippedModelText(name);
}

void ExplainPolicy(const std::string& name, std::ostream& out) {
  auto p = healer::LoadPolicy(name);
  out << name
      << " (healer policy, `healer.policy` or `run --healer`): " << (p.ok() ? p->description : p.status().message())
      << "\n\n"
      << "The shipped YAML (embedded in the binary; copy it to a file and pass the path to make your own):\n\n"
      << healer::ShippedPolicyText(name);
}

void ExplainMetric(const std::string& name, std::ostream& out) {
  std::string example;  // the first metric listed, as the gate example
  for (const auto& [metric, description] : ExpectationMetrics()) {
    if (metric != name && metric.rfind(name + ".", 0) != 0) continue;
    if (example.empty()) out << name << " (gate metric, `expect:`):\n";
    if (example.empty()) example = metric;
    out << "  " << metric << ": " << description << "\n";
  }
  // Ratios where more is better get a floor; times and counts a ceiling.
  bool floor = example.starts_with("ettr") || example.starts_with("goodput") || example == "healer.precision" ||
               example == "healer.recall" || example.starts_with("job.mttf");
  out << "\nA gate is METRIC OP VALUE with OP one of < <= > >= == != and VALUE a duration (90s, 5m) for time\n"
         "metrics, a number or percentage otherwise, e.g. \""
      << example
      << (IsTimeMetric(example) ? " < 10m"
          : floor               ? " >= 0.9"
                                : " <= 1")
      << "\". Definitions: docs/metrics.md.\n";
}

// "0.0152": rates and shares with three significant digits.
std::string Rate3(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

// A component's mean time between failures at `per_hour`: years, days or hours, whichever reads best.
std::string MtbfWords(double per_hour) {
  if (per_hour <= 0) return "never";
  const double hours = 1 / per_hour;
  char buf[48];
  if (hours >= 2 * 8766) std::snprintf(buf, sizeof buf, "%.1f years", hours / 8766);
  else if (hours >= 48) std::snprintf(buf, sizeof buf, "%.0f days", hours / 24);
  else std::snprintf(buf, sizeof buf, "%.1f hours", hours);
  return buf;
}

void ExplainCatalogue(const cluster::FailureCatalogue& c, bool shipped, std::ostream& out) {
  out << c.name << " (failure catalogue, `chaos.catalogue`): " << c.source << "\n"
      << (shipped ? "Shipped (embedded in the binary), from " : "Read from ") << c.file << ".\n\n"
      << "Per class: failures per component-day, the mean time between failures of one component, Weibull shape\n";
  for (cluster::FailureClass cls : cluster::kFailureClasses) {
    const double rate = c.ClassRatePerHour(cls);
    out << "  " << cluster::FailureClassName(cls) << ": " << (rate > 0 ? Rate3(rate * 24) : "0") << " /day, MTBF "
        << MtbfWords(rate) << ", shape " << c.ShapeOf(cls) << "\n";
  }
  out << "\nCauses (a failure of a class picks its cause in proportion to the causes' rates):\n";
  for (const cluster::FailureCause& f : c.causes) {
    const double of_class = c.ClassRatePerHour(f.cls);
    out << "  " << f.name << " [" << cluster::FailureClassName(f.cls) << "]: " << Rate3(f.rate_per_hour * 24)
        << " /day (MTBF " << MtbfWords(f.rate_per_hour) << ", " << (of_class > 0 ? Rate3(100 * f.rate_per_hour / of_class) : "0")
        << "% of the class)";
    if (f.count > 0) out << ", " << f.count << " in the reference run";
    if (f.events) out << ", fitted from " << *f.events << " event(s)";
    if (f.interval_low && f.interval_high)
      out << ", 95% interval " << Rate3(*f.interval_low) << " .. " << Rate3(*f.interval_high) << " /day";
    out << "; injects " << f.injector << (f.xid ? " xid " + std::to_string(f.xid) : "") << ", repair "
        << FormatDuration(f.repair) << "\n";
  }
  out << "\nIn a plan: chaos: {catalogue: " << (shipped ? c.name : c.file)
      << ", scale: 2.5, rates: {gpu: {per_day: 0.002}}} (scale and rates take decimals; rates as per_day or mtbf,\n"
         "per class or per cause by name). Format: docs/catalogue.md.\n";
  if (auto text = cluster::ShippedFailureCatalogueText(c.name); text && shipped)
    out << "\nThe shipped YAML (copy it to a file, change it and name the file in `chaos.catalogue`):\n\n" << *text;
}

bool IsMetricName(const std::string& name) {
  for (const auto& [metric, d] : ExpectationMetrics())
    if (metric == name || metric.rfind(name + ".", 0) == 0) return true;
  return false;
}

}  // namespace

std::vector<std::string> ExplainableNames() {
  std::vector<std::string> names;
  for (const auto* i : injectors::AllInjectors()) names.emplace_back(i->name());
  for (const auto& d : healer::DetectorTable()) names.push_back(d.name);
  for (const auto& m : cluster::CatalogueModelNames()) names.push_back(m);
  for (const auto& p : healer::ShippedPolicyNames()) names.push_back(p);
  for (const auto& c : cluster::FailureCatalogueNames()) names.push_back(c);
  for (const auto& [metric, d] : ExpectationMetrics()) {
    names.push_back(metric);
    names.push_back(metric.substr(0, metric.rfind('.')));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Result<std::string> Explain(const std::string& name) {
  std::ostringstream out;
  auto section = [&out] {
    if (out.tellp() > 0) out << "\n";
  };
  if (const auto* inj = injectors::FindInjector(name)) ExplainInjector(*inj, out);
  for (const auto& d : healer::DetectorTable())
    if (d.name == name) section(), ExplainDetector(d, out);
  if (cluster::ShippedModelText(name)) section(), ExplainModel(name, out);
  if (healer::ShippedPolicyText(name)) section(), ExplainPolicy(name, out);
  if (IsMetricName(name)) section(), ExplainMetric(name, out);
  const bool shipped_catalogue = cluster::ShippedFailureCatalogueText(name).has_value();
  if (shipped_catalogue || cluster::IsCataloguePath(name)) {
    auto c = cluster::LoadFailureCatalogue(name);  // a path: through core/user_file.h
    if (!c.ok()) return c.status().code() == StatusCode::kInvalidArgument
                            ? c.status()
                            : Status(c.status().code(), "explain: " + c.status().message());
    section(), ExplainCatalogue(*c, shipped_catalogue, out);
  }
  if (out.tellp() > 0) return out.str();

  std::vector<std::pair<size_t, std::string>> near;
  for (const std::string& known : ExplainableNames()) near.push_back({EditDistance(name, known), known});
  std::stable_sort(near.begin(), near.end());
  std::string hint;
  for (size_t i = 0; i < near.size() && i < 3; ++i) hint += (i ? ", " : "") + near[i].second;
  return Status::NotFound("explain: unknown name '" + name + "'; nearest: " + hint +
                          "; see `rackchaos list models|injectors|detectors|policies|metrics|catalogues`");
}

int CmdExplain(const std::string& name) {
  auto text = Explain(name);
  if (!text.ok()) {
    std::fprintf(stderr, "rackchaos: %s\n", text.status().message().c_str());
    return ToInt(ExitCode::kBadInput);
  }
  std::cout << *text;
  return 0;
}

}  // namespace rackchaos::runner
