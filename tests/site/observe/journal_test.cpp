// The journald reader on real journalctl 252 output (samples/journal/make-samples.sh writes journal
// files with systemd-journal-remote and records what journalctl prints for them), including a
// rotation whose cursor file was vacuumed, a refused cursor and a cut-off answer.
#include <doctest/doctest.h>

#include "core/strings.h"
#include "runner/site/observe/journal_entries.h"
#include "runner/site/observe/journal_reader.h"
#include "tests/site/observe/samples.h"

namespace ob = rackchaos::observe;
using ob::Problem;
using ob::testing::Count;
using ob::testing::Sample;
using rackchaos::cluster::KernelLogLine;

namespace {

std::vector<std::string> Lines(const ob::Observed& o) {
  std::vector<std::string> out;
  for (const auto& b : o.observations)
    if (const auto* k = std::get_if<KernelLogLine>(&b)) out.push_back(k->line);
  return out;
}

std::string CursorAt(const std::string& export_text, size_t n) {
  return ob::ParseJournalExport(export_text).entries.at(n).cursor;
}

}  // namespace

TEST_CASE("journal entries: the export and JSON formats of the same journal agree") {
  ob::JournalParse e = ob::ParseJournalExport(Sample("journal/kernel_export.txt"));
  ob::JournalParse j = ob::ParseJournalJson(Sample("journal/kernel_json.txt"));
  CHECK(e.problems.empty());
  CHECK(j.problems.empty());
  REQUIRE(e.entries.size() == 5);
  REQUIRE(j.entries.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(e.entries[i].cursor == j.entries[i].cursor);
    CHECK(e.entries[i].message == j.entries[i].message);
    CHECK(e.entries[i].realtime_us == j.entries[i].realtime_us);
  }
  CHECK(e.entries[2].transport == "kernel");
  CHECK(e.entries[2].realtime_us == 1795996802000246);
  // The binary form (a multi-line message) and a message that is not UTF-8.
  ob::JournalParse be = ob::ParseJournalExport(Sample("journal/binary_export.bin"));
  ob::JournalParse bj = ob::ParseJournalJson(Sample("journal/binary_json.txt"));
  REQUIRE(be.entries.size() == 2);
  REQUIRE(bj.entries.size() == 2);
  CHECK(be.entries[0].message.find("subpartition 0.\nsecond line") != std::string::npos);
  CHECK(be.entries[0].message == bj.entries[0].message);
  CHECK(be.entries[1].message == "usb 1-3: bad \xff\xfe bytes");
  CHECK(bj.entries[1].message == be.entries[1].message);
}

TEST_CASE("journal reader: the first poll is a starting point, then each Xid line is reported once") {
  const std::string all = Sample("journal/kernel_export.txt");
  ob::JournalReader r("tray07", 7);
  CHECK(r.NextArgs() == std::vector<std::string>{"_TRANSPORT=kernel", "--no-pager", "-o", "export", "-n", "1"});
  // The newest line of a journal with the Xid in it: history, not reported.
  ob::Observed first = r.OnOutput(all.substr(all.rfind("__CURSOR")));
  CHECK(Lines(first).empty());
  CHECK(r.cursor() == CursorAt(all, 4));
  CHECK(r.NextArgs().back() == "--cursor=" + CursorAt(all, 4));

  // A fresh reader on an empty journal reads everything next time.
  ob::JournalReader fresh("tray07", 7);
  CHECK(fresh.OnOutput(Sample("journal/empty_export.txt")).observations.empty());
  CHECK(fresh.NextArgs().back() == "export");
  ob::Observed o = fresh.OnOutput(all);
  REQUIRE(Lines(o) == std::vector<std::string>{"NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."});
  CHECK(std::get<KernelLogLine>(o.observations[0]).node == 7);
  // The same answer again (journalctl --cursor repeats the cursor's entry; a reconnect re-polls):
  // the cursor's own entry is dropped, nothing is read twice.
  ob::Observed again = fresh.OnOutput(all.substr(all.rfind("__CURSOR")));
  CHECK(again.observations.empty());
  CHECK(again.errors.empty());
  CHECK(fresh.lines_read() == 5);
}

