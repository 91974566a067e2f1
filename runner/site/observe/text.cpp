#include "runner/site/observe/text.h"

#include <charconv>
#include <cmath>

namespace rackchaos::observe {

bool ParseNumber(std::string_view s, double& out) {
  if (s.empty()) return false;
  // from_chars takes neither a leading '+' nor spaces; the tools print neither for these values.
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}

bool ParseCount(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  out = v;
  return true;
}

bool ParseBits(std::string_view s, uint64_t& out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    std::string_view hex = s.substr(2);
    if (hex.size() > 16) return false;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), v, 16);
    if (ec != std::errc() || end != hex.data() + hex.size()) return false;
    out = v;
    return true;
  }
  return ParseCount(s, out);
}

}  // namespace rackchaos::observe
