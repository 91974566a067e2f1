// Request targets of serve: the path split into decoded segments and the query into decoded parameters,
// with what a read-only UI never needs refused up front.
//
// Refused (kInvalidArgument, answered 400): bad percent-encoding; a segment that is "." or ".." or
// decodes to one (only dots), or holds '/', '\\' or NUL (path traversal, encoded or not); a NUL in a
// parameter; a repeated parameter; more than 32 parameters; a parameter value over 512 bytes. The target's
// length is bounded before it gets here (the server's 414).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rackchaos::serve {

struct Target {
  std::vector<std::string> path;             // "/db/0/runs/5" -> {"db", "0", "runs", "5"}
  std::map<std::string, std::string> query;  // "?status=failed&plan=a+b" -> {status: failed, plan: "a b"}

  // The parameter, or "" when absent.
  std::string Param(const std::string& key) const;
};

Result<Target> ParseTarget(std::string_view target);

// Percent-encodes everything but unreserved characters (RFC 3986): for a path segment or a value.
std::string UrlEncode(std::string_view text);

// A non-negative decimal integer of at most 18 digits, or kInvalidArgument naming `what`.
Result<int64_t> ParseId(const std::string& text, const std::string& what);

}  // namespace rackchaos::serve
