#include "runner/spec/validate_chaos.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/strings.h"
#include "injectors/injector.h"

namespace rackchaos::runner {
namespace {

// Burn-in limits on drawn chaos, applied in time order: a draw is dropped when it comes sooner than
// min_gap after the last kept one, or (one_per_domain) while a kept one is still active in its rack,
// the NVLink domain of every catalogue model. Dropping (not delaying) keeps the other draws' times.
std::vector<ResolvedFault> ThinChaos(const ChaosSpec& chaos, const cluster::Topology& topo, std::vector<ResolvedFault> drawn) {
  if (!chaos.one_per_domain && !chaos.min_gap) return drawn;
  std::vector<ResolvedFault> kept;
  std::map<ComponentId, Time> busy_until;  // per rack
  for (ResolvedFault& f : drawn) {
    if (chaos.min_gap && !kept.empty() && f.at < kept.back().at + *chaos.min_gap) continue;
    ComponentId rack = topo.RackOf(f.target.component);
    if (chaos.one_per_domain) {
      auto busy = busy_until.find(rack);
      if (busy != busy_until.end() && f.at < busy->second) continue;
      busy_until[rack] = f.duration ? f.at + *f.duration : Time::Max();
    }
    kept.push_back(std::move(f));
  }
  return kept;
}

bool OfClass(cluster::FailureClass cls, cluster::Kind kind) {
  return (cls == cluster::FailureClass::kGpu && kind == cluster::Kind::kGpu) ||
         (cls == cluster::FailureClass::kNic && kind == cluster::Kind::kNic) ||
         (cls == cluster::FailureClass::kNode && kind == cluster::Kind::kComputeTray);
}

// Every cause's injector must take a component of the cause's class (gpu_fail a GPU, link_down a NIC,
// tray_pull a compute tray): checked on the first component of the class, the error at the cause's
// `injector` with the catalogue injectors that would do.
Status CheckCauseTargets(const cluster::FailureCatalogue& cat, const cluster::Topology& topo) {
  for (const cluster::FailureCause& c : cat.causes) {
    const injectors::Injector* inj = injectors::FindInjector(c.injector);
    auto part = std::find_if(topo.components().begin(), topo.components().end(),
                             [&](const cluster::Component& comp) { return OfClass(c.cls, comp.kind); });
    if (inj == nullptr || part == topo.components().end()) continue;
    const cluster::Target target{part->id, -1};
    const Status s = inj->CheckTarget(topo, target);
    if (s.ok()) continue;
    std::vector<std::string> fit;
    for (const char* name : {"gpu_fail", "process_crash", "link_down", "tray_pull"})
      if (const injectors::Injector* other = injectors::FindInjector(name); other && other->CheckTarget(topo, target).ok())
        fit.emplace_back(name);
    return At(c.pos, "cause " + Quote(c.name) + " (class " + cluster::FailureClassName(c.cls) + "): " + s.message() +
                         "; injectors for class " + cluster::FailureClassName(c.cls) + ": " + Join(fit));
  }
  return Status::Ok();
}

}  // namespace

std::string CataloguePath(const ChaosSpec& chaos, const std::string& plan_path) {
  if (!cluster::IsCataloguePath(chaos.catalogue) || std::filesystem::path(chaos.catalogue).is_absolute())
    return chaos.catalogue;
  return (std::filesystem::path(plan_path).parent_path() / chaos.catalogue).lexically_normal().string();
}

Result<cluster::FailureCatalogue> PlanCatalogue(const ChaosSpec& chaos, const std::string& plan_path) {
  auto cat = cluster::LoadFailureCatalogue(CataloguePath(chaos, plan_path));
  // A file's own errors already say FILE:LINE:COL; a missing or unknown one is the plan's key's fault.
  if (!cat.ok()) return cat.status().code() == StatusCode::kInvalidArgument ? cat.status() : At(chaos.pos, cat.status().message());
  for (const cluster::FailureCause& c : cat->causes)
    if (injectors::FindInjector(c.injector) == nullptr)
      return At(c.pos, "cause " + Quote(c.name) + " names unknown injector " + Quote(c.injector) +
                           "; catalogue causes use gpu_fail, process_crash, link_down or tray_pull (`rackchaos list injectors`)");
  // Causes first, so that a class's override then scales what the causes became.
  for (const ChaosSpec::Rate& r : chaos.rates) {
    if (cluster::ParseFailureClass(r.name)) continue;
    auto cause = std::find_if(cat->causes.begin(), cat->causes.end(), [&](const auto& c) { return c.name == r.name; });
    if (cause == cat->causes.end()) {
      std::vector<std::string> names;
      for (const auto& c : cat->causes) names.push_back(c.name);
      return At(r.pos, "chaos.rates: " + Quote(r.name) + " is neither a class (gpu, nic, node) nor a cause of catalogue " +
                           Quote(cat->name) + "; its causes: " + Join(names));
    }
    cause->rate_per_hour = r.per_hour;
  }
  for (const ChaosSpec::Rate& r : chaos.rates) {
    auto cls = cluster::ParseFailureClass(r.name);
    if (!cls) continue;
    const double now = cat->ClassRatePerHour(*cls);
    if (now <= 0)
      return At(r.pos, "chaos.rates." + r.name + ": catalogue " + Quote(cat->name) + " has no " + r.name +
                           " cause with a rate to scale; set a cause's rate by its name instead");
    for (auto& c : cat->causes)
      if (c.cls == *cls) c.rate_per_hour *= r.per_hour / now;
  }
  return cat;
}

// Chaos: every component of a failure class fails as a renewal process (exponential, or Weibull with the
// catalogue's shape for the class) at the catalogue's rate (times `scale` and the class's percentage);
// each failure picks its cause in proportion to the causes' rates and lasts its repair time. Drawn here,
// from the seed, so the whole timeline is known (and shown by `validate`) before the run.
Status ExpandChaos(const ChaosSpec& chaos, const std::string& plan_path, Time until, RunSpec& spec) {
  RC_ASSIGN_OR_RETURN(cluster::FailureCatalogue cat, PlanCatalogue(chaos, plan_path));
  const cluster::Topology& topo = spec.topology;
  RC_RETURN_IF_ERROR(CheckCauseTargets(cat, topo));
  // Forked by the catalogue's name (a shipped one's name is the one a plan writes), not by its path.
  Rng rng = Rng(spec.seed).Fork("chaos." + cat.name);
  std::vector<ResolvedFault> drawn;
  for (cluster::FailureClass cls : cluster::kFailureClasses) {
    std::vector<const cluster::FailureCause*> causes;
    double rate = 0, weight = 0;
    const int percent = cls == cluster::FailureClass::kGpu   ? chaos.gpu_percent
                        : cls == cluster::FailureClass::kNic ? chaos.nic_percent
                                                             : chaos.node_percent;
    for (const auto& c : cat.causes)
      if (c.cls == cls) {
        causes.push_back(&c);
        rate += c.rate_per_hour * chaos.scale * (percent / 100.0);  // x1.0 exactly at the default
        weight += c.rate_per_hour;
      }
    if (causes.empty() || rate <= 0) continue;
    for (const cluster::Component& comp : topo.components()) {
      if (!OfClass(cls, comp.kind)) continue;
      const ComponentId part = comp.id;
      Time t = chaos.from + Duration::FromSecondsF(cluster::HoursToNextFailure(rng, rate, cat.ShapeOf(cls)) * 3600);
      while (t < until) {
        double pick = rng.Uniform() * weight;
        const cluster::FailureCause* cause = causes.back();
        for (const auto* c : causes) {
          if (pick < c->rate_per_hour) {
            cause = c;
            break;
          }
          pick -= c->rate_per_hour;
        }
        const injectors::Injector* inj = injectors::FindInjector(cause->injector);
        if (!inj) return Status::Internal("failure catalogue names unknown injector " + cause->injector);  // PlanCatalogue checked
        injectors::Params params;
        if (cause->xid) params["xid"] = cause->xid;
        std::optional<Duration> repair;
        if (cause->repair > Duration{}) repair = cause->repair;
        drawn.push_back({kNoFault, inj, {part, -1}, params, t, repair, "chaos " + cat.name + ": " + cause->name, chaos.pos});
        t = t + cause->repair + Duration::FromSecondsF(cluster::HoursToNextFailure(rng, rate, cat.ShapeOf(cls)) * 3600);
      }
    }
  }
  // Ids follow time, after the plan's own faults, so reports read in order.
  auto by_time = [](const ResolvedFault& a, const ResolvedFault& b) { return a.at < b.at; };
  std::stable_sort(drawn.begin(), drawn.end(), by_time);
  drawn = ThinChaos(chaos, topo, std::move(drawn));
  FaultId next = static_cast<FaultId>(spec.faults.size() + 1);
  for (ResolvedFault& f : drawn) {
    f.id = next++;
    spec.faults.push_back(std::move(f));
  }
  std::stable_sort(spec.faults.begin(), spec.faults.end(), by_time);
  return Status::Ok();
}

}  // namespace rackchaos::runner
