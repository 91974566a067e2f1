// libFuzzer target: any bytes through the site inventory loader (runner/site/inventory.h). The contract
// under test: no crash, no hang, no exception escaping; errors are one line naming fuzz.yaml:LINE:COL; a
// loaded inventory's references hold (every tray's host, every run_on is a listed host), and binding
// each site-wide action to it never crashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runner/site/inventory.h"
#include "tests/fuzz/fuzz_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rr = rackchaos::runner;
  auto inv = rr::ParseInventory(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  if (!inv.ok()) {
    const std::string& m = inv.status().message();
    rackchaos::fuzz::CheckRefusal(m, "fuzz.yaml:");
    return 0;
  }
  for (const auto& [name, tray] : inv->trays)
    if (!inv->hosts.count(tray.host)) std::abort();
  for (const auto& [name, action] : inv->actions)
    if (!action.run_on.empty() && !inv->hosts.count(action.run_on)) std::abort();
  for (const auto& [name, source] : inv->observe)
    if (!source.run_on.empty() && !inv->hosts.count(source.run_on)) std::abort();
  // BindSite is for the site-wide healer actions (the loader requires their run_on); tray actions bind
  // through BindTarget, which needs a topology.
  for (const rr::ActionInfo& action : rr::HealerActions())
    if (action.target == rr::kSiteAction) (void)rr::BindSite(*inv, action.name);
  return 0;
}
