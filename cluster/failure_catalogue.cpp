#include "cluster/failure_catalogue.h"

#include <algorithm>
#include <cmath>

#include "core/embedded.h"
#include "core/strings.h"
#include "core/yaml_reader.h"

namespace rackchaos::cluster {
namespace {

const yaml::Format kCatalogueFormat{"failure catalogue", 64, 3};

// The keys of each part of a failure catalogue, in file order.
const std::string kTopKeys[] = {"name", "source", "counts_from", "reference", "shape", "causes"};
const std::string kTopRequired[] = {"name", "source"};
const std::string kReferenceKeys[] = {"gpus", "gpus_per_node", "days"};
const std::string kShapeKeys[] = {"gpu", "nic", "node"};
const std::string kCauseKeys[] = {"name", "count", "class", "injector", "xid", "repair"};
const std::string kCauseRequired[] = {"name", "count", "class", "injector", "repair"};

const yaml::Entry* FindEntry(const std::vector<yaml::Entry>& entries, std::string_view key) {
  for (const yaml::Entry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

// The entries of `node` (a map of `keys`), or the first required key it lacks, named at `pos`.
Result<std::vector<yaml::Entry>> Section(yaml::Reader& r, const YAML::Node& node, const std::string& where,
                                         std::span<const std::string> keys, std::span<const std::string> required,
                                         const SourcePos& pos) {
  RC_ASSIGN_OR_RETURN(auto entries, r.Entries(node, where, keys));
  if (std::string missing = yaml::Reader::Missing(entries, required); !missing.empty())
    return At(pos, "missing required key '" + missing + "' in " + (where.empty() ? "the failure catalogue" : where));
  for (yaml::Entry& e : entries) e.name = where.empty() ? e.key : where + "." + e.key;
  return entries;
}

Result<FailureClass> ParseClass(const yaml::Reader& r, const yaml::Entry& e) {
  std::string s;
  RC_RETURN_IF_ERROR(r.String(e, s, "gpu, nic or node"));
  if (s == "gpu") return FailureClass::kGpu;
  if (s == "nic") return FailureClass::kNic;
  if (s == "node") return FailureClass::kNode;
  return r.Error(e, e.name + ": unknown failure class " + Quote(s) + "; known: gpu, nic, node");
}

// The optional per-class `shape:` map (absent classes keep what they have).
Status ReadShapes(yaml::Reader& r, const yaml::Entry& shape, FailureCatalogue& c) {
  RC_ASSIGN_OR_RETURN(auto entries, Section(r, shape.value, "shape", kShapeKeys, {}, r.Pos(shape)));
  for (const yaml::Entry& e : entries) {
    double k = 0;
    RC_RETURN_IF_ERROR(r.Number(e, k));
    if (!(k > 0 && k <= 20)) return r.Error(e, e.name + " must be above 0 and at most 20 (1 = exponential)");
    const FailureClass cls = e.key == "gpu" ? FailureClass::kGpu : e.key == "nic" ? FailureClass::kNic : FailureClass::kNode;
    c.shape[static_cast<int>(cls)] = k;
  }
  return Status::Ok();
}

Status ReadReference(yaml::Reader& r, const yaml::Entry& reference, FailureCatalogue& c) {
  RC_ASSIGN_OR_RETURN(auto entries, Section(r, reference.value, "reference", kReferenceKeys, kReferenceKeys, r.Pos(reference)));
  for (const yaml::Entry& e : entries) {
    if (e.key == "gpus") RC_RETURN_IF_ERROR(r.Int(e, 1, 100'000'000, c.reference_gpus));
    if (e.key == "gpus_per_node") RC_RETURN_IF_ERROR(r.Int(e, 1, 1024, c.reference_gpus_per_node));
    if (e.key == "days") RC_RETURN_IF_ERROR(r.Number(e, c.reference_days));
  }
  return Status::Ok();
}

Result<FailureCause> ReadCause(yaml::Reader& r, const YAML::Node& node, const std::string& where) {
  FailureCause f;
  RC_ASSIGN_OR_RETURN(auto entries, Section(r, node, where, kCauseKeys, kCauseRequired, r.Pos(node)));
  for (const yaml::Entry& e : entries) {
    if (e.key == "name") RC_RETURN_IF_ERROR(r.String(e, f.name));
    if (e.key == "count") RC_RETURN_IF_ERROR(r.Int(e, 0, 1'000'000'000, f.count));
    if (e.key == "class") {
      RC_ASSIGN_OR_RETURN(f.cls, ParseClass(r, e));
    }
    if (e.key == "injector") RC_RETURN_IF_ERROR(r.String(e, f.injector));
    if (e.key == "xid") RC_RETURN_IF_ERROR(r.Int(e, 0, 1'000'000, f.xid));
    if (e.key == "repair") RC_RETURN_IF_ERROR(r.Dur(e, f.repair));
  }
  return f;
}

Result<FailureCatalogue> ReadCatalogue(yaml::Reader& r, const YAML::Node& root) {
  FailureCatalogue c;
  RC_ASSIGN_OR_RETURN(auto top, Section(r, root, "", kTopKeys, kTopRequired, {r.file(), 1, 1}));
  // `counts_from: NAME` takes a shipped catalogue's reference and causes; this file sets the rest.
  if (const yaml::Entry* base = FindEntry(top, "counts_from")) {
    std::string from, name;
    RC_RETURN_IF_ERROR(r.String(*base, from));
    RC_RETURN_IF_ERROR(r.String(*FindEntry(top, "name"), name));
    const EmbeddedText* t = FindEmbedded(kFailureCatalogueText, from);
    if (t == nullptr || from == name)
      return r.Error(*base, "counts_from names no other shipped catalogue: " + Quote(from));
    for (const char* own : {"reference", "causes"})
      if (const yaml::Entry* e = FindEntry(top, own))
        return r.Error(e->key_node, std::string(own) + " comes from counts_from's catalogue; leave it out here");
    RC_ASSIGN_OR_RETURN(c, ParseFailureCatalogue(std::string(t->text), std::string(t->file)));
  }
  const yaml::Entry* causes = FindEntry(top, "causes");
  for (const yaml::Entry& e : top) {
    if (e.key == "name") RC_RETURN_IF_ERROR(r.String(e, c.name));
    if (e.key == "source") RC_RETURN_IF_ERROR(r.String(e, c.source));
    if (e.key == "reference") RC_RETURN_IF_ERROR(ReadReference(r, e, c));
    if (e.key == "shape") RC_RETURN_IF_ERROR(ReadShapes(r, e, c));
  }
  if (causes == nullptr) return c;
  const double hours = c.reference_days * 24;
  RC_ASSIGN_OR_RETURN(auto items, r.Items(*causes));
  for (size_t i = 0; i < items.size(); ++i) {
    RC_ASSIGN_OR_RETURN(FailureCause f, ReadCause(r, items[i], "causes[" + std::to_string(i) + "]"));
    // One NIC per GPU in the reference cluster (H100 servers with 8 x 400G NICs).
    double population = f.cls == FailureClass::kNode ? static_cast<double>(c.reference_gpus) / c.reference_gpus_per_node
                                                     : c.reference_gpus;
    f.rate_per_hour = f.count / (population * hours);
    c.causes.push_back(f);
  }
  return c;
}

}  // namespace

Result<FailureCatalogue> ParseFailureCatalogue(const std::string& text, const std::string& origin) {
  RC_ASSIGN_OR_RETURN(YAML::Node root, yaml::Parse(text, origin, kCatalogueFormat));
  yaml::Reader r(origin, kCatalogueFormat);
  auto read = ReadCatalogue(r, root);
  if (!read.ok()) return OneLine(read.status());
  FailureCatalogue c = std::move(*read);
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

std::vector<std::string> FailureCatalogueNames() { return EmbeddedNames(kFailureCatalogueText); }

Result<FailureCatalogue> LoadFailureCatalogue(const std::string& name) {
  const EmbeddedText* t = FindEmbedded(kFailureCatalogueText, name);
  if (t == nullptr)
    return Status::NotFound("unknown failure catalogue " + Quote(name) + "; known: " + Join(FailureCatalogueNames()));
  return ParseFailureCatalogue(std::string(t->text), std::string(t->file));
}

}  // namespace rackchaos::cluster
