// The terminal summary of one run, as printed at the end of `rackchaos run` and by
// `rackchaos report show`.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "reports/store.h"

namespace rackchaos::reports {

// Renders run `run` from the store alone (never from live objects): a header (plan, seed, backend,
// version, status), a per-fault table (kind, target, injection time, time to detect / isolate /
// recover, GPUs direct+collateral, jobs, GPU-hours lost, re-work) followed by what was isolated for
// each fault, a per-job table (GPUs, ETTR, goodput, interruptions, kept steps) and the healer's quality
// (isolations, precision, recall, false isolations, missed faults), then, only when the scheduler
// moved jobs to spare racks, a "Spare racks" section with each move's time and detail.
//
// Bounded size whatever the run (reports/fault_digest.h, kTextLimits): past 40 faults the table lists
// the 40 worst and says so, then every fault counted by kind and by rack (the 20 racks with the most
// faults, and how many faults the others hold); past 30 jobs the 30 with the lowest ETTR; lists in
// prose end with "and N more". A run that fits prints as it always did.
//
// Columns aligned, no colours, '\n' line ends; durations use FormatDurationShort and a missing one
// prints "-". Stored strings go through TerminalText (reports/escape.h): no control character reaches
// the terminal. Fails with the store's Status (e.g. kNotFound for an unknown run).
Result<std::string> RenderSummary(const ReportStore& store, int64_t run);

}  // namespace rackchaos::reports
