// Clock check: how far each host's clock is from the runner's, measured once at connect.
//
// Real runs land the faults that share an `at` by telling every host the wall-clock instant to run
// them at (SshPool::FireAt), so the spread between hosts is that of their clocks. Sites keep their
// clocks synchronised (NTP: about a millisecond on a LAN; PTP: microseconds); this check catches a
// host that is not. It runs one probe per host that prints bash's $EPOCHREALTIME, and estimates the
// host's offset as its stamp minus the middle of the probe's round trip; the error of that
// estimate is at most half the round trip (the `uncertainty`). The probe also proves the host has
// bash 5, which armed faults need.
//
// Threading: call on the thread that runs the pool's io_context, outside its handlers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "runner/ssh/ssh_pool.h"

namespace rackchaos::runner {

struct HostClock {
  std::string host;
  Status status;               // not OK: the probe failed (transport, or no bash 5 there)
  int64_t offset_us = 0;       // host clock minus runner clock
  int64_t uncertainty_us = 0;  // half the probe's round trip
};

// An offset that is surely beyond this (|offset| - uncertainty) is worth a warning: it alone is a
// fifth of the 50 ms landing budget.
constexpr int64_t kClockWarnUs = 10000;

// Probes every host in `hosts` at once; results in the order of `hosts`.
std::vector<HostClock> CheckClocks(ssh::SshPool& pool, const std::vector<std::string>& hosts);
// "host07: clock 1.204 s ahead of the runner's (±2.1 ms)".
std::string DescribeOffset(const HostClock& c);
// True when the host's clock is surely more than kClockWarnUs off.
bool ClockOff(const HostClock& c);

}  // namespace rackchaos::runner
