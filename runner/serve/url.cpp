#include "runner/serve/url.h"

#include <cstdint>

namespace rackchaos::serve {
namespace {

constexpr size_t kMaxParams = 32;
constexpr size_t kMaxValue = 512;

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `plus` turns '+' into a space (query strings, as forms send them); paths keep it.
Result<std::string> Decode(std::string_view text, bool plus) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      if (i + 2 >= text.size()) return Status::Invalid("truncated percent-encoding");
      const int hi = Hex(text[i + 1]), lo = Hex(text[i + 2]);
      if (hi < 0 || lo < 0) return Status::Invalid("bad percent-encoding '" + std::string(text.substr(i, 3)) + "'");
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += plus && text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

// NUL ends a C string wherever the text goes next (SQLite binds, file names): never let one through.
// Other control characters may be in a serial or a plan name; every output escapes or drops them.
bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }

}  // namespace

std::string Target::Param(const std::string& key) const {
  auto it = query.find(key);
  return it == query.end() ? "" : it->second;
}

Result<Target> ParseTarget(std::string_view target) {
  if (target.empty() || target.front() != '/') return Status::Invalid("the request target must start with '/'");
  const size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  Target out;
  for (size_t begin = 1; begin <= path.size();) {
    size_t end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    std::string_view raw = path.substr(begin, end - begin);
    begin = end + 1;
    if (raw.empty()) continue;  // "//" and a trailing '/'
    auto decoded = Decode(raw, false);
    if (!decoded.ok()) return decoded.status();
    const std::string seg = std::move(decoded).value();
    if (seg.empty() || seg.find_first_not_of('.') == std::string::npos || seg.find('/') != std::string::npos ||
        seg.find('\\') != std::string::npos || HasNul(seg))
      return Status::Invalid("path segment '" + std::string(raw) + "' is not allowed");
    out.path.push_back(seg);
  }
  if (q == std::string_view::npos) return out;
  std::string_view query = target.substr(q + 1);
  for (size_t begin = 0; begin < query.size();) {
    size_t end = query.find('&', begin);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(begin, end - begin);
    begin = end + 1;
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    RC_ASSIGN_OR_RETURN(std::string key, Decode(pair.substr(0, eq), true));
    std::string value;
    if (eq != std::string_view::npos) {
      RC_ASSIGN_OR_RETURN(value, Decode(pair.substr(eq + 1), true));
    }
    if (value.size() > kMaxValue) return Status::Invalid("parameter '" + key + "' is longer than 512 bytes");
    if (HasNul(key) || HasNul(value)) return Status::Invalid("parameter '" + key + "' holds a NUL character");
    if (!out.query.emplace(key, std::move(value)).second) return Status::Invalid("parameter '" + key + "' is repeated");
    if (out.query.size() > kMaxParams) return Status::Invalid("more than 32 parameters");
  }
  return out;
}

std::string UrlEncode(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<int64_t> ParseId(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return Status::Invalid(what + " '" + text + "' is not a number");
  return static_cast<int64_t>(std::stoll(text));
}

}  // namespace rackchaos::serve
