// The replay as plan text: ReplayPlanYaml and the default workload (runner/replay/replay.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runner/replay/replay.h"

namespace rackchaos::runner {
namespace {

std::string Secs(double s) { return std::to_string(static_cast<int64_t>(std::llround(std::max(0.0, s)))) + "s"; }
std::string Secs(Duration d) { return Secs(d.Seconds()); }

// YAML double-quoted scalar: safe for any text from a log.
std::string YamlQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string CommentText(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
  return out;
}

// The cluster section: the model, racks or regions (with their spare racks and the link between them).
void ClusterYaml(std::ostream& y, const ClusterSpec& c) {
  y << "cluster:\n  model: " << YamlQuote(c.model) << "\n";
  if (c.regions.empty()) y << "  racks: " << c.racks << "\n";
  else {
    y << "  regions:\n";
    for (const RegionPlan& r : c.regions) {
      y << "    - {name: " << YamlQuote(r.name) << ", racks: " << r.racks;
      if (r.spare_racks >= 0) y << ", spares: {racks: " << r.spare_racks << "}";
      y << "}\n";
    }
    y << "  region_link_gbytes_per_s: " << c.region_link_gbytes_per_s << "\n  object_store_gbytes_per_s: "
      << c.object_store_gbytes_per_s << "\n";
    if (c.region_link_background_percent > 0)
      y << "  region_link_background_percent: " << c.region_link_background_percent << "\n";
  }
  if (c.spare_racks > 0) y << "  spares: {racks: " << c.spare_racks << "}\n";
  y << "  spare_trays: " << c.spare_trays << "\n\n";
}

// One job of workload.jobs, with its home region, input and far checkpoint copy when it has them.
void JobYaml(std::ostream& y, const JobSpec& j) {
  y << "    - name: " << YamlQuote(j.name) << "\n      gpus: " << j.gpus << "\n      parallelism: {tp: " << j.tp
    << ", pp: " << j.pp << ", dp: " << (j.dp ? j.dp : j.gpus / std::max(1, j.tp * j.pp)) << ", ep: " << j.ep
    << "}\n      step_time: " << Secs(j.step_time) << "\n      checkpoint: {interval: " << Secs(j.checkpoint_interval)
    << ", write_time: " << Secs(j.checkpoint_write);
  if (j.checkpoint_copy > Duration{}) y << ", copy_time: " << Secs(j.checkpoint_copy);
  if (j.checkpoint_size_gb > 0) y << ", size_gb: " << j.checkpoint_size_gb;
  y << "}\n      restart_overhead: " << Secs(j.restart_overhead) << "\n      collective_timeout: "
    << Secs(j.collective_timeout) << "\n";
  if (j.min_gpus > 0) y << "      elastic: {min_gpus: " << j.min_gpus << "}\n";
  if (!j.region.text.empty()) y << "      region: " << YamlQuote(j.region.text) << "\n";
  if (j.input_mb_per_s > 0) y << "      input_mb_per_s: " << j.input_mb_per_s << "\n";
  if (j.input_from_object_store) y << "      input_from: object_store\n";
}

}  // namespace

JobSpec DefaultReplayJob(const cluster::Topology& topo) {
  int gpus = 0, per_tray = 1;
  for (ComponentId tray : topo.trays()) {
    if (topo.at(tray).spare) continue;
    per_tray = std::max<int>(1, static_cast<int>(topo.GpusOfTray(tray).size()));
    gpus += static_cast<int>(topo.GpusOfTray(tray).size());
  }
  JobSpec job;
  job.name = "replay-job";
  job.gpus = gpus;
  job.tp = per_tray;
  job.dp = gpus / per_tray;
  job.step_time = Duration::Seconds(6);
  return job;
}

std::string ReplayPlanYaml(const ReplayTimeline& t, const ReplayPlanOptions& o) {
  std::ostringstream y;
  for (const auto& c : o.comments) y << "# " << CommentText(c) << "\n";
  y << "name: " << YamlQuote(o.name) << "\n";
  if (!o.description.empty()) y << "description: " << YamlQuote(o.description) << "\n";
  y << "seed: " << o.seed << "\n";
  y << "duration: " << Secs(o.lead.Seconds() + t.span + o.tail.Seconds()) << "\n\n";
  ClusterYaml(y, o.cluster);
  y << "workload:\n  jobs:\n";
  for (const JobSpec& j : o.jobs) JobYaml(y, j);
  y << "\nfaults:" << (t.faults.empty() ? " []\n" : "\n");
  for (const ReplayFault& f : t.faults) {
    y << "  # " << CommentText(f.source);
    if (f.follow_ups) y << " (+" << f.follow_ups << " follow-up event(s))";
    for (const std::string& c : f.consequences) y << "; caused " << CommentText(c);
    y << "\n  - at: " << Secs(o.lead.Seconds() + f.at) << "\n    kind: " << YamlQuote(f.kind)
      << "\n    target: " << YamlQuote(f.target) << "\n";
    if (!f.params.empty()) {
      y << "    params: {";
      bool first = true;
      for (const auto& [k, v] : f.params) {
        y << (first ? "" : ", ") << YamlQuote(k) << ": " << YamlQuote(v);
        first = false;
      }
      y << "}\n";
    }
    if (f.end) y << "    for: " << Secs(std::max(1.0, *f.end - f.at)) << "\n";
  }
  y << "\nhealer:\n  policy: " << YamlQuote(o.healer) << "\n";
  return y.str();
}

}  // namespace rackchaos::runner
