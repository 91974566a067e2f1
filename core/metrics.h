// Recovery and damage metrics: plain values computed from a run's events (healer/metrics.h) and
// stored and rendered by reports/. Definitions are in docs/metrics.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/units.h"

namespace rackchaos {

struct FaultMetrics {
  FaultId fault = kNoFault;
  std::string kind;
  std::string target;                 // component name, e.g. "r01.tray03.gpu2.nvlink5"
  Time injected{};
  std::optional<Time> reverted;
  std::optional<Duration> time_to_detect;   // first attributed detection - injection
  std::optional<Duration> time_to_isolate;  // first attributed isolation - injection
  std::optional<Duration> time_to_recover;  // every touched job back at full speed - injection
  int gpus_direct = 0;       // GPUs the fault itself made lose service or speed
  int gpus_collateral = 0;   // other GPUs idled: the rest of an interrupted job, healthy GPUs drained along
  int jobs_touched = 0;      // jobs slowed or interrupted
  int jobs_interrupted = 0;  // jobs that hung, failed or were restarted
  double gpu_hours_lost = 0; // job GPUs x (time not progressing + slowdown + work redone)
  Duration rework{};         // running time since the last checkpoint that was thrown away
  std::vector<std::string> isolated;  // components the healer took out for this fault
};

// What one fault did to one job.
struct JobImpact {
  FaultId fault = kNoFault;
  JobId job = kNoJob;
  std::string job_name;
  bool interrupted = false;
  Duration stalled{};        // time the job made no progress (hung, restarting, queued)
  Duration rework{};
  double slowdown_hours = 0; // wall hours lost to running slower than nominal
  double gpu_hours_lost = 0;
};

struct JobMetrics {
  JobId job = kNoJob;
  std::string name;
  int gpus = 0;
  Duration wall{};           // from first start to the end of the run
  Duration productive{};     // running time whose work was kept (training stopped for a checkpoint is not)
  double ettr = 0;           // productive / wall
  double goodput = 0;        // kept steps x nominal step time / wall
  int interruptions = 0;     // times it stopped while running or restarting
  double steps = 0;          // kept progress at the end
  Duration up{};             // running or restarting: when a failure on its parts stops it
  int failures = 0;          // faults that stopped it (hung, failed, requeued), each once
};

struct RunMetrics {
  std::vector<FaultMetrics> faults;
  std::vector<JobImpact> impacts;
  std::vector<JobMetrics> jobs;
  int isolations = 0;
  int correct_isolations = 0;      // isolated components that a fault really affected
  double precision = 1;            // correct / all isolations (1 when none)
  double recall = 1;               // faults with an isolation / faults that needed one (1 when none)
  std::vector<std::string> false_isolations;
  std::vector<std::string> missed_faults;  // faults that affected service and were never isolated
  std::vector<std::string> faulty_isolations;  // isolated components a fault really affected, in order
  int gpus_drained = 0;            // GPUs of the trays the healer drained (each drain counted)
  double drained_gpu_hours = 0;    // drained GPUs x time until resumed (or the end of the run)
};

}  // namespace rackchaos
