// Lemons: parts that keep failing when nothing broke them on purpose. The rule (docs/policies.md):
//
// - An isolation of a part is *explained* when the run's metrics attribute it to an injected fault
//   (one of the run's correct isolations, table faulty_isolations): the plan broke that part, or
//   something it depends on, on purpose. Explained isolations never make a lemon: a nightly plan that
//   pulls the same tray every night isolates that tray every night, and says nothing about the tray.
// - A part has *lemon evidence* in a run when it was isolated there more often than injected faults
//   explain (isolations of it minus its explained isolations > 0): it failed beyond what was injected.
// - Only runs on real racks (backend other than "sim") give evidence. On the simulator every failure is
//   injected, chaos processes included, so an isolation no fault explains is the healer's mistake: it
//   counts against the healer's precision (false isolations), never against the part.
// - A lemon is a part (matched across runs by serial, by name when it has none) with evidence in at
//   least N runs (--lemon-runs, default 2).
//
// Runs stored before schema version 6 (no faulty_isolations rows although the metrics count correct
// isolations) give no evidence: nothing tells their explained isolations apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::reports {

struct RepeatOffender {
  std::string name, serial;
  std::vector<int64_t> runs;  // the runs with evidence against it, ascending
};

// Every lemon of the database, most runs first (then by serial); with `run`, only those with evidence
// in that run. Fails with the store's Status.
Result<std::vector<RepeatOffender>> ReadLemons(const ReportStore& store, int min_runs,
                                               std::optional<int64_t> run = std::nullopt);

// The same over the components listed in the connection's temp.history_subtree (reports/history.cpp
// fills it with a serial's subtree).
Result<std::vector<RepeatOffender>> ReadLemonsInSubtree(Db& db, int min_runs);

// "Lemons (...)" and one line per lemon (the first 20, then how many more); "" for none.
std::string RenderLemons(const std::vector<RepeatOffender>& lemons, int min_runs);

}  // namespace rackchaos::reports
