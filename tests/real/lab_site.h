// What a test needs to call SshBackend's verbs on the loopback lab (tests/real/lab.h) directly: the
// inventory at a path loaded, a session open to each of its hosts, and a wall clock and an event log on
// the pool's io_context. The test stops when the inventory does not load or a host does not connect.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/event.h"
#include "runner/site/inventory.h"
#include "runner/site/wall_clock.h"
#include "runner/ssh/ssh_pool.h"

namespace rackchaos::runner::testing {

struct LabSite {
  explicit LabSite(const std::string& inventory_path) : inv(Load(inventory_path)) {
    std::vector<ssh::HostSpec> hosts;
    for (const auto& [name, h] : inv.hosts) hosts.push_back(h.spec);
    REQUIRE(pool.ConnectAll(hosts).ok());
  }
  LabSite(const LabSite&) = delete;
  LabSite& operator=(const LabSite&) = delete;

  Inventory inv;
  boost::asio::io_context io;
  ssh::SshPool pool{io};
  WallClock clock{io};
  EventLog events;

 private:
  static Inventory Load(const std::string& path) {
    auto inv = LoadInventory(path);
    REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
    return std::move(*inv);
  }
};

}  // namespace rackchaos::runner::testing
