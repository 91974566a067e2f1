// RenderPrometheus: the run's metrics in the Prometheus text exposition format, for a
// node_exporter textfile collector or a Pushgateway.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "reports/escape.h"
#include "reports/render.h"

namespace rackchaos::reports {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Prometheus spells the non-finite values +Inf, -Inf and NaN; %.15g covers every finite one.
std::string Value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return JsonNumber(v);
}

// One metric family: its samples are collected first so that HELP and TYPE come once, right before
// them, and a family with no samples prints nothing.
class Family {
 public:
  Family(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}

  void Add(const Labels& labels, double value) {
    std::string line = name_;
    if (!labels.empty()) {
      line += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) line += ',';
        line += labels[i].first + "=\"" + PromLabelValue(labels[i].second) + "\"";
      }
      line += '}';
    }
    samples_ += line + " " + Value(value) + "\n";
  }

  std::string Text() const {
    if (samples_.empty()) return "";
    return "# HELP " + name_ + " " + help_ + "\n# TYPE " + name_ + " gauge\n" + samples_;
  }

 private:
  std::string name_, help_, samples_;
};

Labels FaultLabels(const std::string& run, const FaultMetrics& f) {
  return {{"run", run}, {"fault", std::to_string(f.fault)}, {"kind", f.kind}, {"target", f.target}};
}

std::string FaultFamilies(const std::string& run, const RunMetrics& m) {
  Family ttd("rackchaos_fault_time_to_detect_seconds", "Injection to first attributed detection.");
  Family tti("rackchaos_fault_time_to_isolate_seconds", "Injection to first attributed isolation.");
  Family ttr("rackchaos_fault_time_to_recover_seconds",
             "Injection until every touched job ran at full speed again.");
  Family recovered("rackchaos_fault_recovered", "1 if the fault's jobs recovered, else 0.");
  Family gpus("rackchaos_fault_blast_radius_gpus", "GPUs that lost service or speed, by scope.");
  Family jobs("rackchaos_fault_jobs_touched", "Jobs slowed or interrupted by the fault.");
  Family interrupted("rackchaos_fault_jobs_interrupted", "Jobs hung, failed or restarted by the fault.");
  Family hours("rackchaos_fault_gpu_hours_lost", "Job GPU-hours lost to the fault.");
  Family rework("rackchaos_fault_rework_seconds", "Running time thrown away since the last checkpoint.");
  for (const FaultMetrics& f : m.faults) {
    Labels l = FaultLabels(run, f);
    if (f.time_to_detect) ttd.Add(l, f.time_to_detect->Seconds());
    if (f.time_to_isolate) tti.Add(l, f.time_to_isolate->Seconds());
    if (f.time_to_recover) ttr.Add(l, f.time_to_recover->Seconds());
    recovered.Add(l, f.time_to_recover ? 1 : 0);
    Labels direct = l, collateral = l;
    direct.push_back({"scope", "direct"});
    collateral.push_back({"scope", "collateral"});
    gpus.Add(direct, f.gpus_direct);
    gpus.Add(collateral, f.gpus_collateral);
    jobs.Add(l, f.jobs_touched);
    interrupted.Add(l, f.jobs_interrupted);
    hours.Add(l, f.gpu_hours_lost);
    rework.Add(l, f.rework.Seconds());
  }
  std::string out;
  for (const Family* f : {&ttd, &tti, &ttr, &recovered, &gpus, &jobs, &interrupted, &hours, &rework}) {
    out += f->Text();
  }
  return out;
}

std::string JobFamilies(const std::string& run, const RunMetrics& m) {
  Family ettr("rackchaos_job_ettr_ratio", "Effective training time ratio: productive / wall time.");
  Family goodput("rackchaos_job_goodput_ratio", "Kept steps times nominal step time over wall time.");
  Family interruptions("rackchaos_job_interruptions", "Times the job was interrupted.");
  for (const JobMetrics& j : m.jobs) {
    Labels l = {{"run", run}, {"job", j.name}};
    ettr.Add(l, j.ettr);
    goodput.Add(l, j.goodput);
    interruptions.Add(l, j.interruptions);
  }
  return ettr.Text() + goodput.Text() + interruptions.Text();
}

std::string RunFamilies(const RunReport& r, const std::string& run) {
  const RunMetrics& m = r.metrics;
  Labels l = {{"run", run}};
  Family info("rackchaos_run_info", "The run's identity; the value is always 1.");
  info.Add({{"run", run}, {"plan", r.run.info.plan_name}, {"plan_hash", r.run.info.plan_hash},
            {"seed", std::to_string(r.run.info.seed)}, {"backend", r.run.info.backend},
            {"version", r.run.info.version}, {"status", r.run.status}}, 1);
  Family passed("rackchaos_run_passed", "1 if the run passed, else 0.");
  passed.Add(l, r.run.status == "passed" ? 1 : 0);
  Family precision("rackchaos_healer_precision_ratio", "Correct isolations over all isolations.");
  precision.Add(l, m.precision);
  Family recall("rackchaos_healer_recall_ratio", "Faults isolated over faults that needed isolation.");
  recall.Add(l, m.recall);
  Family isolations("rackchaos_healer_isolations", "Isolations by outcome.");
  isolations.Add({{"run", run}, {"outcome", "correct"}}, m.correct_isolations);
  isolations.Add({{"run", run}, {"outcome", "false"}}, static_cast<double>(m.false_isolations.size()));
  Family missed("rackchaos_healer_missed_faults", "Faults that affected service and were never isolated.");
  missed.Add(l, static_cast<double>(m.missed_faults.size()));
  return info.Text() + passed.Text() + precision.Text() + recall.Text() + isolations.Text() +
         missed.Text();
}

std::string GateFamilies(const std::string& run, const std::vector<GateRow>& gates) {
  Family passed("rackchaos_expectation_passed", "1 if the expectation held, else 0.");
  Family actual("rackchaos_expectation_actual", "The measured value the expectation was checked against.");
  for (const GateRow& g : gates) {
    Labels l = {{"run", run}, {"expectation", g.text}, {"metric", g.metric}};
    passed.Add(l, g.passed ? 1 : 0);
    actual.Add(l, g.actual);
  }
  return passed.Text() + actual.Text();
}

}  // namespace

std::string RenderPrometheus(const RunReport& report) {
  const std::string run = std::to_string(report.run.id);
  return RunFamilies(report, run) + FaultFamilies(run, report.metrics) +
         JobFamilies(run, report.metrics) + GateFamilies(run, report.gates);
}

}  // namespace rackchaos::reports
