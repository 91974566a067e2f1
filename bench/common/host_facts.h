// What a benchmark prints beside its figures about the machine it ran on, so a reader can tell a slow
// figure from a busy machine (issue 23 asks for the load beside each figure). Linux only (reads /proc).
#pragma once

#include <string>

namespace rackchaos::bench {

// /proc/loadavg's 1-, 5- and 15-minute load averages ("1.20 0.80 0.55"); "unknown" when it cannot be read.
std::string LoadAverage();

// The time now, "2026-12-02 00:41 UTC".
std::string UtcNow();

}  // namespace rackchaos::bench
