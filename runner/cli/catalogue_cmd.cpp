#include "runner/cli/catalogue_cmd.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cluster/catalogue.h"
#include "cluster/failure_catalogue.h"
#include "cluster/topology.h"
#include "core/exit_code.h"
#include "core/strings.h"
#include "core/user_file.h"
#include "runner/cli/cli_exit.h"
#include "runner/incident/importer.h"
#include "runner/incident/log_line.h"
#include "runner/plan/plan_loader.h"
#include "runner/replay/catalogue_fit.h"
#include "runner/site/inventory.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {
namespace {

// The bounds of the fitting window --since .. --until, in days.
constexpr double kMinFitDays = 1, kMaxFitDays = 36525;

// The cluster whose components were exposed: a plan's cluster, or a site inventory's model and racks.
Result<cluster::Topology> ExposedCluster(const std::string& path) {
  auto text = ReadUserFile(path, {"plan or site inventory", kMaxPlanBytes});
  if (!text.ok()) return text.status();
  ClusterSpec spec;
  if (auto plan = ParsePlan(*text, path); plan.ok()) {
    spec = plan->cluster;
  } else {
    auto inv = ParseInventory(*text, path);
    if (!inv.ok())
      return Status::Invalid("--cluster " + path + " is neither a plan (" + plan.status().message() +
                             ") nor a site inventory (" + inv.status().message() + ")");
    spec.model = inv->model;
    spec.racks = inv->racks;
  }
  auto model = cluster::LoadRackModel(spec.model);
  if (!model.ok()) return Status::Invalid(path + ": " + model.status().message());
  RC_RETURN_IF_ERROR(ApplyNvlinkMode(spec, *model));
  auto topo = cluster::Topology::Build(*model, spec.racks, spec.spare_trays, RegionSpecs(spec));
  if (!topo.ok()) return Status::Invalid(path + ": " + topo.status().message());
  return std::move(*topo);
}

Result<double> WindowTime(const std::string& flag, const std::string& text, const incident::WallZone& zone) {
  bool zoned = false;
  auto t = incident::ParseIsoTime(text, &zoned);
  if (!t) return Status::Invalid(flag + " " + Quote(text) + ": expected an ISO time such as 2026-01-01T00:00:00Z");
  return zoned ? *t : zone.ToUtc(*t);
}

// Three significant digits ("0.00112", "5.43e-05"), plain digits from 1000 up ("4464").
std::string Sig(double v) {
  char buf[32];
  if (v >= 1000) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string Mtbf(double per_day) {
  if (per_day <= 0) return "-";
  const double days = 1 / per_day;
  return days >= 730 ? Sig(days / 365) + "y" : days >= 2 ? Sig(days) + "d" : Sig(days * 24) + "h";
}

void PrintFit(std::ostream& out, const CatalogueFit& fit, const FitOptions& o, const std::string& window) {
  out << "Window " << window << " (" << Sig((o.until - o.since) / 86400) << " days); exposure: "
      << Sig(fit.component_days[0]) << " GPU-days, " << Sig(fit.component_days[1]) << " NIC-days, "
      << Sig(fit.component_days[2]) << " tray-days\n"
      << "Failures counted: " << fit.failures << " (" << fit.outside_window << " event(s) outside the window)\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-5s %-44s %6s %11s %23s %8s  %s\n", "class", "cause", "events", "rate/day",
                "95% interval /day", "MTBF", "repair");
  out << line;
  for (const FitCause& f : fit.causes) {
    const double rate = f.cause.rate_per_hour * 24;
    std::snprintf(line, sizeof line, "%-5s %-44.44s %6d %11s %23s %8s  %s%s\n", cluster::FailureClassName(f.cause.cls),
                  f.cause.name.c_str(), *f.cause.events, Sig(rate).c_str(),
                  (Sig(*f.cause.interval_low) + " .. " + Sig(*f.cause.interval_high)).c_str(), Mtbf(rate).c_str(),
                  FormatDuration(f.cause.repair).c_str(),
                  f.repair_measured ? (" (median of " + std::to_string(f.repairs_seen) + ")").c_str()
                  : f.cause.injector == "process_crash" ? ""
                                                        : " ([guess]: none seen)");
    out << line;
  }
  out << "\nNot classified (" << fit.unclassified.size() << " kind(s); not in the catalogue):\n";
  if (fit.unclassified.empty()) out << "  none\n";
  for (const NotFitted& n : fit.unclassified) out << "  " << n.count << " x " << n.what << " (first at " << n.first << ")\n";
  out << "Not failures (counted only):\n";
  if (fit.not_failures.empty()) out << "  none\n";
  for (const NotFitted& n : fit.not_failures) out << "  " << n.count << " x " << n.what << " (first at " << n.first << ")\n";
  if (!fit.warnings.empty()) out << "Warnings:\n";
  for (const std::string& w : fit.warnings) out << "  warning: " << w << "\n";
}

}  // namespace

