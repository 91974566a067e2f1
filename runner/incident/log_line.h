// One log line split into its time prefix, host and body, for every prefix the importers accept:
//   [ 1234.567890] body                                    dmesg (relative: seconds since boot)
//   [Mon Nov 30 06:02:21 2026] body                         dmesg -T
//   Nov 30 06:02:21[.123456] host tag[pid]: body            journalctl (short, short-precise), syslog (no year)
//   2026-11-30T06:02:21.123456+00:00 host tag: body         syslog (RFC 3339), journalctl -o short-iso
//   [2026-11-30T06:02:21.123] body                          slurmctld log
//   2026-11-30T06:02:21,123456+00:00 body                   dmesg --time-format=iso (no host)
//   [ 1234.567890] host kernel: body                        journalctl -o short-monotonic
//   Mon 2026-11-30 06:02:21 UTC host tag: body              journalctl -o short-full
//   1795989741.123456 host tag: body                        journalctl -o short-unix
//   2026-11-30T06:02:21.123Z: body                          Open MPI --timestamp-output
//   kern  :err   : [ 1234.567890] body                      dmesg -x (the decoded facility and level go)
// A dmesg "[ uptime]" after a wall-clock prefix is dropped from the body (the wall time wins).
// Pure functions; never throw; linear in the line length.
#pragma once

#include <optional>
#include <string_view>

#include "runner/incident/incident.h"

namespace rackchaos::incident {

struct SplitLine {
  LogTime time;
  std::string_view host;  // empty when the prefix has none
  std::string_view tag;   // "kernel", "slurmctld", ... (without "[pid]:"); empty when none
  std::string_view body;  // the rest, trimmed
};

SplitLine SplitLogLine(std::string_view line);

// Times. Zone-less wall times are taken as UTC. Each returns nullopt on anything malformed.
// 2026-11-30T06:02:21[.123][Z|+01:00]; ' ' for T ok. `zoned` (if given) says whether a zone was printed.
std::optional<double> ParseIsoTime(std::string_view text, bool* zoned = nullptr);
// The same as a LogTime on the wall axis.
std::optional<LogTime> ParseIsoLogTime(std::string_view text);
std::optional<double> ParseCtimeTime(std::string_view text);  // Mon Nov 30 06:02:21 2026
// "Nov 30 06:02:21" in year 1972 (a leap year, so Feb 29 parses); FixGuessedYear moves it.
std::optional<double> ParseShortTime(std::string_view text);
// Moves a ParseShortTime() result to `year` (same month, day and time of day).
double FixGuessedYear(double seconds_in_1972, int year);
int YearOf(double unix_seconds);
// A glog stamp as PyTorch prints it, "E1206 18:44:12.715298746" (severity letter, MMDD, time of day):
// on the wall axis in 1972 with year_guessed set, like a journal stamp.
std::optional<LogTime> ParseGlogTime(std::string_view text);

}  // namespace rackchaos::incident
