#include "cluster/failure_catalogue.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>

extern const char* const kFailuresLlama3;
extern const char* const kFailuresBurnIn;

namespace rackchaos::cluster {
namespace {

const std::map<std::string, const char*>& Shipped() {
  static const std::map<std::string, const char*> kCatalogues = {{"burn-in", kFailuresBurnIn},
                                                                 {"llama3", kFailuresLlama3}};
  return kCatalogues;
}

Result<FailureClass> ParseClass(const std::string& s) {
  if (s == "gpu") return FailureClass::kGpu;
  if (s == "nic") return FailureClass::kNic;
  if (s == "node") return FailureClass::kNode;
  return Status::Invalid("unknown failure class '" + s + "'; known: gpu, nic, node");
}

// The optional per-class `shape:` map (absent classes keep what they have). yaml-cpp throws: the caller catches.
Status ReadShapes(const YAML::Node& root, const std::string& origin, FailureCatalogue& c) {
  const YAML::Node shapes = root["shape"];
  if (!shapes) return Status::Ok();
  for (FailureClass cls : {FailureClass::kGpu, FailureClass::kNic, FailureClass::kNode}) {
    if (!shapes[FailureClassName(cls)]) continue;
    double k = shapes[FailureClassName(cls)].as<double>();
    if (!(k > 0 && k <= 20))
      return Status::Invalid(origin + ": shape." + FailureClassName(cls) +
                             " must be above 0 and at most 20 (1 = exponential)");
    c.shape[static_cast<int>(cls)] = k;
  }
  return Status::Ok();
}

}  // namespace

Result<FailureCatalogue> ParseFailureCatalogue(const std::string& text, const std::string& origin) {
  FailureCatalogue c;
  try {
    YAML::Node root = YAML::Load(text);
    // `counts_from: NAME` takes a shipped catalogue's reference and causes; this file sets the rest.
    if (const YAML::Node base = root["counts_from"]) {
      const std::string from = base.as<std::string>();
      auto it = Shipped().find(from);
      if (it == Shipped().end() || from == root["name"].as<std::string>())
        return Status::Invalid(origin + ": counts_from names no other shipped catalogue: '" + from + "'");
      RC_ASSIGN_OR_RETURN(c, ParseFailureCatalogue(it->second, "catalogue/failures-" + from + ".yaml"));
    }
    c.name = root["name"].as<std::string>();
    c.source = root["source"].as<std::string>();
    if (root["counts_from"]) {
      RC_RETURN_IF_ERROR(ReadShapes(root, origin, c));
      return c;
    }
    c.reference_gpus = root["reference"]["gpus"].as<int>();
    c.reference_gpus_per_node = root["reference"]["gpus_per_node"].as<int>();
    c.reference_days = root["reference"]["days"].as<double>();
    double hours = c.reference_days * 24;
    RC_RETURN_IF_ERROR(ReadShapes(root, origin, c));
    for (const YAML::Node& n : root["causes"]) {
      FailureCause f;
      f.name = n["name"].as<std::string>();
      f.count = n["count"].as<int>();
      RC_ASSIGN_OR_RETURN(f.cls, ParseClass(n["class"].as<std::string>()));
      f.injector = n["injector"].as<std::string>();
      if (n["xid"]) f.xid = n["xid"].as<int>();
      auto repair = ParseDuration(n["repair"].as<std::string>());
      if (!repair.ok()) return repair.status().WithContext(origin + ": " + f.name);
      f.repair = *repair;
      // One NIC per GPU in the reference cluster (H100 servers with 8 x 400G NICs).
      double population = f.cls == FailureClass::kNode ? static_cast<double>(c.reference_gpus) / c.reference_gpus_per_node
                                                       : c.reference_gpus;
      f.rate_per_hour = f.count / (population * hours);
      c.causes.push_back(f);
    }
  } catch (const YAML::Exception& e) {
    return Status::Invalid(origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (c.causes.empty() || c.reference_gpus <= 0 || c.reference_gpus_per_node <= 0 || c.reference_days <= 0)
    return Status::Invalid(origin + ": a failure catalogue needs a positive reference and at least one cause");
  return c;
}

double HoursToNextFailure(Rng& rng, double rate_per_hour, double shape) {
  if (shape == 1) return rng.Exponential(rate_per_hour);
  // Mean of Weibull(k, lambda) is lambda * Gamma(1 + 1/k): pick lambda so that it is 1 / rate.
  return rng.Weibull(shape, 1 / (rate_per_hour * std::tgamma(1 + 1 / shape)));
}

const char* FailureClassName(FailureClass c) {
  switch (c) {
    case FailureClass::kGpu: return "gpu";
    case FailureClass::kNic: return "nic";
    case FailureClass::kNode: return "node";
  }
  return "unknown";
}

std::vector<std::string> FailureCatalogueNames() {
  std::vector<std::string> out;
  for (const auto& [name, text] : Shipped()) out.push_back(name);
  return out;
}

Result<FailureCatalogue> LoadFailureCatalogue(const std::string& name) {
  auto it = Shipped().find(name);
  if (it == Shipped().end()) {
    std::string known;
    for (const auto& n : FailureCatalogueNames()) known += (known.empty() ? "" : ", ") + n;
    return Status::NotFound("unknown failure catalogue '" + name + "'; known: " + known);
  }
  return ParseFailureCatalogue(it->second, "catalogue/failures-" + name + ".yaml");
}

}  // namespace rackchaos::cluster
