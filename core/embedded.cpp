#include "core/embedded.h"

#include <algorithm>

namespace rackchaos {

const EmbeddedText* FindEmbedded(std::string_view kind, std::string_view name) {
  for (const EmbeddedText& t : EmbeddedTexts())
    if (t.kind == kind && t.name == name) return &t;
  return nullptr;
}

std::vector<std::string> EmbeddedNames(std::string_view kind) {
  std::vector<std::string> out;
  for (const EmbeddedText& t : EmbeddedTexts())
    if (t.kind == kind) out.emplace_back(t.name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace rackchaos
