#include "runner/plan/plan_loader.h"

#include <string>
#include <vector>

#include "core/strings.h"
#include "core/user_file.h"
#include "runner/plan/plan_reader.h"
#include "runner/plan/selector.h"

namespace rackchaos::runner {
namespace {

using namespace plan_yaml;

Status ReadFaultField(Reader& r, const Field& f, const std::string& where, FaultSpec& fault) {
  if (f.key == "at") {
    fault.at_pos = r.Pos(f);
    return r.Read(f, fault.at);
  }
  if (f.key == "kind") {
    fault.kind_pos = r.Pos(f);
    return r.Read(f, fault.kind);
  }
  if (f.key == "for") {
    fault.for_pos = r.Pos(f);
    return r.Read(f, fault.duration.emplace());
  }
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
  RC_ASSIGN_OR_RETURN(auto params, r.Fields(f.value, "faults[].params", where + ".params", true));
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
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(items[i], "faults[]", where));
    RC_RETURN_IF_ERROR(r.Require(fields, fault.pos, "faults[]", where));
    for (const Field& f : fields) RC_RETURN_IF_ERROR(ReadFaultField(r, f, where, fault));
    faults.push_back(std::move(fault));
  }
  return Status::Ok();
}

// An item is a gate string, or a map {gate: "...", continuous: true, allow_empty: true}.
Status ReadExpect(Reader& r, const Field& field, std::vector<Expectation>& expect) {
  RC_ASSIGN_OR_RETURN(auto items, r.Items(field));
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string name = Indexed("expect", i);
    Field item{{name, name, field.key_node, items[i]}, nullptr};
    Expectation e{"", false, r.Pos(item)};
    if (items[i].IsMap()) {
      RC_ASSIGN_OR_RETURN(auto fields, r.Fields(items[i], "expect[]", item.key));
      RC_RETURN_IF_ERROR(r.Require(fields, e.pos, "expect[]", item.key));
      for (const Field& f : fields) {
        if (f.key == "gate") {
          e.pos = r.Pos(f);
          RC_RETURN_IF_ERROR(r.Read(f, e.text));
        } else if (f.key == "continuous") {
          RC_RETURN_IF_ERROR(r.Read(f, e.continuous));
        } else {
          RC_RETURN_IF_ERROR(r.Read(f, e.allow_empty));
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
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, "chaos.classes", "chaos.classes"));
  for (const Field& f : fields) {
    int& percent = f.key == "gpu" ? chaos.gpu_percent : f.key == "nic" ? chaos.nic_percent : chaos.node_percent;
    RC_RETURN_IF_ERROR(r.Read(f, percent));
  }
  return Status::Ok();
}

// `chaos.rates`: NAME -> {per_day: X} or {mtbf: D}, exactly one of the two.
Status ReadChaosRates(Reader& r, const Field& field, ChaosSpec& chaos) {
  RC_ASSIGN_OR_RETURN(auto names, r.Fields(field.value, "chaos.rates", "chaos.rates", /*open=*/true));
  for (const Field& n : names) {
    const std::string where = "chaos.rates." + n.key;
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(n.value, "chaos.rates.NAME", where));
    if (fields.size() != 1)
      return At(r.Pos(n.key_node), where + ": give per_day or mtbf (one of them), e.g. " + n.key + ": {per_day: 0.002}");
    ChaosSpec::Rate rate{n.key, 0, r.Pos(n.key_node)};
    if (fields[0].key == "per_day") {
      double per_day = 0;
      RC_RETURN_IF_ERROR(r.Read(fields[0], per_day));
      rate.per_hour = per_day / 24;
    } else {
      Duration mtbf{};
      RC_RETURN_IF_ERROR(r.Read(fields[0], mtbf));
      if (mtbf <= Duration{}) return At(r.Pos(fields[0]), where + ".mtbf must be longer than 0s (e.g. 1500d)");
      rate.per_hour = 3600 / mtbf.Seconds();
    }
    chaos.rates.push_back(std::move(rate));
  }
  return Status::Ok();
}

