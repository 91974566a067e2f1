// Process exit codes, one enum, documented in `rackchaos --help` and README.md.
#pragma once

namespace rackchaos {

enum class ExitCode : int {
  kPass = 0,               // the run finished and every expectation held
  kExpectationFailed = 1,  // an expectation failed, or a safety.abort condition or continuous gate aborted the run
  kBadInput = 2,           // the plan, inventory, policy or command line is invalid
  kRuntimeError = 3,       // infrastructure: database, SSH, a backend error
  kInterrupted = 4,        // SIGINT/SIGTERM or a stop file; faults reverted
};

inline int ToInt(ExitCode c) { return static_cast<int>(c); }

inline constexpr const char* kExitCodeHelp =
    "Exit codes:\n"
    "  0  pass: the run finished and every expectation held\n"
    "  1  an expectation failed, or the run was aborted (safety.abort or a continuous gate); faults reverted\n"
    "  2  bad input: plan, policy or command line (the message names file:line:column)\n"
    "  3  runtime error: database, backend or transport failure\n"
    "  4  interrupted (SIGINT/SIGTERM or the stop file, default /run/rackchaos/stop); active faults were reverted\n";

}  // namespace rackchaos
