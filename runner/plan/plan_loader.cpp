#include "runner/plan/plan_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>

#include "runner/plan/plan_reader.h"
#include "runner/plan/selector.h"
#include "core/yaml_guard.h"

namespace rackchaos::runner {
namespace {

using namespace plan_yaml;

Status ReadFaultField(Reader& r, const Field& f, const std::string& where, FaultSpec& fault) {
  if (f.key == "at") return r.Read(f, fault.at);
  if (f.key == "kind") {
    fault.kind_pos = r.Pos(f);
    return r.Read(f, fault.kind);
  }
  if (f.key == "for") return r.Read(f, fault.duration.emplace());
  if (f.key == "target") {
    fault.target.pos = r.Pos(f);
    RC_RETURN_IF_ERROR(r.Read(f, fault.target.text));
    auto selector = ParseSelector(fault.target.text);
    return selector.ok() ? Status::Ok() : At(fault.target.pos, "target: " + selector.status().message());
  }
  if (f.key == "pick") {
    fault.pick_pos = r.Pos(f);
    RC_RETURN_IF_ERROR(r.Read(f, fault.pick));
    auto pick = ParsePick(fault.pick);
    return pick.ok() ? Status::Ok() : At(fault.pick_pos, "pick: " + pick.status().message());
  }
  // params: any keys; each value a scalar, kept as text for the injector to check.
  RC_ASSIGN_OR_RETURN(auto params, r.Fields(f.value, r.Pos(f), "faults[].params", where + ".params", true));
  for (const Field& p : params) {
    PlanValue value{"", r.Pos(p)};
    RC_RETURN_IF_ERROR(r.Scalar(p, value.text));
    fault.params.emplace(p.key, std::move(value));
  }
  return Status::Ok();
}

Status ReadFaults(Reader& r, const Field& field, std::vector<FaultSpec>& faults) {
  RC_ASSIGN_OR_RETURN(auto items, r.Items(field));
  for (size_t i = 0; i < items.size(); ++i) {
    FaultSpec fault;
    fault.pos = r.Pos(items[i]);
    const std::string where = Indexed("faults", i);
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(items[i], fault.pos, "faults[]", where));
    RC_RETURN_IF_ERROR(r.Require(fields, fault.pos, "faults[]", where));
    for (const Field& f : fields) RC_RETURN_IF_ERROR(ReadFaultField(r, f, where, fault));
    faults.push_back(std::move(fault));
  }
  return Status::Ok();
}

// An item is a gate string, or a map {gate: "...", continuous: true}.
Status ReadExpect(Reader& r, const Field& field, std::vector<Expectation>& expect) {
  RC_ASSIGN_OR_RETURN(auto items, r.Items(field));
  for (size_t i = 0; i < items.size(); ++i) {
    Field item{Indexed("expect", i), field.key_node, items[i], nullptr};
    Expectation e{"", false, r.Pos(item)};
    if (items[i].IsMap()) {
      RC_ASSIGN_OR_RETURN(auto fields, r.Fields(items[i], e.pos, "expect[]", item.key));
      RC_RETURN_IF_ERROR(r.Require(fields, e.pos, "expect[]", item.key));
      for (const Field& f : fields) {
        if (f.key == "gate") {
          e.pos = r.Pos(f);
          RC_RETURN_IF_ERROR(r.Read(f, e.text));
        } else {
          RC_RETURN_IF_ERROR(r.Read(f, e.continuous));
        }
      }
    } else {
      RC_RETURN_IF_ERROR(r.Scalar(item, e.text));
    }
    if (e.text.empty()) return At(e.pos, item.key + " is empty; write a gate such as \"ttr.max < 30m\"");
    expect.push_back(std::move(e));
  }
  return Status::Ok();
}

Status ReadChaosClasses(Reader& r, const Field& field, ChaosSpec& chaos) {
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, r.Pos(field), "chaos.classes", "chaos.classes"));
  for (const Field& f : fields) {
    int& percent = f.key == "gpu" ? chaos.gpu_percent : f.key == "nic" ? chaos.nic_percent : chaos.node_percent;
    RC_RETURN_IF_ERROR(r.Read(f, percent));
  }
  return Status::Ok();
}

Status ReadChaos(Reader& r, const Field& field, ChaosSpec& chaos) {
  chaos.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, chaos.pos, "chaos", "chaos"));
  RC_RETURN_IF_ERROR(r.Require(fields, chaos.pos, "chaos", "chaos"));
  for (const Field& f : fields) {
    if (f.key == "catalogue")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.catalogue));
    else if (f.key == "scale")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.scale));
    else if (f.key == "from")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.from));
    else if (f.key == "until")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.until.emplace()));
    else if (f.key == "one_per_domain")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.one_per_domain));
    else if (f.key == "min_gap")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.min_gap.emplace()));
    else if (f.key == "classes")
      RC_RETURN_IF_ERROR(ReadChaosClasses(r, f, chaos));
  }
  return Status::Ok();
}

Status ReadAbort(Reader& r, const Field& field, AbortSpec& abort) {
  abort.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, abort.pos, "safety.abort", "safety.abort"));
  for (const Field& f : fields) {
    std::optional<int>& limit = f.key == "gpus_offline"      ? abort.gpus_offline
                                : f.key == "gpu_temperature" ? abort.gpu_temperature
                                : f.key == "jobs_down"       ? abort.jobs_down
                                                             : abort.faults_at_once;
    RC_RETURN_IF_ERROR(r.Read(f, limit.emplace()));
  }
  return Status::Ok();
}

