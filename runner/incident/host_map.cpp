#include "runner/incident/host_map.h"

#include <vector>

#include "core/strings.h"
#include "core/user_file.h"
#include "core/yaml_guard.h"

namespace rackchaos::incident {
bool IsPciAddress(const std::string& s) {
  return s.size() >= 7 && s.find(':') != std::string::npos &&
         s.find_first_not_of("0123456789abcdefABCDEF:.") == std::string::npos;
}

std::string MapAddress(std::string s) {
  if (!IsPciAddress(s)) return s;
  return ToLower(s);
}

Result<HostMap> ParseGpuMap(std::string_view text, const std::string& path) {
  HostMap map;
  int line_no = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::pair<std::string, int>> words;  // word, 1-based column
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
      if (j > i) words.emplace_back(std::string(line.substr(i, j - i)), static_cast<int>(i) + 1);
      i = j;
    }
    if (words.empty()) continue;
    for (const auto& [w, col] : words) {
      for (char c : w) {
        if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) >= 0x7f)
          return Status::Invalid(path + ":" + std::to_string(line_no) + ":" + std::to_string(col) +
                                 ": control or non-ASCII byte in a name; names are printable ASCII");
      }
    }
    if (words.size() == 2) {
      map.trays[words[0].first] = words[1].first;
    } else if (words.size() == 3) {
      std::string address = MapAddress(words[1].first);
      map.targets[words[0].first + " " + address] = words[2].first;
    } else {
      return Status::Invalid(path + ":" + std::to_string(line_no) + ":" + std::to_string(words[0].second) + ": " +
                             std::to_string(words.size()) +
                             " words; expected 'HOST TRAY' (node07 r01.tray03) or 'HOST ADDRESS TARGET' "
                             "(node07 0000:3b:00 r01.tray03.gpu2; HOST may be *)");
    }
  }
  return map;
}

Result<HostMap> LoadGpuMap(const std::string& path) {
  RC_ASSIGN_OR_RETURN(std::string text, ReadUserFile(path, {"GPU map", kMaxGpuMapBytes}));
  RC_RETURN_IF_ERROR(GuardText(text, path, "GPU map"));
  return ParseGpuMap(text, path);
}

void MergeHostMap(HostMap& into, const HostMap& from) {
  for (const auto& [k, v] : from.trays) into.trays[k] = v;
  for (const auto& [k, v] : from.targets) into.targets[k] = v;
}

}  // namespace rackchaos::incident
