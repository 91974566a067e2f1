#include "runner/site/observe/journal_reader.h"

#include <cstdio>
#include <iterator>
#include <utility>

#include "healer/xid.h"
#include "runner/site/observe/journal_entries.h"
#include "runner/site/observe/text.h"

namespace rackchaos::observe {

namespace {

std::string Seconds(int64_t us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(us / 1000000), static_cast<long long>(us % 1000000));
  return buf;
}

std::string When(int64_t us) { return us < 0 ? std::string("an unknown time") : "@" + Seconds(us); }

}  // namespace

JournalReader::JournalReader(std::string host, ComponentId node, JournalFormat format)
    : host_(std::move(host)), node_(node), format_(format) {}

std::vector<std::string> JournalReader::NextArgs() const {
  std::vector<std::string> args{"_TRANSPORT=kernel", "--no-pager", "-o",
                                format_ == JournalFormat::kExport ? "export" : "json"};
  switch (mode_) {
    case Mode::kStart: args.insert(args.end(), {"-n", "1"}); break;
    case Mode::kFromBeginning: break;
    case Mode::kCursor: args.push_back("--cursor=" + cursor_); break;
    case Mode::kSince: args.push_back("--since=@" + Seconds(last_realtime_us_)); break;
  }
  return args;
}

void JournalReader::Report(const JournalEntry& e, Observed& out) {
  ++lines_read_;
  if (!e.transport.empty() && e.transport != "kernel") return;
  // A message may hold several lines (the export format's binary form); each is offered to the parser.
  for (std::string_view line : SplitLines(e.message))
    if (healer::ParseXidLine(line)) out.Add(cluster::KernelLogLine{node_, std::string(line)});
}

void JournalReader::Advance(const std::vector<JournalEntry>& entries) {
  if (entries.empty()) return;
  const JournalEntry& last = entries.back();
  if (last.realtime_us != last_realtime_us_) read_at_last_time_.clear();
  for (const JournalEntry& e : entries)
    if (e.realtime_us == last.realtime_us) read_at_last_time_.insert(e.cursor);
  cursor_ = last.cursor;
  last_realtime_us_ = last.realtime_us;
  mode_ = Mode::kCursor;
  gap_reported_ = false;
}

Observed JournalReader::OnOutput(std::string_view output) {
  Observed out;
  JournalParse parsed = format_ == JournalFormat::kExport ? ParseJournalExport(output) : ParseJournalJson(output);
  for (const std::string& p : parsed.problems) out.Error(host_, Source::kJournal, Problem::kUnreadable, node_, p);
  std::vector<JournalEntry>& entries = parsed.entries;
  size_t from = 0;
  switch (mode_) {
    case Mode::kStart:  // the newest line is where reading starts; it is history, not reported
      if (entries.empty()) mode_ = Mode::kFromBeginning;
      Advance(entries);
      return out;
    case Mode::kFromBeginning:
      break;
    case Mode::kCursor:
      if (entries.empty()) {
        // journalctl --cursor always prints the cursor's own entry while it exists.
        if (!gap_reported_)
          out.Error(host_, Source::kJournal, Problem::kGap, node_,
                    "cursor " + cursor_ + " is no longer in the journal and nothing newer is (rotated away and "
                    "vacuumed, or the journal was reset); lines logged after " + When(last_realtime_us_) +
                    " may be lost");
        gap_reported_ = true;
        return out;
      }
      if (entries.front().cursor == cursor_) {
        from = 1;  // the entry already read, printed again as proof of the position
      } else if (!gap_reported_) {
        out.Error(host_, Source::kJournal, Problem::kGap, node_,
                  "cursor " + cursor_ + " is no longer in the journal (its file was rotated away and vacuumed); "
                  "reading on from the first line after its position: lines logged between " +
                      When(last_realtime_us_) + " and " + When(entries.front().realtime_us) + ", if any, were not read");
      }
      break;
    case Mode::kSince:
      // Lines before the last one's time, or at that time and already read, were reported before.
      while (from < entries.size() &&
             (entries[from].realtime_us < last_realtime_us_ ||
              (entries[from].realtime_us == last_realtime_us_ && read_at_last_time_.count(entries[from].cursor))))
        ++from;
      break;
  }
  for (size_t i = from; i < entries.size(); ++i) Report(entries[i], out);
  if (from < entries.size()) {
    std::vector<JournalEntry> fresh(std::make_move_iterator(entries.begin() + static_cast<std::ptrdiff_t>(from)),
                                    std::make_move_iterator(entries.end()));
    Advance(fresh);
  } else if (mode_ == Mode::kSince && !entries.empty()) {
    Advance(entries);  // nothing new, but the position is known again
  }
  return out;
}

Observed JournalReader::OnFailure(int exit_status, std::string_view stderr_text) {
  Observed out;
  std::string_view first = Trim(stderr_text.substr(0, stderr_text.find('\n')));
  if (mode_ == Mode::kCursor && Contains(stderr_text, "cursor")) {
    out.Error(host_, Source::kJournal, Problem::kGap, node_,
              "journalctl refused cursor " + cursor_ + " (\"" + std::string(first) + "\"); re-reading from the last " +
                  "line's time " + When(last_realtime_us_) + " and skipping the lines already read there");
    mode_ = last_realtime_us_ >= 0 ? Mode::kSince : Mode::kFromBeginning;
    return out;
  }
  out.Error(host_, Source::kJournal, Problem::kUnavailable, node_,
            "journalctl exited " + std::to_string(exit_status) + (first.empty() ? "" : ": " + std::string(first)) +
                "; the next poll asks again from the same position");
  return out;
}

}  // namespace rackchaos::observe
