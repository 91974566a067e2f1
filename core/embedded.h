// The YAML texts built into the binary (rack models, failure catalogues, healer policies), in one registry.
//
// They are listed once, in the top CMakeLists.txt (RACKCHAOS_EMBEDDED_TEXTS: kind, name, file), and
// cmake/embed.cmake generates the table at build time, so the binary always finds its data and a new
// shipped text is one line there. The texts are bytes to this module; cluster/ and healer/ give them meaning.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rackchaos {

// The kinds of embedded text.
inline constexpr std::string_view kRackModelText = "rack-model";
inline constexpr std::string_view kFailureCatalogueText = "failure-catalogue";
inline constexpr std::string_view kHealerPolicyText = "healer-policy";

struct EmbeddedText {
  std::string_view kind;  // one of the kinds above
  std::string_view name;  // "gb200-nvl72", "llama3", "default"
  std::string_view file;  // its source in the repository, "cluster/catalogue/gb200-nvl72.yaml": names it in errors
  std::string_view text;  // NUL-terminated (text.data() is a C string)
};

// Every embedded text, in the order CMakeLists.txt lists them.
std::span<const EmbeddedText> EmbeddedTexts();
// The text of `kind` called `name`, or nullptr.
const EmbeddedText* FindEmbedded(std::string_view kind, std::string_view name);
// The names of `kind`, sorted.
std::vector<std::string> EmbeddedNames(std::string_view kind);

}  // namespace rackchaos
