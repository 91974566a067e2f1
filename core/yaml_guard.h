// Guards that run on the raw text of a YAML file before yaml-cpp sees it: binary bytes, nesting deep
// enough to exhaust yaml-cpp's recursive parser, and a second document. Every YAML file rackchaos reads
// goes through them (core/yaml_reader.h), so hostile input of any kind gets one clear FILE:LINE:COL error;
// the text guard alone serves the other text formats.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace rackchaos {

struct YamlGuard {
  std::string_view what;  // "plan", "inventory": used in the messages
  int max_depth = 64;     // nesting of maps, lists and brackets
  int typical_depth = 5;  // what a real file needs, for the message
};

Status GuardYamlText(std::string_view text, const std::string& file, const YamlGuard& guard);

// The first of those guards alone, for text formats that are not YAML (GPU maps): refuses control bytes
// other than tab, CR and LF, and invalid UTF-8, naming FILE:LINE:COL and the byte, never the text around it.
Status GuardText(std::string_view text, const std::string& file, std::string_view what);

// For logs, which may carry a stray byte or two: refuses a NUL byte in `head` (their first block), which
// a text log does not start with and binary and compressed files nearly always do.
Status GuardNotBinary(std::string_view head, const std::string& file, std::string_view what);

}  // namespace rackchaos
