// The plan's cluster (models, regions, spares, fabric) and workload (jobs) sections, read against the
// plan key table with runner/plan/plan_reader.h.
#include <string>
#include <vector>

#include "runner/plan/plan_reader.h"

namespace rackchaos::runner::plan_yaml {
namespace {

// A spares map ({racks: N}) of the cluster or of one region.
Status ReadSpares(Reader& r, const Field& f, const std::string& section, int& racks, SourcePos& pos) {
  pos = r.Pos(f);
  RC_ASSIGN_OR_RETURN(auto spares, r.Fields(f.value, section, section));
  RC_RETURN_IF_ERROR(r.Require(spares, pos, section, section));
  for (const Field& s : spares) {  // only "racks"
    RC_RETURN_IF_ERROR(r.Read(s, racks));
    pos = r.Pos(s);
  }
  return Status::Ok();
}

bool RegionNameOk(const std::string& name) {
  const bool word = !name.empty() && name[0] >= 'a' && name[0] <= 'z' &&
                    std::all_of(name.begin(), name.end(), [](char c) {
                      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
                    });
  const bool rack_like = name.size() > 1 && name[0] == 'r' &&
                         std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
  return word && !rack_like;
}

// cluster.regions: a list of {name, racks, spares}; names unique; `racks` becomes their sum.
Status ReadRegions(Reader& r, const Field& field, ClusterSpec& cluster) {
  cluster.regions_pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto items, r.Items(field));
  if (items.empty())
    return At(cluster.regions_pos, "regions is empty; give at least one, e.g. [{name: east, racks: 2}]");
  std::map<std::string, SourcePos> names;
  for (size_t i = 0; i < items.size(); ++i) {
    RegionPlan region;
    region.pos = r.Pos(items[i]);
    const std::string where = Indexed("cluster.regions", i);
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(items[i], "cluster.regions[]", where));
    RC_RETURN_IF_ERROR(r.Require(fields, region.pos, "cluster.regions[]", where));
    for (const Field& f : fields) {
      if (f.key == "name") {
        RC_RETURN_IF_ERROR(r.Read(f, region.name));
        if (!RegionNameOk(region.name))
          return At(r.Pos(f), where + ".name '" + region.name +
                                  "' is not a region name; use a lowercase word of "
                                  "letters, digits, '-' or '_' that is not a rack name (e.g. east, eu-west)");
        auto [first, inserted] = names.emplace(region.name, r.Pos(f));
        if (!inserted)
          return At(r.Pos(f), "duplicate region name '" + region.name + "' (first at " + first->second.ToString() +
                                  "); region names must be unique");
      } else if (f.key == "racks") {
        RC_RETURN_IF_ERROR(r.Read(f, region.racks));
      } else {
        RC_RETURN_IF_ERROR(ReadSpares(r, f, "cluster.regions[].spares", region.spare_racks, region.spares_pos));
      }
    }
    cluster.regions.push_back(std::move(region));
  }
  return Status::Ok();
}

}  // namespace

