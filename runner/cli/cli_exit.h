// How a subcommand hands an error back to the shell: "rackchaos: <message>" on stderr and the exit code
// (core/exit_code.h). One copy for every command in runner/cli.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/exit_code.h"
#include "core/status.h"
#include "reports/escape.h"

namespace rackchaos::runner {

inline int Fail(ExitCode code, const std::string& message) {
  std::fprintf(stderr, "rackchaos: %s\n", message.c_str());
  return ToInt(code);
}

// The user's input was wrong (exit code kBadInput).
inline int Fail(const std::string& message) { return Fail(ExitCode::kBadInput, message); }

// Validation's warnings, "rackchaos: warning: <text>" each on stderr. Their text holds names and paths from
// the plan and the inventory: control characters are shown escaped.
inline void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings)
    std::fprintf(stderr, "rackchaos: warning: %s\n", reports::TerminalText(w).c_str());
}

// A failed Status's exit code: a bad argument or something the user named that is not there is the
// user's input; anything else is the infrastructure's (kRuntimeError).
inline ExitCode CodeOf(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kNotFound ? ExitCode::kBadInput
                                                                                        : ExitCode::kRuntimeError;
}

}  // namespace rackchaos::runner
