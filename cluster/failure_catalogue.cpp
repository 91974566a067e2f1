#include "cluster/failure_catalogue.h"

#include <algorithm>
#include <cmath>

#include "core/embedded.h"
#include "core/strings.h"
#include "core/user_file.h"
#include "core/yaml_reader.h"

namespace rackchaos::cluster {
namespace {

const yaml::Format kCatalogueFormat{"failure catalogue", 64, 3};

// The format, in file order. Rates are per component of the cause's class: GPUs, NICs (one per GPU in the
// reference cluster of a count) or compute trays (nodes).
const std::vector<CatalogueKey> kKeys = {
    {"", "name", "a string", true, "site-2026", "The catalogue's name, in reports (\"chaos site-2026: faulty GPU\")."},
    {"", "source", "a string", true, "\"Slurm and kernel logs, 2026-01..2026-06\"", "Where the numbers come from."},
    {"", "counts_from", "a shipped catalogue name", false, "llama3",
     "Take that catalogue's reference and causes; this file sets the rest (name, source, shape)."},
    {"", "reference", "a map", false, "{gpus: 16384, gpus_per_node: 8, days: 54}",
     "The cluster and time span that causes' counts were seen on; needed when a cause gives a count."},
    {"", "shape", "a map", false, "{gpu: 0.7, nic: 1, node: 0.8}",
     "Weibull shape of one component's time between failures, per class: 1 (the default) is exponential, "
     "below 1 infant mortality, above 1 wear-out."},
    {"", "causes", "a list", true, "[{name: faulty GPU, rate: 0.0005, class: gpu, injector: gpu_fail, repair: 4h}]",
     "What fails, how often and how it is injected."},
    {"reference", "gpus", "an integer from 1 to 100000000", true, "16384", "GPUs of the reference cluster."},
    {"reference", "gpus_per_node", "an integer from 1 to 1024", true, "8",
     "GPUs per node: node-class counts are per node (gpus / gpus_per_node); NIC-class counts per GPU."},
    {"reference", "days", "a number above 0", true, "54", "How long the counts were collected."},
    {"shape", "gpu", "a number above 0, at most 20", false, "1", "Shape of the GPU class."},
    {"shape", "nic", "a number above 0, at most 20", false, "1", "Shape of the NIC class."},
    {"shape", "node", "a number above 0, at most 20", false, "1", "Shape of the node (compute tray) class."},
    {"causes[]", "name", "a string", true, "faulty GPU", "The cause, unique in the catalogue; plans override it by this name."},
    {"causes[]", "count", "an integer from 0 to 1000000000", false, "148",
     "Failures seen on the reference cluster; rate = count / (components x reference.days). Exactly one of "
     "count, rate and mtbf."},
    {"causes[]", "rate", "a number from 0 to 1000", false, "0.00067",
     "Failures per component-day (per GPU, NIC or tray of the class)."},
    {"causes[]", "mtbf", "a duration (90d, 2000h)", false, "1500d", "Mean time between failures of one component."},
    {"causes[]", "class", "gpu, nic or node", true, "gpu",
     "The components that fail: every GPU, every NIC or every compute tray of the plan's cluster."},
    {"causes[]", "injector", "an injector name", true, "gpu_fail",
     "How the failure is injected (`rackchaos list injectors`), an injector that takes the class's components: "
     "gpu_fail or process_crash for gpu, link_down for nic, tray_pull for node."},
    {"causes[]", "xid", "an integer from 0 to 1000000", false, "79", "For gpu_fail: the Xid the driver prints."},
    {"causes[]", "repair", "a duration (4h, 90m, 0s)", true, "4h",
     "How long until the part is back: the fault's duration (0s: it reverts at once, e.g. a process crash)."},
    {"causes[]", "events", "an integer from 0 to 1000000000", false, "12",
     "Information only (written by `rackchaos catalogue fit`): the events the rate was fitted from."},
    {"causes[]", "interval", "a list of two numbers", false, "[0.00031, 0.0012]",
     "Information only (written by `rackchaos catalogue fit`): the rate's 95% interval per component-day."},
};

// The keys of `section`, and those of them that are required.
struct SectionKeys {
  std::vector<std::string> names, required;
};
const SectionKeys& KeysOf(std::string_view section) {
  static const auto* kSections = [] {
    auto* out = new std::vector<std::pair<std::string, SectionKeys>>;
    for (const CatalogueKey& k : kKeys) {
      auto it = std::find_if(out->begin(), out->end(), [&](const auto& s) { return s.first == k.section; });
      if (it == out->end()) it = out->insert(out->end(), {std::string(k.section), {}});
      it->second.names.emplace_back(k.key);
      if (k.required) it->second.required.emplace_back(k.key);
    }
    return out;
  }();
  for (const auto& [name, keys] : *kSections)
    if (name == section) return keys;
  static const SectionKeys kNone;
  return kNone;
}

const yaml::Entry* FindEntry(const std::vector<yaml::Entry>& entries, std::string_view key) {
  for (const yaml::Entry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

// The entries of `node` (a map of `section`'s keys), or the first required key it lacks, named at `pos`.
Result<std::vector<yaml::Entry>> Section(yaml::Reader& r, const YAML::Node& node, std::string_view section,
                                         const std::string& where, const SourcePos& pos, bool check_required = true) {
  const SectionKeys& keys = KeysOf(section);
  RC_ASSIGN_OR_RETURN(auto entries, r.Entries(node, where, keys.names));
  if (std::string missing = yaml::Reader::Missing(entries, keys.required); check_required && !missing.empty())
    return At(pos, "missing required key '" + missing + "' in " + (where.empty() ? "the failure catalogue" : where));
  for (yaml::Entry& e : entries) e.name = where.empty() ? e.key : where + "." + e.key;
  return entries;
}

Result<FailureClass> ReadClass(const yaml::Reader& r, const yaml::Entry& e) {
  std::string s;
  RC_RETURN_IF_ERROR(r.String(e, s, "gpu, nic or node"));
  if (auto c = ParseFailureClass(s)) return *c;
  return r.Error(e, e.name + ": unknown failure class " + Quote(s) + "; known: gpu, nic, node");
}

// The optional per-class `shape:` map (absent classes keep what they have).
Status ReadShapes(yaml::Reader& r, const yaml::Entry& shape, FailureCatalogue& c) {
  RC_ASSIGN_OR_RETURN(auto entries, Section(r, shape.value, "shape", "shape", r.Pos(shape)));
  for (const yaml::Entry& e : entries) {
    double k = 0;
    RC_RETURN_IF_ERROR(r.Number(e, k));
    if (!(k > 0 && k <= 20)) return r.Error(e, e.name + " must be above 0 and at most 20 (1 = exponential)");
    c.shape[static_cast<int>(*ParseFailureClass(e.key))] = k;
  }
  return Status::Ok();
}

Status ReadReference(yaml::Reader& r, const yaml::Entry& reference, FailureCatalogue& c) {
  RC_ASSIGN_OR_RETURN(auto entries, Section(r, reference.value, "reference", "reference", r.Pos(reference)));
  for (const yaml::Entry& e : entries) {
    if (e.key == "gpus") RC_RETURN_IF_ERROR(r.Int(e, 1, 100'000'000, c.reference_gpus));
    if (e.key == "gpus_per_node") RC_RETURN_IF_ERROR(r.Int(e, 1, 1024, c.reference_gpus_per_node));
    if (e.key == "days") {
      RC_RETURN_IF_ERROR(r.Number(e, c.reference_days));
      if (!(c.reference_days > 0)) return r.Error(e, "reference.days must be above 0");
    }
  }
  return Status::Ok();
}

// The fitted rate's interval: two numbers, low <= high.
Status ReadInterval(yaml::Reader& r, const yaml::Entry& e, FailureCause& f) {
  RC_ASSIGN_OR_RETURN(auto items, r.Items(e, "a list of two numbers"));
  double v[2] = {0, 0};
  for (size_t i = 0; i < items.size() && i < 2; ++i)
    RC_RETURN_IF_ERROR(r.Number({e.key, e.name + "[" + std::to_string(i) + "]", e.key_node, items[i]}, v[i]));
  if (items.size() != 2 || v[0] < 0 || v[1] < v[0])
    return r.Error(e, e.name + " must be two numbers, low then high, e.g. [0.00031, 0.0012]");
  f.interval_low = v[0];
  f.interval_high = v[1];
  return Status::Ok();
}

// One cause. Its rate per component-hour is set here when it gives `rate` or `mtbf`, later (from the
// reference) when it gives `count`.
Result<FailureCause> ReadCause(yaml::Reader& r, const YAML::Node& node, const std::string& where, bool& by_count) {
  FailureCause f;
  RC_ASSIGN_OR_RETURN(auto entries, Section(r, node, "causes[]", where, r.Pos(node)));
  int given = 0;
  for (const yaml::Entry& e : entries) {
    if (e.key == "name") RC_RETURN_IF_ERROR(r.String(e, f.name));
    if (e.key == "count") RC_RETURN_IF_ERROR(r.Int(e, 0, 1'000'000'000, f.count));
    if (e.key == "rate") {
      double per_day = 0;
      RC_RETURN_IF_ERROR(r.Number(e, per_day));
      if (per_day < 0 || per_day > 1000) return r.Error(e, e.name + " must be from 0 to 1000 failures per component-day");
      f.rate_per_hour = per_day / 24;
    }
    if (e.key == "mtbf") {
      Duration mtbf{};
      RC_RETURN_IF_ERROR(r.Dur(e, mtbf));
      if (mtbf <= Duration{}) return r.Error(e, e.name + " must be longer than 0s (e.g. 1500d)");
      f.rate_per_hour = 3600 / mtbf.Seconds();
    }
    if (e.key == "count" || e.key == "rate" || e.key == "mtbf") {
      if (++given > 1) return r.Error(e.key_node, where + ": give one of count, rate and mtbf, not two");
      by_count = e.key == "count";
    }
    if (e.key == "class") {
      RC_ASSIGN_OR_RETURN(f.cls, ReadClass(r, e));
    }
    if (e.key == "injector") {
      RC_RETURN_IF_ERROR(r.String(e, f.injector));
      f.pos = r.Pos(e);
    }
    if (e.key == "xid") RC_RETURN_IF_ERROR(r.Int(e, 0, 1'000'000, f.xid));
    if (e.key == "repair") RC_RETURN_IF_ERROR(r.Dur(e, f.repair));
    if (e.key == "events") {
      int n = 0;
      RC_RETURN_IF_ERROR(r.Int(e, 0, 1'000'000'000, n));
      f.events = n;
    }
    if (e.key == "interval") RC_RETURN_IF_ERROR(ReadInterval(r, e, f));
  }
  if (given == 0) return At(r.Pos(node), where + ": give the cause's rate as count, rate or mtbf (e.g. rate: 0.00067)");
  return f;
}

Result<FailureCatalogue> ReadCatalogue(yaml::Reader& r, const YAML::Node& root) {
  FailureCatalogue c;
  RC_ASSIGN_OR_RETURN(auto top, Section(r, root, "", "", {r.file(), 1, 1}, false));
  // `counts_from: NAME` takes a shipped catalogue's reference and causes; this file sets the rest.
  const yaml::Entry* base = FindEntry(top, "counts_from");
  for (const char* key : {"name", "source", "causes"})
    if (FindEntry(top, key) == nullptr && !(base && std::string_view(key) == "causes"))
      return At({r.file(), 1, 1}, std::string("missing required key '") + key + "' in the failure catalogue");
  if (base) {
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
  if (items.empty()) return r.Error(*causes, "causes is empty; a failure catalogue needs at least one cause");
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string where = "causes[" + std::to_string(i) + "]";
    bool by_count = false;
    RC_ASSIGN_OR_RETURN(FailureCause f, ReadCause(r, items[i], where, by_count));
    for (const FailureCause& other : c.causes)
      if (other.name == f.name) return At(r.Pos(items[i]), where + ": a second cause named " + Quote(f.name));
    if (by_count) {
      if (c.reference_gpus <= 0)
        return At(r.Pos(items[i]), where + " gives a count, which needs reference: {gpus, gpus_per_node, days}");
      // One NIC per GPU in the reference cluster (H100 servers with 8 x 400G NICs).
      double population = f.cls == FailureClass::kNode
                              ? static_cast<double>(c.reference_gpus) / c.reference_gpus_per_node
                              : c.reference_gpus;
      f.rate_per_hour = f.count / (population * hours);
    }
    c.causes.push_back(f);
  }
  return c;
}

}  // namespace

const std::vector<CatalogueKey>& FailureCatalogueKeys() { return kKeys; }

double FailureCatalogue::ClassRatePerHour(FailureClass cls) const {
  double rate = 0;
  for (const FailureCause& c : causes)
    if (c.cls == cls) rate += c.rate_per_hour;
  return rate;
}

Result<FailureCatalogue> ParseFailureCatalogue(const std::string& text, const std::string& origin) {
  RC_ASSIGN_OR_RETURN(YAML::Node root, yaml::Parse(text, origin, kCatalogueFormat));
  yaml::Reader r(origin, kCatalogueFormat);
  auto read = ReadCatalogue(r, root);
  if (!read.ok()) return OneLine(read.status());
  FailureCatalogue c = std::move(*read);
  c.file = origin;
  if (c.causes.empty()) return Status::Invalid(origin + ": a failure catalogue needs at least one cause");
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

std::optional<FailureClass> ParseFailureClass(std::string_view name) {
  for (FailureClass c : kFailureClasses)
    if (name == FailureClassName(c)) return c;
  return std::nullopt;
}

std::vector<std::string> FailureCatalogueNames() { return EmbeddedNames(kFailureCatalogueText); }

bool IsCataloguePath(std::string_view s) {
  return s.ends_with(".yaml") || s.ends_with(".yml") || s.find('/') != std::string_view::npos;
}

std::optional<std::string_view> ShippedFailureCatalogueText(std::string_view name) {
  const EmbeddedText* t = FindEmbedded(kFailureCatalogueText, name);
  if (t == nullptr) return std::nullopt;
  return t->text;
}

Result<FailureCatalogue> LoadFailureCatalogue(const std::string& name) {
  if (IsCataloguePath(name)) {
    RC_ASSIGN_OR_RETURN(std::string text, ReadUserFile(name, {"failure catalogue", kMaxCatalogueBytes}));
    return ParseFailureCatalogue(text, name);
  }
  const EmbeddedText* t = FindEmbedded(kFailureCatalogueText, name);
  if (t == nullptr)
    return Status::NotFound("unknown failure catalogue " + Quote(name) + "; known: " + Join(FailureCatalogueNames()) +
                            ", or a catalogue file (a path ending in .yaml, docs/catalogue.md)");
  return ParseFailureCatalogue(std::string(t->text), std::string(t->file));
}

}  // namespace rackchaos::cluster