Status ReadCluster(Reader& r, const Field& field, ClusterSpec& cluster) {
  cluster.pos = r.Pos(field);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, "cluster", "cluster"));
  for (const Field& f : fields) {
    if (f.key == "model")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.model));
    else if (f.key == "racks") {
      RC_RETURN_IF_ERROR(r.Read(f, cluster.racks));
      cluster.racks_pos = r.Pos(f);
    } else if (f.key == "regions")
      RC_RETURN_IF_ERROR(ReadRegions(r, f, cluster));
    else if (f.key == "region_link_gbytes_per_s")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.region_link_gbytes_per_s));
    else if (f.key == "region_link_background_percent")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.region_link_background_percent));
    else if (f.key == "object_store_gbytes_per_s")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.object_store_gbytes_per_s));
    else if (f.key == "spare_trays")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.spare_trays));
    else if (f.key == "inventory")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.inventory));
    else if (f.key == "nvlink_mode")
      RC_RETURN_IF_ERROR(r.Read(f, cluster.nvlink_mode));
    else if (f.key == "fabric") {
      RC_ASSIGN_OR_RETURN(auto fabric, r.Fields(f.value, "cluster.fabric", "cluster.fabric"));
      RC_RETURN_IF_ERROR(r.Require(fabric, r.Pos(f), "cluster.fabric", "cluster.fabric"));
      for (const Field& t : fabric) RC_RETURN_IF_ERROR(r.Read(t, cluster.fabric_tiers));  // only "tiers"
    } else if (f.key == "spares") {
      RC_RETURN_IF_ERROR(ReadSpares(r, f, "cluster.spares", cluster.spare_racks, cluster.spares_pos));
    }
  }
  if (cluster.regions.empty()) return Status::Ok();
  int64_t sum = 0;
  for (const RegionPlan& region : cluster.regions) sum += region.racks;
  if (sum > 100000)
    return At(cluster.regions_pos, "the regions hold " + std::to_string(sum) + " racks; at most 100000");
  if (cluster.racks_pos.line > 0 && cluster.racks != sum)
    return At(cluster.racks_pos, "racks is " + std::to_string(cluster.racks) + " but the regions hold " +
                                     std::to_string(sum) + "; leave racks out or make it their sum");
  cluster.racks = static_cast<int>(sum);
  return Status::Ok();
}

namespace {

// The members the keys of `parallelism` and `collectives` set (the key table lists the same keys).
struct IntKey {
  std::string_view key;
  int JobSpec::*member;
};
constexpr IntKey kDegrees[] = {{"tp", &JobSpec::tp}, {"pp", &JobSpec::pp}, {"dp", &JobSpec::dp}, {"ep", &JobSpec::ep}};
constexpr IntKey kShares[] = {
    {"tp", &JobSpec::tp_pct}, {"dp", &JobSpec::dp_pct}, {"ep", &JobSpec::ep_pct}, {"pp", &JobSpec::pp_pct}};

// Reads a map of integer keys into their members; a key missing from `keys` is a programmer error
// (Fields() has already refused keys the key table does not list), reported, not written anywhere.
Status ReadInts(Reader& r, const Field& f, std::string_view section, const std::string& where,
                std::span<const IntKey> keys, JobSpec& job) {
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(f.value, std::string(section), where));
  for (const Field& k : fields) {
    auto it = std::find_if(keys.begin(), keys.end(), [&](const IntKey& m) { return m.key == k.key; });
    if (it == keys.end()) return At(r.Pos(k), "internal: no member for key '" + k.key + "' in " + where);
    RC_RETURN_IF_ERROR(r.Read(k, job.*(it->member)));
  }
  return Status::Ok();
}

Status ReadJobMaps(Reader& r, const Field& f, const std::string& where, JobSpec& job) {
  if (f.key == "parallelism") {
    RC_RETURN_IF_ERROR(ReadInts(r, f, "workload.jobs[].parallelism", where + ".parallelism", kDegrees, job));
  } else if (f.key == "collectives") {
    job.collectives_pos = r.Pos(f);
    RC_RETURN_IF_ERROR(ReadInts(r, f, "workload.jobs[].collectives", where + ".collectives", kShares, job));
  } else if (f.key == "elastic") {
    job.elastic_pos = r.Pos(f);
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(f.value, "workload.jobs[].elastic", where + ".elastic"));
    RC_RETURN_IF_ERROR(r.Require(fields, job.elastic_pos, "workload.jobs[].elastic", where + ".elastic"));
    for (const Field& e : fields) {  // only "min_gpus"
      RC_RETURN_IF_ERROR(r.Read(e, job.min_gpus));
      job.elastic_pos = r.Pos(e);
    }
  } else {
    RC_ASSIGN_OR_RETURN(auto fields, r.Fields(f.value, "workload.jobs[].checkpoint", where + ".checkpoint"));
    for (const Field& c : fields) {
      if (c.key == "size_gb") {
        job.checkpoint_pos = r.Pos(c);
        RC_RETURN_IF_ERROR(r.Read(c, job.checkpoint_size_gb));
        continue;
      }
      if (c.key == "copy_time") {
        RC_RETURN_IF_ERROR(r.Read(c, job.checkpoint_copy));
        continue;
      }
      // interval, write_time, blocking: their positions for the checks of runner/spec/validate.cpp
      const bool interval = c.key == "interval", write = c.key == "write_time";
      (interval ? job.checkpoint_interval_pos : write ? job.checkpoint_write_pos : job.checkpoint_blocking_pos) = r.Pos(c);
      RC_RETURN_IF_ERROR(r.Read(c, interval ? job.checkpoint_interval : write ? job.checkpoint_write : job.checkpoint_blocking));
    }
  }
  return Status::Ok();
}

