// `rackchaos recover`: the command around runner/site/recover.h.
#include "runner/cli/recover_cmd.h"

#include <cstdio>
#include <filesystem>

#include "core/exit_code.h"
#include "reports/escape.h"

namespace rackchaos::runner {

int CmdRecover(const std::string& db, const std::string& ledger_path, const RecoverOptions& options, bool quiet) {
  const std::string path = ledger_path.empty() ? DefaultLedgerPath(db) : ledger_path;
  std::error_code ec;  // an error (not "absent") is Ledger::Open's to report: exists() without it throws
  if (!std::filesystem::exists(path, ec) && !ec) {
    if (!quiet) std::printf("recover: no fault ledger at %s; nothing to do\n", path.c_str());
    return ToInt(ExitCode::kPass);
  }
  auto ledger = Ledger::Open(path);
  if (!ledger.ok()) {
    std::fprintf(stderr, "rackchaos: %s\n", ledger.status().ToString().c_str());
    return ToInt(ExitCode::kRuntimeError);
  }
  if (options.list_only) {
    auto lines = ListOpen(*ledger);
    if (!lines.ok()) {
      std::fprintf(stderr, "rackchaos: %s\n", lines.status().ToString().c_str());
      return ToInt(ExitCode::kRuntimeError);
    }
    for (const std::string& line : *lines) std::printf("%s\n", reports::TerminalText(line).c_str());
    std::printf("recover: %zu open entr%s in %s\n", lines->size(), lines->size() == 1 ? "y" : "ies", path.c_str());
    return ToInt(ExitCode::kPass);
  }
  RecoverOptions waiting = options;
  waiting.on_wait = [](const std::string& line) { std::fprintf(stderr, "recover: %s\n", line.c_str()); };
  auto result = Recover(*ledger, waiting);
  if (!result.ok()) {
    std::fprintf(stderr, "rackchaos: recover: %s\n", result.status().ToString().c_str());
    const StatusCode code = result.status().code();
    return ToInt(code == StatusCode::kNotFound || code == StatusCode::kInvalidArgument ? ExitCode::kBadInput
                                                                                     : ExitCode::kRuntimeError);
  }
  if (!quiet) {
    for (const std::string& line : result->lines) std::printf("%s\n", reports::TerminalText(line).c_str());
    std::string more;
    if (result->forgotten) more += ", " + std::to_string(result->forgotten) + " forgotten";
    if (result->expiries_swept)
      more += ", " + std::to_string(result->expiries_swept) + " stray host-side expiry timer(s) removed";
    if (result->returned || result->left_drained)
      more += ", " + std::to_string(result->returned) + " drained tray(s) returned to service, " +
              std::to_string(result->left_drained) + " left drained";
    if (result->already_reverted)
      more += "; " + std::to_string(result->already_reverted) + " of the reverted found not in effect (nothing run)";
    std::printf("recover: %d reverted, %d still open, %d left to live runs, %d run(s) marked aborted%s (ledger %s)\n",
                result->reverted, result->failed, result->skipped_live, result->runs_aborted, more.c_str(), path.c_str());
  }
  return result->failed == 0 ? ToInt(ExitCode::kPass) : ToInt(ExitCode::kRuntimeError);
}

}  // namespace rackchaos::runner
