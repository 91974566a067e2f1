// journalctl output -> journal entries: the export format (`-o export`, systemd's "Journal Export
// Format": KEY=value lines, a binary-safe form "KEY\n<64-bit LE length><bytes>\n" for values with
// newlines or control bytes, a blank line after each entry) and the JSON format (`-o json`: one
// object per line; MESSAGE is a string, an array of byte values when it is not UTF-8, or null).
// Only the fields the kernel log reader needs are kept. An entry without __CURSOR cannot be tracked
// and is dropped with a problem; so is an entry cut off at the end of the output (the reader asks
// for it again next time). Never throws; linear in the input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rackchaos::observe {

struct JournalEntry {
  std::string cursor;          // __CURSOR
  int64_t realtime_us = -1;    // __REALTIME_TIMESTAMP, -1 when absent
  std::string boot_id;         // _BOOT_ID
  std::string transport;       // _TRANSPORT ("kernel" for kernel messages)
  std::string message;         // MESSAGE, bytes as logged ("" when absent or null)
};

struct JournalParse {
  std::vector<JournalEntry> entries;  // complete entries with a cursor, in output order
  std::vector<std::string> problems;  // "entry 3: no __CURSOR", "output ends inside an entry", ...
};

JournalParse ParseJournalExport(std::string_view text);
JournalParse ParseJournalJson(std::string_view text);

}  // namespace rackchaos::observe
