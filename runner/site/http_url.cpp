#include "runner/site/http_url.h"

#include <cctype>

namespace rackchaos::runner {

std::string HttpUrl::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + prefix;
}

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  const std::string shown(url);
  auto bad = [&](const std::string& why) { return Status::Invalid("URL '" + shown + "': " + why); };
  if (url.substr(0, 8) == "https://")
    return bad("https is not supported: put a TLS-terminating reverse proxy on the runner's side and give its http URL");
  if (url.substr(0, 7) != "http://") return bad("must start with http://");
  std::string_view rest = url.substr(7);
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) return bad("a user part is not supported");
  if (path.find_first_of("?#") != std::string_view::npos) return bad("no query string or fragment");
  for (char c : url)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return bad("contains a space or control character");
  HttpUrl out;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed [ in the host");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return bad("junk after the IPv6 address");
    if (!after.empty()) port = after.substr(1);
  } else {
    const size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  if (authority.find(':') != std::string_view::npos && port.empty()) return bad("empty port");
  if (!port.empty()) {
    int p = 0;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c)) || p > 65535) return bad("port must be a number from 1 to 65535");
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return bad("port must be a number from 1 to 65535");
    out.port = static_cast<uint16_t>(p);
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  out.prefix = std::string(path);
  return out;
}

std::string UrlEncode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() * 3);
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace rackchaos::runner