int CmdCatalogueFit(const CatalogueFitArgs& args) {
  // Stage 1: the exposure: the cluster's components per class over the window.
  auto topo = ExposedCluster(args.cluster);
  if (!topo.ok()) return Fail(topo.status().message());
  auto zone = incident::WallZone::Parse(args.tz);
  if (!zone.ok()) return Fail("--tz: " + zone.status().message());
  auto since = WindowTime("--since", args.since, *zone);
  auto until = WindowTime("--until", args.until, *zone);
  if (!since.ok()) return Fail(since.status().message());
  if (!until.ok()) return Fail(until.status().message());
  if (!(*until > *since)) return Fail("--until " + Quote(args.until) + " must be after --since " + Quote(args.since));
  // A rate per component-day needs a day of history at least; a window past a century is a typo (and its
  // exposure is not the cluster's: nobody ran it that long).
  if (const double days = (*until - *since) / 86400; days < kMinFitDays || days > kMaxFitDays)
    return Fail("--since " + Quote(args.since) + " .. --until " + Quote(args.until) + " is " + Sig(days) +
                " days; the window must be from 1 to 36525 days (100 years)");
  FitOptions o;
  o.name = args.name;
  o.since = *since;
  o.until = *until;
  for (const cluster::Component& c : topo->components()) {
    if (c.kind == cluster::Kind::kGpu) ++o.components[0];
    if (c.kind == cluster::Kind::kNic) ++o.components[1];
    if (c.kind == cluster::Kind::kComputeTray) ++o.components[2];
  }
  const std::string window = args.since + " .. " + args.until;
  o.source = "fitted by rackchaos catalogue fit from " + std::to_string(args.logs.size()) + " log(s) over " + window +
             " on " + topo->model().name + " x" + std::to_string(topo->racks().size()) + " (" +
             Sig(o.components[0]) + " GPUs, " + Sig(o.components[1]) + " NICs, " + Sig(o.components[2]) + " trays)";

  // Stage 2: the logs, streamed by the replay importers.
  incident::ImportOptions import_options;
  import_options.year = args.year;
  import_options.zone = *zone;
  if (!args.boot_time.empty()) {
    auto boot = WindowTime("--boot-time", args.boot_time, *zone);
    if (!boot.ok()) return Fail(boot.status().message());
    import_options.boot_time = *boot;
  }
  incident::IncidentImporter importer(import_options);
  for (const std::string& path : args.logs)
    if (Status s = importer.ImportFile(path); !s.ok()) return Fail(s.message());
  const incident::Incident inc = importer.Finish();

  // Stage 3: failures per cause over the exposure, the catalogue text, read back as a plan would.
  const CatalogueFit fit = FitCatalogue(inc, o);
  std::ostream& summary = args.output.empty() ? std::cerr : std::cout;
  PrintFit(summary, fit, o, window);
  if (fit.causes.empty())
    return Fail("no failure in " + window + " to fit a catalogue from (" + std::to_string(inc.events.size()) +
                " event(s) imported; docs/catalogue.md says what counts)");
  const std::string text = FittedCatalogueYaml(fit, o);
  if (auto back = cluster::ParseFailureCatalogue(text, "<fitted catalogue>"); !back.ok())
    return Fail("internal: the fitted catalogue does not read back: " + back.status().message());
  if (args.output.empty()) {
    std::cout << text;
    return 0;
  }
  std::ofstream file(args.output, std::ios::binary);
  file << text;
  if (!file.flush()) {
    const std::string why = std::strerror(errno);
    return Fail("cannot write " + args.output + ": " + why + " (the directory must exist and be writable)");
  }
  summary << "\nWrote " << args.output << ": name it in a plan as chaos: {catalogue: " << args.output
          << "} (relative to the plan's folder); `rackchaos explain " << args.output << "` shows it\n";
  return 0;
}

}  // namespace rackchaos::runner
