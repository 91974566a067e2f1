#include "runner/site/observe/journal_entries.h"

#include <cstring>
#include <utility>

#include "runner/site/observe/json.h"
#include "runner/site/observe/text.h"

namespace rackchaos::observe {

namespace {

bool FieldName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// Keeps the fields the reader uses; the rest of an entry is skipped.
void Keep(JournalEntry& e, std::string_view key, std::string_view value) {
  if (key == "__CURSOR") {
    e.cursor = value;
  } else if (key == "__REALTIME_TIMESTAMP") {
    uint64_t us = 0;
    e.realtime_us = ParseCount(value, us) && us <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(us) : -1;
  } else if (key == "_BOOT_ID") {
    e.boot_id = value;
  } else if (key == "_TRANSPORT") {
    e.transport = value;
  } else if (key == "MESSAGE") {
    e.message = value;
  }
}

void Finish(JournalEntry& e, int number, JournalParse& out) {
  if (e.cursor.empty())
    out.problems.push_back("entry " + std::to_string(number) + ": no __CURSOR; skipped");
  else
    out.entries.push_back(std::move(e));
  e = JournalEntry{};
}

}  // namespace

JournalParse ParseJournalExport(std::string_view text) {
  JournalParse out;
  JournalEntry e;
  bool open = false;  // fields read since the last blank line
  int number = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      out.problems.push_back("entry " + std::to_string(number) + ": output ends inside an entry; it is read again next poll");
      return out;
    }
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) {  // the blank line that ends an entry
      if (open) Finish(e, number++, out);
      open = false;
      continue;
    }
    open = true;
    if (size_t eq = line.find('='); eq != std::string_view::npos) {
      Keep(e, line.substr(0, eq), line.substr(eq + 1));
      continue;
    }
    if (!FieldName(line) || pos + 8 > text.size()) {
      out.problems.push_back("entry " + std::to_string(number) + ": unreadable line \"" +
                             std::string(line.substr(0, 80)) + "\"; entry skipped");
      // Resynchronize at the next blank line.
      size_t blank = text.find("\n\n", pos > 0 ? pos - 1 : 0);
      pos = blank == std::string_view::npos ? text.size() : blank + 2;
      e = JournalEntry{};
      open = false;
      ++number;
      continue;
    }
    uint64_t size = 0;
    for (int i = 7; i >= 0; --i) size = (size << 8) | static_cast<unsigned char>(text[pos + static_cast<size_t>(i)]);
    pos += 8;
    if (size > text.size() - pos || pos + size >= text.size() || text[pos + size] != '\n') {
      out.problems.push_back("entry " + std::to_string(number) + ": binary field " + std::string(line) +
                             " runs past the output; it is read again next poll");
      return out;
    }
    Keep(e, line, text.substr(pos, size));
    pos += size + 1;
  }
  if (open) out.problems.push_back("entry " + std::to_string(number) + ": output ends inside an entry; it is read again next poll");
  return out;
}

JournalParse ParseJournalJson(std::string_view text) {
  JournalParse out;
  int number = 0;
  std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    ++number;
    auto doc = ParseJson(line);
    if (!doc.ok() || !doc->is_object()) {
      bool last_unterminated = i + 1 == lines.size() && !text.empty() && text.back() != '\n';
      out.problems.push_back("entry " + std::to_string(number) + ": " +
                             (last_unterminated ? std::string("output ends inside an entry; it is read again next poll")
                                                : "not a JSON object (" + doc.status().message() + ")"));
      continue;
    }
    JournalEntry e;
    const JsonValue& o = *doc;
    for (size_t k = 0; k < o.keys().size(); ++k) {
      const JsonValue& v = o.items()[k];
      if (v.is_string()) {
        Keep(e, o.keys()[k], v.text());
      } else if (v.is_array() && o.keys()[k] == "MESSAGE") {
        // Not UTF-8: journalctl prints the bytes as numbers.
        std::string bytes;
        for (const JsonValue& b : v.items())
          if (b.is_number() && b.number() >= 0 && b.number() <= 255) bytes += static_cast<char>(static_cast<int>(b.number()));
        e.message = std::move(bytes);
      }
    }
    Finish(e, number, out);
  }
  return out;
}

}  // namespace rackchaos::observe