Result<JobSpec> ReadJob(Reader& r, const YAML::Node& node, const std::string& where) {
  JobSpec job;
  job.pos = r.Pos(node);
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(node, "workload.jobs[]", where));
  RC_RETURN_IF_ERROR(r.Require(fields, job.pos, "workload.jobs[]", where));
  SourcePos parallelism_pos = job.pos;
  for (const Field& f : fields) {
    if (f.key == "name")
      RC_RETURN_IF_ERROR(r.Read(f, job.name));
    else if (f.key == "gpus")
      RC_RETURN_IF_ERROR(r.Read(f, job.gpus));
    else if (f.key == "step_time")
      RC_RETURN_IF_ERROR(r.Read(f, job.step_time));
    else if (f.key == "restart_overhead")
      RC_RETURN_IF_ERROR(r.Read(f, job.restart_overhead));
    else if (f.key == "collective_timeout")
      RC_RETURN_IF_ERROR(r.Read(f, job.collective_timeout));
    else if (f.key == "region") {
      job.region.pos = r.Pos(f);
      RC_RETURN_IF_ERROR(r.Read(f, job.region.text));
    } else if (f.key == "input_from") {
      std::string from;
      RC_RETURN_IF_ERROR(r.Read(f, from));
      if (from != "cache" && from != "object_store")
        return At(r.Pos(f), "input_from '" + from + "' is not a source; valid: cache, object_store");
      job.input_from_object_store = from == "object_store";
    } else if (f.key == "input_mb_per_s") {
      RC_RETURN_IF_ERROR(r.Read(f, job.input_mb_per_s));
      job.input_pos = r.Pos(f);
    } else
      RC_RETURN_IF_ERROR(ReadJobMaps(r, f, where, job));
    if (f.key == "parallelism") {
      parallelism_pos = r.Pos(f);
      job.has_parallelism = true;
    }
  }
  job.parallelism_pos = parallelism_pos;  // validate.cpp checks the degrees (cluster::CheckGroups) there
  if (job.min_gpus > job.gpus)
    return At(job.elastic_pos, "elastic.min_gpus " + std::to_string(job.min_gpus) + " is more than the job's gpus " +
                                   std::to_string(job.gpus) + "; choose 1.." + std::to_string(job.gpus));
  return job;
}

}  // namespace

Status ReadWorkload(Reader& r, const Field& field, std::vector<JobSpec>& jobs) {
  RC_ASSIGN_OR_RETURN(auto fields, r.Fields(field.value, "workload", "workload"));
  std::map<std::string, SourcePos> names;
  for (const Field& f : fields) {  // only "jobs"
    RC_ASSIGN_OR_RETURN(auto items, r.Items(f));
    for (size_t i = 0; i < items.size(); ++i) {
      RC_ASSIGN_OR_RETURN(JobSpec job, ReadJob(r, items[i], Indexed("workload.jobs", i)));
      auto [first, inserted] = names.emplace(job.name, job.pos);
      if (!inserted) {
        return At(job.pos, "duplicate job name '" + job.name + "' (first at " + first->second.ToString() +
                               "); job names must be unique");
      }
      jobs.push_back(std::move(job));
    }
  }
  return Status::Ok();
}

}  // namespace rackchaos::runner::plan_yaml