Status ReadSafety(Reader& r, const Field& field, SafetySpec& safety) {
  safety.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, safety.pos, "safety", "safety"));
  for (const Field& f : fields) {
    if (f.key == "max_faults_at_once") {
      RC_RETURN_IF_ERROR(r.Read(f, safety.max_faults_at_once.emplace()));
    } else if (f.key == "max_gpus_impaired") {
      RC_RETURN_IF_ERROR(r.Read(f, safety.max_gpus_impaired.emplace()));
    } else if (f.key == "abort") {
      RC_RETURN_IF_ERROR(ReadAbort(r, f, safety.abort));
    } else {  // allow
      RC_ASSIGN_OR_RETURN(auto items, r.Items(f));
      auto& allow = safety.allow.emplace();
      for (size_t i = 0; i < items.size(); ++i) {
        Field item{Indexed("safety.allow", i), f.key_node, items[i], nullptr};
        PlanValue kind{"", r.Pos(item)};
        RC_RETURN_IF_ERROR(r.Scalar(item, kind.text));
        allow.push_back(std::move(kind));
      }
    }
  }
  return Status::Ok();
}

Status ReadTop(Reader& r, const Field& f, Plan& plan) {
  if (f.key == "name") return r.Read(f, plan.name);
  if (f.key == "description") return r.Scalar(f, plan.description);
  if (f.key == "seed") return r.Read(f, plan.seed);
  if (f.key == "duration") return r.Read(f, plan.duration.emplace());
  if (f.key == "cluster") return ReadCluster(r, f, plan.cluster);
  if (f.key == "workload") return ReadWorkload(r, f, plan.jobs);
  if (f.key == "faults") return ReadFaults(r, f, plan.faults);
  if (f.key == "expect") return ReadExpect(r, f, plan.expect);
  if (f.key == "chaos") return ReadChaos(r, f, plan.chaos);
  if (f.key == "safety") return ReadSafety(r, f, plan.safety);
  plan.healer.pos = r.Pos(f);  // healer
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(f.value, plan.healer.pos, "healer", "healer"));
  for (const Field& h : fields) {
    plan.healer.pos = r.Pos(h);
    RC_RETURN_IF_ERROR(r.Read(h, plan.healer.policy));
  }
  return Status::Ok();
}

// Parses the YAML and walks it; yaml-cpp reports problems by throwing, so this is where that stops.
Status Walk(const std::string& text, Reader& r, Plan& plan) {
  const SourcePos start{r.file(), 1, 1};
  try {
    // YAML::Load, not LoadAll: LoadAll in yaml-cpp 0.7 loops forever on input such as ","
    // (jbeder/yaml-cpp#1040); CheckOneDocument has already refused a second document.
    const YAML::Node root = YAML::Load(text);
    if (root.IsNull()) {
      return At(start, "the plan is empty; a plan is a map with at least a name, e.g. name: quickstart");
    }
    if (!root.IsMap()) {
      return At(r.Pos(root), std::string("the plan is ") + NodeKind(root) +
                                 "; a plan is a map of keys such as name:, cluster:, workload:, faults:");
    }
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(root, start, "", "the plan"));
    RC_RETURN_IF_ERROR(r.Require(fields, r.Pos(root), "", "the plan"));
    for (const Field& f : fields) RC_RETURN_IF_ERROR(ReadTop(r, f, plan));
    return Status::Ok();
  } catch (const YAML::ParserException& e) {
    SourcePos pos = e.mark.is_null() ? start : SourcePos{r.file(), e.mark.line + 1, e.mark.column + 1};
    return At(pos,
              "YAML syntax error: " + e.msg + "; check the indentation (spaces, not tabs), quotes and brackets here");
  } catch (const std::exception& e) {
    return At(start, std::string("could not read the YAML: ") + e.what());
  }
}

}  // namespace

Result<Plan> ParsePlan(const std::string& text, const std::string& path_for_messages) {
  if (text.size() > kMaxPlanBytes) {
    return Status::Invalid(path_for_messages + ": the plan is " + std::to_string(text.size()) +
                           " bytes; plans are limited to 16 MiB");
  }
  RC_RETURN_IF_ERROR(GuardYamlText(text, path_for_messages, {"plan", kMaxPlanDepth, 5}));
  Plan plan;
  plan.path = path_for_messages;
  plan.text = text;
  Reader reader(path_for_messages);
  // Messages quote the plan's own values, which may hold newlines.
  RC_RETURN_IF_ERROR(OneLine(Walk(text, reader, plan)));
  return plan;
}

Result<Plan> LoadPlan(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return Status::NotFound(path + ": no such plan file");
  if (std::filesystem::is_directory(status)) return Status::IoError(path + ": is a directory, not a plan file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Status::IoError(path + ": cannot read: " + ec.message());
  if (size > kMaxPlanBytes) {
    return Status::IoError(path + ": the file is " + std::to_string(size) + " bytes; plans are limited to 16 MiB");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) {
    if (size != 0) return Status::IoError(path + ": cannot read the file");
  }
  return ParsePlan(text.str(), path);
}

}  // namespace rackchaos::runner
