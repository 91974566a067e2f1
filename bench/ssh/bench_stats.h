// Measurements shared by the fan-out bench's rows: quantiles, start skews from stamps, and CPU time of
// this process, of its waited-for children, and of process trees it does not own (sshd listeners and
// their sessions, OpenSSH ControlPersist masters).
// Linux only (reads /proc). Not thread-safe (the bench is one thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/common/host_facts.h"  // LoadAverage, UtcNow: the bench prints them

namespace rackchaos::bench {

// The p-quantile (0..1) of `v` by nearest rank; 0 for an empty vector.
double Quantile(std::vector<double> v, double p);

// Offsets of each stamp (microseconds) from the earliest one, in milliseconds.
std::vector<double> Skews(const std::vector<int64_t>& stamps_us);

// Every 19-digit number in `text` (the output of `date +%s%N`), as microseconds since the epoch.
std::vector<int64_t> NanoStamps(const std::string& text);

int64_t UnixMicrosNow();

// CPU time (user + system) in milliseconds: of this process so far (getrusage RUSAGE_SELF), and of its
// children that have been waited for (RUSAGE_CHILDREN: a child's own waited-for descendants included).
double SelfCpuMs();
double ChildrenCpuMs();

// CPU time in milliseconds of every live process whose command name is `comm` and whose command line
// contains `text`, plus all their live descendants, plus what those processes' waited-for children
// used (cutime + cstime). The difference of two calls is what the trees used in between, including
// sessions that began and ended in it, as long as their parents reaped them. Live processes are read
// from /proc/<pid>/schedstat (nanoseconds), so many short sessions do not add up tick rounding.
double TreeCpuMs(const std::string& comm, const std::string& text);

// TreeCpuMs once the trees are idle: read every 100 ms until two reads differ by less than 2 ms (at most 5 s).
// The sessions a row ends keep working (closing, exiting, being reaped) after the row's command returned;
// without the wait the next row would be charged for them. Sleeps: for the bench's setup, never timed.
double SettledTreeCpuMs(const std::string& comm, const std::string& text);

}  // namespace rackchaos::bench
