#include "runner/site/padded_names.h"

#include <string>
#include <vector>

namespace rackchaos::runner {
namespace {

constexpr size_t kMaxWidth = 6;      // racks: up to 100,000 in an inventory
constexpr size_t kMaxNumbers = 4;    // r01.tray03.gpu2.nvlink5 at most
constexpr size_t kMaxCandidates = 4096;

struct Number {
  size_t begin, end;  // the digits in the name
  std::string value;  // without leading zeros
};

// Tries every width of every number (from its own unpadded length up to kMaxWidth), depth first.
void Candidates(std::string_view name, const std::vector<Number>& numbers, size_t i, std::string& built, size_t from,
                std::vector<std::string>& out) {
  if (out.size() >= kMaxCandidates) return;
  if (i == numbers.size()) {
    out.push_back(built + std::string(name.substr(from)));
    return;
  }
  const Number& n = numbers[i];
  const size_t keep = built.size();
  for (size_t width = n.value.size(); width <= kMaxWidth; ++width) {
    built.append(name.substr(from, n.begin - from)).append(width - n.value.size(), '0').append(n.value);
    Candidates(name, numbers, i + 1, built, n.end, out);
    built.resize(keep);
  }
}

}  // namespace

std::optional<ComponentId> FindIgnoringPadding(const cluster::Topology& topo, std::string_view name) {
  if (auto id = topo.Find(name)) return id;
  std::vector<Number> numbers;
  for (size_t i = 0; i < name.size();) {
    if (name[i] < '0' || name[i] > '9') {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    size_t first = i;
    while (first + 1 < end && name[first] == '0') ++first;
    if (end - first > kMaxWidth || numbers.size() == kMaxNumbers) return std::nullopt;
    numbers.push_back({i, end, std::string(name.substr(first, end - first))});
    i = end;
  }
  if (numbers.empty()) return std::nullopt;
  std::vector<std::string> candidates;
  std::string built;
  Candidates(name, numbers, 0, built, 0, candidates);
  std::optional<ComponentId> found;
  for (const std::string& c : candidates) {
    auto id = topo.Find(c);
    if (!id) continue;
    if (found && *found != *id) return std::nullopt;  // two components differ only in padding: ambiguous
    found = id;
  }
  return found;
}

Status CanonicalTrayNames(Inventory& inventory, const cluster::Topology& topo) {
  std::map<std::string, TrayMapping> renamed;
  for (auto& [name, tray] : inventory.trays) {
    auto id = FindIgnoringPadding(topo, name);
    if (!id || topo.at(*id).kind != cluster::Kind::kComputeTray) {
      const std::string first = topo.at(topo.trays().front()).name;
      return At(tray.pos, "'" + name + "' is not a compute tray of " + inventory.model + " x" +
                              std::to_string(inventory.racks) + " (e.g. " + first +
                              "; rack numbers are padded to the widest rack number, r01..r99 up to 99 racks and "
                              "r001.. from 100, and may be written unpadded: r1.tray1)");
    }
    const std::string& model_name = topo.at(*id).name;
    if (renamed.count(model_name))
      return At(tray.pos, "'" + name + "' names " + model_name + ", which the inventory already maps");
    tray.tray = model_name;
    renamed.emplace(model_name, std::move(tray));
  }
  inventory.trays = std::move(renamed);
  return Status::Ok();
}

}  // namespace rackchaos::runner
