// A synchronous training job as the simulator runs it.
#pragma once

#include <string>

#include "core/units.h"

namespace rackchaos::cluster {

struct JobConfig {
  std::string name;
  int gpus = 0;
  // Elastic: after a requeue the job may restart on as few as min_gpus GPUs (whole trays) when the
  // healer's policy allows shrinking, at a fixed global batch; 0 = not elastic.
  int min_gpus = 0;
  int tp = 1, pp = 1, dp = 1, ep = 1;
  Duration step_time = Duration::Seconds(10);  // one step at full speed, collectives included
  // Shares of a nominal step spent in collectives that are exposed (not overlapped with compute):
  // tensor-parallel traffic over NVLink, data-parallel traffic over the scale-out NICs.
  double nvlink_share = 0.10;    // [guess] typical TP exposure for dense LLM training
  double scaleout_share = 0.05;  // [guess] DP all-reduce left after overlap
  Duration checkpoint_interval = Duration::Minutes(30);
  Duration checkpoint_write = Duration::Seconds(30);
  Duration restart_overhead = Duration::Minutes(5);
  Duration collective_timeout = Duration::Minutes(10);  // NCCL watchdog default (600,000 ms)
};

}  // namespace rackchaos::cluster
