// HttpUrl: an http:// URL as the site inventory's `prometheus.url` and the HTTP client (http_client.h) take
// it. Apart from the client so the inventory loader links no Asio (and builds with clang 14, whose
// coroutines libstdc++ 12 does not accept: scripts/run-fuzz).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace rackchaos::runner {

// "http://host[:port][/prefix]" split up. `prefix` is "" or starts with '/' and has no trailing '/'.
struct HttpUrl {
  std::string host;  // an address literal or a DNS name; IPv6 literals in brackets in the URL, bare here
  uint16_t port = 80;
  std::string prefix;
  std::string ToString() const;  // "http://host:port/prefix"
};
// kInvalidArgument naming what is wrong (https, a user part, a query string, a bad port, ...).
Result<HttpUrl> ParseHttpUrl(std::string_view url);
// application/x-www-form-urlencoded: letters, digits and -._~ kept, everything else %XX.
std::string UrlEncode(std::string_view text);

}  // namespace rackchaos::runner
