#include "injectors/injector.h"

#include <cstdlib>

#include "core/units.h"

namespace rackchaos::injectors {

// Each fault kind lives in its own file and exposes one accessor; the table lists them explicitly
// (no self-registering statics: static libraries drop them).
const Injector& LinkDown();
const Injector& LinkDegrade();
const Injector& GpuThrottle();
const Injector& ValveFail();
const Injector& TrayPull();
const Injector& GpuFail();
const Injector& ProcessCrash();
const Injector& SwitchFail();
const Injector& CduFail();
const Injector& PowerFail();
const Injector& Leak();
const Injector& LeafFail();
const Injector& StorageDegrade();
const Injector& CacheFail();
const Injector& PumpFail();
const Injector& SpineFail();
const Injector& DpuFail();
const Injector& ObjectStoreDegrade();  // regions.cpp
const Injector& ObjectStoreFail();
const Injector& CheckpointStoreFail();
const Injector& RegionOutage();

const std::vector<const Injector*>& AllInjectors() {
  static const std::vector<const Injector*> kTable = {&LinkDown(), &LinkDegrade(), &GpuThrottle(), &ValveFail(), &TrayPull(),
                                                          &GpuFail(), &ProcessCrash(), &SwitchFail(),
                                                          &CduFail(), &PowerFail(), &Leak(),
                                                          &LeafFail(), &StorageDegrade(), &CacheFail(),
                                                          &PumpFail(), &SpineFail(), &DpuFail(),
                                                          &ObjectStoreDegrade(), &ObjectStoreFail(),
                                                          &CheckpointStoreFail(), &RegionOutage()};
  return kTable;
}

const Injector* FindInjector(std::string_view name) {
  for (const Injector* i : AllInjectors())
    if (i->name() == name) return i;
  return nullptr;
}

std::string InjectorNames() {
  std::string out;
  for (const Injector* i : AllInjectors()) out += (out.empty() ? "" : ", ") + std::string(i->name());
  return out;
}

// Bounds of each parameter type (issue 26): a power a GPU or a tray could be set to, with room; a fault
// lasting at most the longest plan; the fraction's [0, 1] is ParseFraction's own.
constexpr double kMinWatts = 1, kMaxWatts = 100000;
constexpr double kMaxParamSeconds = 3650.0 * 86400;

const char* ParamTypeName(ParamType t) {
  switch (t) {
    case ParamType::kWatts: return "power from 1W to 100kW (e.g. 600W, 1.2kW)";
    case ParamType::kFraction: return "fraction from 0% to 100% (e.g. 15% or 0.15)";
    case ParamType::kDuration: return "duration from 0s to 3650d (e.g. 90s, 5m)";
    case ParamType::kInteger: return "whole number from 0 to 1000000 (e.g. 79)";
  }
  return "value";
}

Result<double> ParseParamValue(const ParamInfo& info, std::string_view text) {
  switch (info.type) {
    case ParamType::kWatts: {
      auto w = ParseWatts(text);
      if (!w.ok()) return w.status();
      if (!(*w >= kMinWatts && *w <= kMaxWatts))  // NaN fails both
        return Status::Invalid("'" + std::string(text) + "' is out of range; expected a " + ParamTypeName(info.type));
      return *w;
    }
    case ParamType::kFraction: return ParseFraction(text);
    case ParamType::kDuration: {
      auto d = ParseDuration(text);
      if (!d.ok()) return d.status();
      if (d->Seconds() > kMaxParamSeconds)
        return Status::Invalid("'" + std::string(text) + "' is out of range; expected a " + ParamTypeName(info.type));
      return d->Seconds();
    }
    case ParamType::kInteger: {
      std::string s(text);
      char* end = nullptr;
      long v = std::strtol(s.c_str(), &end, 10);
      if (s.empty() || end != s.c_str() + s.size() || v < 0 || v > 1000000)
        return Status::Invalid("'" + s + "' is not a whole number from 0 to 1000000");
      return static_cast<double>(v);
    }
  }
  return Status::Internal("unknown parameter type");
}

Result<Params> ParseParams(const Injector& injector, const std::map<std::string, std::string>& raw) {
  Params out;
  for (const auto& [key, text] : raw) {
    const ParamInfo* info = nullptr;
    for (const ParamInfo& p : injector.params())
      if (p.name == key) info = &p;
    if (!info) {
      std::string known;
      for (const ParamInfo& p : injector.params()) known += (known.empty() ? "" : ", ") + p.name;
      return Status::Invalid("unknown parameter '" + key + "' for " + std::string(injector.name()) + "; " +
                             (known.empty() ? "it takes none" : "known: " + known));
    }
    auto v = ParseParamValue(*info, text);
    if (!v.ok()) return v.status().WithContext("parameter '" + key + "'");
    out[key] = *v;
  }
  for (const ParamInfo& p : injector.params()) {
    if (out.count(p.name) || p.default_text.empty()) continue;
    auto v = ParseParamValue(p, p.default_text);
    if (!v.ok()) return Status::Internal("bad default for " + p.name);
    out[p.name] = *v;
  }
  return out;
}

Status WrongTarget(std::string_view injector, std::string_view wanted, std::string_view example,
                   const cluster::Topology& topo, const cluster::Target& t) {
  const std::string kind =
      t.port >= 0 ? "an NVLink port" : std::string("a ") + cluster::KindName(topo.at(t.component).kind);
  return Status::Invalid(std::string(injector) + " needs " + std::string(wanted) + " (e.g. " + std::string(example) +
                         "); " + topo.TargetName(t) + " is " + kind);
}

Status NeedKind(std::string_view injector, cluster::Kind kind, std::string_view wanted, std::string_view example,
                const cluster::Topology& topo, const cluster::Target& t) {
  if (topo.at(t.component).kind == kind && t.port < 0) return Status::Ok();
  return WrongTarget(injector, wanted, example, topo, t);
}

}  // namespace rackchaos::injectors
