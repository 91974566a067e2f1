// Where a value was written in a user file (plan, inventory, policy, catalogue), and the one form of an
// error about it: "file:line:column: message".
#pragma once

#include <string>

#include "core/status.h"

namespace rackchaos {

struct SourcePos {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based
  // "file:line:column" (or just "file" when the position is unknown).
  std::string ToString() const;
};

// The one form of a plan error: Status::Invalid("file:line:column: message").
Status At(const SourcePos& pos, const std::string& message);

// `s` with control characters in its message written as escapes (\n, \t, \r, \xNN), so an error that
// quotes a plan's value (a target with a newline in it) stays one line. OK passes through.
Status OneLine(Status s);

}  // namespace rackchaos
