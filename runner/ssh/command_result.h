// What running one command on one host produced.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "core/units.h"

namespace rackchaos::ssh {

struct CommandResult {
  std::string host;  // HostSpec::name
  // OK when the command ran to its end, whatever its exit status. Otherwise: kTimeout (command or
  // connect timeout), kUnavailable (cannot connect, session dropped, channel refused),
  // kInvalidArgument (host key or authentication refused), kNotFound (unknown host name),
  // kAborted (the pool was shut down).
  Status status;
  int exit_status = -1;     // -1 when none was received (killed by a signal, or status not OK)
  std::string exit_signal;  // signal name without "SIG" when the command was killed, e.g. "KILL"
  std::string out, err;     // captured stdout / stderr, at most PoolOptions::max_output_bytes each
  bool out_truncated = false, err_truncated = false;  // more was received and dropped
  uint64_t out_bytes = 0, err_bytes = 0;              // everything received, kept or dropped
  // From handing the command to the host's session (after admission) to the result; includes a
  // reconnect when the session had to be opened first.
  Duration elapsed;
  // Wall clock (microseconds since the Unix epoch, this machine) when the exec request was sent and
  // when the result was known; 0 when the command never started. For start-skew measurements.
  int64_t start_wall_us = 0;
  int64_t end_wall_us = 0;
  // Armed commands: when the host let the command go (the fault's landing) and when the command
  // ended, by the host's clock (microseconds since the Unix epoch, bash's $EPOCHREALTIME); 0 when
  // it never did or the stamp was lost (the command ran `exec` or trapped EXIT itself).
  int64_t landed_wall_us = 0;
  int64_t apply_end_wall_us = 0;
};

}  // namespace rackchaos::ssh
