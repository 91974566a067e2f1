#include "core/source_pos.h"

namespace rackchaos {

std::string SourcePos::ToString() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

Status At(const SourcePos& pos, const std::string& message) { return Status::Invalid(pos.ToString() + ": " + message); }

Status OneLine(Status s) {
  if (s.ok()) return s;
  std::string out;
  for (unsigned char c : s.message()) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return Status(s.code(), std::move(out));
}

}  // namespace rackchaos