Status ReadChaos(Reader& r, const Field& field, ChaosSpec& chaos) {
  chaos.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, "chaos", "chaos"));
  RC_RETURN_IF_ERROR(r.Require(fields, chaos.pos, "chaos", "chaos"));
  for (const Field& f : fields) {
    if (f.key == "catalogue")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.catalogue));
    else if (f.key == "scale")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.scale));
    else if (f.key == "from")
      RC_RETURN_IF_ERROR((chaos.from_pos = r.Pos(f), r.Read(f, chaos.from)));
    else if (f.key == "until")
      RC_RETURN_IF_ERROR((chaos.until_pos = r.Pos(f), r.Read(f, chaos.until.emplace())));
    else if (f.key == "one_per_domain")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.one_per_domain));
    else if (f.key == "min_gap")
      RC_RETURN_IF_ERROR(r.Read(f, chaos.min_gap.emplace()));
    else if (f.key == "classes")
      RC_RETURN_IF_ERROR(ReadChaosClasses(r, f, chaos));
    else if (f.key == "rates")
      RC_RETURN_IF_ERROR(ReadChaosRates(r, f, chaos));
  }
  return Status::Ok();
}

Status ReadAbort(Reader& r, const Field& field, AbortSpec& abort) {
  abort.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, "safety.abort", "safety.abort"));
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
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, "safety", "safety"));
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
        const std::string name = Indexed("safety.allow", i);
        Field item{{name, name, f.key_node, items[i]}, nullptr};
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
  if (f.key == "duration") {
    plan.duration_pos = r.Pos(f);
    return r.Read(f, plan.duration.emplace());
  }
  if (f.key == "cluster") return ReadCluster(r, f, plan.cluster);
  if (f.key == "workload") return ReadWorkload(r, f, plan.jobs);
  if (f.key == "faults") return ReadFaults(r, f, plan.faults);
  if (f.key == "expect") return ReadExpect(r, f, plan.expect);
  if (f.key == "chaos") return ReadChaos(r, f, plan.chaos);
  if (f.key == "safety") return ReadSafety(r, f, plan.safety);
  plan.healer.pos = r.Pos(f);  // healer
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(f.value, "healer", "healer"));
  for (const Field& h : fields) {
    plan.healer.pos = r.Pos(h);
    RC_RETURN_IF_ERROR(r.Read(h, plan.healer.policy));
  }
  return Status::Ok();
}

// Walks the parsed document into `plan`.
Status Walk(const YAML::Node& root, Reader& r, Plan& plan) {
  const SourcePos start{r.file(), 1, 1};
  if (root.IsNull()) {
    return At(start, "the plan is empty; a plan is a map with at least a name, e.g. name: quickstart");
  }
  if (!root.IsMap()) {
    return At(r.Pos(root), std::string("the plan is ") + NodeKind(root) +
                               "; a plan is a map of keys such as name:, cluster:, workload:, faults:");
  }
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(root, "", "the plan"));
  RC_RETURN_IF_ERROR(r.Require(fields, r.Pos(root), "", "the plan"));
  for (const Field& f : fields) RC_RETURN_IF_ERROR(ReadTop(r, f, plan));
  return Status::Ok();
}

}  // namespace

Result<Plan> ParsePlan(const std::string& text, const std::string& path_for_messages) {
  if (text.size() > kMaxPlanBytes) {
    return Status::Invalid(path_for_messages + ": the plan is " + std::to_string(text.size()) + " bytes; a plan is at most " +
                           FormatBytes(kMaxPlanBytes));
  }
  RC_ASSIGN_OR_RETURN(YAML::Node root, yaml::Parse(text, path_for_messages, kPlanFormat));
  Plan plan;
  plan.path = path_for_messages;
  plan.text = text;
  Reader reader(path_for_messages);
  // Messages quote the plan's own values, which may hold newlines.
  RC_RETURN_IF_ERROR(OneLine(Walk(root, reader, plan)));
  RC_RETURN_IF_ERROR(CheckRelations(plan));
  return plan;
}

Result<Plan> LoadPlan(const std::string& path) {
  RC_ASSIGN_OR_RETURN(std::string text, ReadUserFile(path, {"plan", kMaxPlanBytes}));
  return ParsePlan(text, path);
}

}  // namespace rackchaos::runner