TEST_CASE("journal reader: rotation, then the cursor's file vacuumed") {
  const std::string poll1 = Sample("journal/rotation_poll1_export.txt");
  const std::string cursor = std::string(rackchaos::Trim(Sample("journal/rotation_cursor.txt")));
  ob::JournalReader r("tray07", 7);
  (void)r.OnOutput("");  // empty journal at the first poll
  // Poll 1 read up to "line 2" (the recorded cursor); pretend it ended there.
  const size_t cut = poll1.find("__CURSOR=" + cursor);
  REQUIRE(cut != std::string::npos);
  (void)r.OnOutput(poll1.substr(0, poll1.find("\n\n", cut) + 2));
  CHECK(r.cursor() == cursor);
  CHECK(r.lines_read() == 3);

  SUBCASE("the cursor's file still exists (rotated, not vacuumed): no gap") {
    ob::Observed o = r.OnOutput(Sample("journal/rotation_intact_cursor_export.txt"));
    CHECK(o.errors.empty());
    CHECK(r.lines_read() == 10);  // lines 3-9, each once
  }
  SUBCASE("vacuumed: the gap is an error, and reading goes on from the first line after it") {
    ob::Observed o = r.OnOutput(Sample("journal/rotation_vacuumed_cursor_export.txt"));
    REQUIRE(Count(o, Problem::kGap) == 1);
    CHECK(o.errors[0].ToString().find("tray07: journald: gap: cursor " + cursor + " is no longer in the journal") == 0);
    CHECK(o.errors[0].what.find("between @1795996902.000246 and @1795996905.000615, if any, were not read") != std::string::npos);
    CHECK(r.lines_read() == 8);  // lines 5-9: "line 5" is read, not skipped as --after-cursor would
    CHECK(r.OnOutput(Sample("journal/rotation_vacuumed_cursor_export.txt").substr(0, 0)).errors.size() == 1);
  }
  SUBCASE("journalctl refuses the cursor: re-read from the last line's time, skipping what was read") {
    ob::Observed f = r.OnFailure(1, Sample("journal/bad_cursor_stderr.txt"));
    REQUIRE(Count(f, Problem::kGap) == 1);
    CHECK(f.errors[0].what.find("Failed to seek to cursor: Invalid argument") != std::string::npos);
    CHECK(r.NextArgs().back() == "--since=@1795996902.000246");
    // journalctl --since is inclusive: "line 2" comes again and is dropped.
    const std::string since = poll1.substr(poll1.rfind("\n\n", cut) + 2);
    ob::Observed o = r.OnOutput(since);
    CHECK(o.errors.empty());
    CHECK(r.lines_read() == 10);
    CHECK(r.NextArgs().back().rfind("--cursor=", 0) == 0);
  }
  SUBCASE("no answer: kUnavailable, and the next poll asks from the same cursor") {
    ob::Observed f = r.OnFailure(255, "ssh: connect to host tray07 port 22: Connection refused\n");
    REQUIRE(Count(f, Problem::kUnavailable) == 1);
    CHECK(f.errors[0].ToString() == "tray07: journald: unavailable: journalctl exited 255: ssh: connect to host tray07 port 22: "
                                    "Connection refused; the next poll asks again from the same position");
    CHECK(r.NextArgs().back() == "--cursor=" + cursor);
  }
}

TEST_CASE("journal reader: an answer cut off mid-entry is read again, not half-read") {
  const std::string all = Sample("journal/kernel_export.txt");
  ob::JournalReader r("tray07", 7);
  (void)r.OnOutput("");
  const size_t third_end = all.find("\n\n", all.find("Xid")) + 2;
  ob::Observed cut = r.OnOutput(all.substr(0, third_end - 30));
  CHECK(Count(cut, Problem::kUnreadable) == 1);
  CHECK(Lines(cut).empty());
  CHECK(r.lines_read() == 2);
  // journalctl --cursor answers from the last complete entry read (the second).
  ob::Observed rest = r.OnOutput(all.substr(all.rfind("__CURSOR", all.rfind("__CURSOR", third_end - 30) - 1)));
  CHECK(rest.errors.empty());
  CHECK(Lines(rest).size() == 1);  // the Xid, once
  // Garbage in the middle: the entry is skipped with an error, the reader goes on.
  ob::JournalParse g = ob::ParseJournalExport("__CURSOR=a\nMESSAGE=x\n\nnot a field\nMESSAGE=y\n\n__CURSOR=c\n\n");
  CHECK(g.entries.size() == 2);
  CHECK(g.problems.size() == 1);
  CHECK(ob::ParseJournalJson("{\"MESSAGE\":\"no cursor\"}\n[1,2]\n").problems.size() == 2);
}
