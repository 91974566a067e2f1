// The kernel log of one tray host through journald, read poll after poll with a cursor, so that no
// line is read twice and none is missed across polls, reconnects and journal rotation; Xid and SXid
// lines (healer/xid.h) become KernelLogLine observations for the host's node.
//
// The reader says what to run (NextArgs(): `journalctl` arguments) and is told what came back:
//   first poll      `_TRANSPORT=kernel -o export -n 1`: the newest line is the starting point (lines
//                   from before the run are history, not symptoms); an empty journal means "read
//                   everything" next time.
//   later polls     `--cursor=<last cursor read>`: journalctl prints that entry again, then the newer
//                   ones. The repeated entry proves the position; it is dropped. (Not --after-cursor:
//                   when the cursor's entry is gone, journalctl 252 seeks to where it was and then
//                   silently skips the next entry as if it were the cursor's own; see the samples.)
//   cursor gone     the first entry is another one: the journal file holding the cursor was rotated
//                   away and vacuumed (or the journal was reset). kGap error, and reading goes on from
//                   the first entry after the cursor's position: what was logged in between (if
//                   anything) is lost, and the error says from when to when.
//   cursor refused  journalctl fails with "Failed to seek to cursor" (OnFailure): kGap error, and the
//                   next poll re-reads from the last line's time (`--since=@<s.us>`), dropping the lines
//                   at that time already read.
//   no answer       SSH or journalctl failed otherwise: kUnavailable, and the next poll asks from the
//                   same cursor, so a reconnect neither repeats nor loses lines.
// `_TRANSPORT=kernel` rather than `-k`: -k implies -b, which would hide the end of the previous boot
// after a node reboot. Threading: one thread, the caller's. Not copyable state beyond its values.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "runner/site/observe/journal_entries.h"
#include "runner/site/observe/observed.h"

namespace rackchaos::observe {

enum class JournalFormat { kExport, kJson };

class JournalReader {
 public:
  JournalReader(std::string host, ComponentId node, JournalFormat format = JournalFormat::kExport);

  // The arguments of the next `journalctl` run, without the program name.
  std::vector<std::string> NextArgs() const;
  // The standard output of a run that exited 0.
  Observed OnOutput(std::string_view output);
  // A run that failed: its exit status and standard error.
  Observed OnFailure(int exit_status, std::string_view stderr_text);

  const std::string& cursor() const { return cursor_; }
  int64_t lines_read() const { return lines_read_; }  // entries reported so far

 private:
  enum class Mode { kStart, kFromBeginning, kCursor, kSince };
  void Report(const JournalEntry& e, Observed& out);
  void Advance(const std::vector<JournalEntry>& entries);

  std::string host_;
  ComponentId node_;
  JournalFormat format_;
  Mode mode_ = Mode::kStart;
  std::string cursor_;
  int64_t last_realtime_us_ = -1;
  std::set<std::string> read_at_last_time_;  // cursors of the entries read at last_realtime_us_
  bool gap_reported_ = false;                // the current cursor's loss was already reported
  int64_t lines_read_ = 0;
};

}  // namespace rackchaos::observe
