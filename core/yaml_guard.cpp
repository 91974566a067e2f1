#include "core/yaml_guard.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/source_pos.h"
#include "core/strings.h"

namespace rackchaos {
namespace {

// Refuses bytes no plan or inventory contains: control characters and invalid UTF-8. This turns binary junk into
// one clear error instead of whatever yaml-cpp's encoding detection makes of it.
Status CheckBytes(std::string_view text, const std::string& file, std::string_view what) {
  int line = 1, column = 1;
  for (size_t i = 0; i < text.size(); ++column) {
    auto c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok =
        length != 0 && i + length <= text.size() && (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') && c != 0x7F;
    for (size_t k = 1; ok && k < length; ++k) ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (!ok) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", c);
      return At({file, line, column}, std::string("byte ") + hex + " is not text; " + WithArticle(what) +
                                          " is UTF-8 text (is this a binary file?)");
    }
    if (c == '\n') {
      ++line;
      column = 0;
    }
    i += length;
  }
  return Status::Ok();
}

// Estimates the nesting depth without parsing, because yaml-cpp recurses per level and can exhaust the
// stack on input like 100000 '['. Counts open flow brackets (outside quotes and comments) plus block
// indentation levels and "- " entries. It may over-count odd files; it never under-counts brackets.
Status CheckDepth(std::string_view text, const std::string& file, const YamlGuard& guard) {
  std::vector<size_t> indents;  // columns of the open block levels
  int flow = 0, line = 0;
  char quote = 0;
  for (size_t start = 0; start < text.size(); ++line) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string_view l = text.substr(start, end - start);
    start = end + 1;
    size_t indent = l.find_first_not_of(' ');
    if (quote == 0 && flow == 0 && indent != std::string_view::npos && l[indent] != '#' && l[indent] != '\r') {
      while (!indents.empty() && indents.back() > indent) indents.pop_back();
      if (indents.empty() || indents.back() < indent) indents.push_back(indent);
      for (size_t i = indent; i + 1 < l.size() && l[i] == '-' && l[i + 1] == ' ';) {
        i = l.find_first_not_of(' ', i + 1);
        if (i == std::string_view::npos) break;
        indents.push_back(i);
      }
    }
    char previous = ' ';
    for (size_t i = 0; i < l.size(); previous = l[i++]) {
      char c = l[i];
      bool token_start = previous == ' ' || previous == '\t' || previous == '[' || previous == '{' || previous == ',' ||
                         previous == ':' || i == 0;
      if (quote == '"' && c == '\\') {
        ++i;
        continue;
      }
      if (quote != 0) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '#' && token_start) break;
      if ((c == '"' || c == '\'') && token_start)
        quote = c;
      else if ((c == '[' || c == '{') && (token_start || flow > 0))
        ++flow;
      else if ((c == ']' || c == '}') && flow > 0)
        --flow;
      if (flow + static_cast<int>(indents.size()) > guard.max_depth) {
        return At({file, line + 1, static_cast<int>(i) + 1},
                  "nesting is deeper than " + std::to_string(guard.max_depth) + " levels; " + WithArticle(guard.what) +
                      " needs about " + std::to_string(guard.typical_depth));
      }
    }
  }
  return Status::Ok();
}

// Refuses a second YAML document. A "---" or "..." marker at column 0 always ends a document, even
// inside a scalar, so a line scan is exact. Only the first document would be read otherwise.
Status CheckOneDocument(std::string_view text, const std::string& file, const YamlGuard& guard) {
  bool content = false, ended = false;
  int line = 0;
  for (size_t start = 0; start < text.size(); ++line) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string_view l = text.substr(start, end - start);
    start = end + 1;
    bool marker = (l.substr(0, 3) == "---" || l.substr(0, 3) == "...") &&
                  (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    size_t first = l.find_first_not_of(" \t\r");
    bool is_content = !marker && first != std::string_view::npos && l[first] != '#' && !(l[0] == '%' && !content);
    if ((marker && l[0] == '-' && content) || (is_content && ended)) {
      return At({file, line + 1, 1},
                "a second YAML document starts here; " + WithArticle(guard.what) + " file holds exactly one");
    }
    ended = ended || (marker && l[0] == '.' && content);
    content = content || is_content;
  }
  return Status::Ok();
}

}  // namespace

Status GuardYamlText(std::string_view text, const std::string& file, const YamlGuard& guard) {
  RC_RETURN_IF_ERROR(CheckBytes(text, file, guard.what));
  RC_RETURN_IF_ERROR(CheckDepth(text, file, guard));
  return CheckOneDocument(text, file, guard);
}

Status GuardText(std::string_view text, const std::string& file, std::string_view what) {
  return CheckBytes(text, file, what);
}

Status GuardNotBinary(std::string_view head, const std::string& file, std::string_view what) {
  const size_t nul = head.find('\0');
  if (nul == std::string_view::npos) return Status::Ok();
  const std::string_view before = head.substr(0, nul);
  const int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start = before.rfind('\n');
  const int column = static_cast<int>(nul - (line_start == std::string_view::npos ? 0 : line_start + 1)) + 1;
  return At({file, line, column}, "byte 0x00 is not text; " + WithArticle(what) +
                                      " is text (is this a binary or compressed file? decompress it first)");
}

}  // namespace rackchaos
