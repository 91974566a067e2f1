// `rackchaos replay INCIDENT... --cluster PLAN_OR_INVENTORY [--host NODE] [--healer POLICY] [--export plan.yaml]`:
// imports the incident's logs, rebuilds its faults on the simulated cluster at the recorded offsets,
// runs them with the chosen healer policy, prints what happened in the incident next to what the
// policy did (docs/replay.md), and stores the imported events with the run (reports/incident_store.h).
// An incident with no fault to replay is refused (exit 2) with the reason, never run empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rackchaos::runner {

struct ReplayArgs {
  std::vector<std::string> incidents;  // log files ("-" = standard input)
  std::string cluster;                 // a plan (its cluster and workload) or a site inventory
  std::string healer;                  // policy override; empty = the plan's, else default
  std::string gpu_map;                 // optional --gpu-map file
  std::string export_path;             // optional: write the replay plan here
  std::string db = "rackchaos.db";
  std::optional<int> year;  // for stamps without a year
  std::string boot_time;    // ISO time plain dmesg uptimes count from; empty = their own axis
  std::string tz = "UTC";   // zone of stamps that print none: UTC, +02:00, Europe/Berlin
  // --host: "NODE" names the host of every kernel or NCCL line that prints none; "FILE=NODE" (FILE
  // as given in `incidents`) that of one file's lines.
  std::vector<std::string> hosts;
  std::optional<uint64_t> seed;
  std::string command_line;
  bool quiet = false;
  bool verbose = false;  // -v: every pattern not understood, every event not replayed, every requeue
};

// Exit codes as core/exit_code.h: 0 replayed, 2 bad input (unreadable file, bad map, a plan that
// does not validate, --host naming no incident file, nothing to replay), 3 infrastructure (report store).
int CmdReplay(const ReplayArgs& args);

}  // namespace rackchaos::runner
