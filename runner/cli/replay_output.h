// What `rackchaos replay` prints (runner/cli/replay_cmd.h): the import (counts, patterns not
// understood, events not replayed), the incident next to the simulated healer, the site's drains,
// requeues and kills, and NCCL's view of the job. docs/replay.md shows a sample.
#pragma once

#include <iosfwd>
#include <string>

#include "core/metrics.h"
#include "runner/incident/incident.h"
#include "runner/replay/replay.h"
#include "runner/spec/validate.h"

namespace rackchaos::runner {

// `verbose`: every pattern kept and every event not replayed that was listed, instead of the first few.
void PrintImport(std::ostream& out, const incident::Incident& inc, const ReplayTimeline& t, bool verbose);

// The fault table: when each fault began, what the site did (drained, resumed) and what the policy did.
void PrintSideBySide(std::ostream& out, const ReplayTimeline& t, const RunSpec& spec, const RunMetrics& m);

// The job's side: requeues and kills with their job ids, NCCL timeouts, warnings and errors.
void PrintJobSide(std::ostream& out, const ReplayTimeline& t, bool verbose);

// Why a replay with no fault has nothing to run (the command fails with it).
std::string NothingToReplay(const incident::Incident& inc, const ReplayTimeline& t);

// ASCII-only, at most `max` bytes (then "..."): log text is printed safely.
std::string Ascii(const std::string& s, size_t max = 60);

}  // namespace rackchaos::runner
