// What every YAML loader's fuzz target asks of a refusal: one line that starts with the file's name
// (`file` is "fuzz.yaml" or, where the loader always gives a position, "fuzz.yaml:"). Aborts otherwise,
// which libFuzzer and fuzz_replay report as a crash with the input kept.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

namespace rackchaos::fuzz {

inline void CheckRefusal(const std::string& message, std::string_view file = "fuzz.yaml") {
  if (message.find('\n') != std::string::npos) std::abort();  // errors stay one line
  if (message.rfind(file, 0) != 0) std::abort();              // and name the file
}

}  // namespace rackchaos::fuzz
