// Guards that run on the raw text of a YAML file before yaml-cpp sees it: binary bytes, nesting deep
// enough to exhaust yaml-cpp's recursive parser, and a second document. Plans and site inventories
// both go through them, so hostile input of either kind gets one clear FILE:LINE:COL error.
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

}  // namespace rackchaos
