// Which faults an isolation is credited to (time to isolate, recall, correct and false isolations):
// those in force on a related part at the isolation, and a fault already over only when the isolation
// explains a detection credited to it. Every number worked out by hand.
#include "healer/metrics.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

using testing::Fault;
using testing::Id;
using testing::Min;
using testing::Sec;
using testing::Topo;

std::vector<Event> FailAndRevert(FaultId id, const std::string& gpu, Time at, std::optional<Time> revert) {
  const ComponentId g = Id(gpu);
  std::vector<Event> out = {{at, PhysicsChanged{g, "failed", 79, id}},
                            {at, FaultInjected{id, "gpu_fail", g, -1, gpu, "xid=79"}}};
  if (revert) {
    out.push_back({*revert, PhysicsChanged{g, "repaired", 0, id}});
    out.push_back({*revert, FaultReverted{id, ""}});
  }
  return out;
}

// Three GPU failures in r01.tray06, one after the other:
//   #1 gpu0 1m-3m: its Xid is polled at 3m05s, just after the revert (credited to #1), and gpu0 is
//      isolated at 3m25s for it.
//   #2 gpu1 5m-10m: the healer never sees it.
//   #3 gpu2 from 20m: detected at 20m10s, the tray isolated at 20m30s for it; gpu1 isolated at 40m for
//      that same detection (a wrong choice: #2 on gpu1 ended 30 minutes before).
std::vector<Event> ThreeFailures() {
  std::vector<Event> ev;
  for (const auto& part : {FailAndRevert(1, "r01.tray06.gpu0", Min(1), Min(3)),
                           FailAndRevert(2, "r01.tray06.gpu1", Min(5), Min(10)),
                           FailAndRevert(3, "r01.tray06.gpu2", Min(20), std::nullopt)})
    ev.insert(ev.end(), part.begin(), part.end());
  auto at = [&](Time t) {
    auto it = ev.begin();
    while (it != ev.end() && it->at <= t) ++it;
    return it;
  };
  ev.insert(at(Min(3) + Sec(5)), {Min(3) + Sec(5), Detected{1, "xid", Id("r01.tray06.gpu0"), "Xid 79"}});
  ev.insert(at(Min(3) + Sec(25)), {Min(3) + Sec(25), Isolated{Id("r01.tray06.gpu0"), "gpu", {1}, "Xid 79"}});
  ev.push_back({Min(20) + Sec(10), Detected{2, "xid", Id("r01.tray06.gpu2"), "Xid 79"}});
  ev.push_back({Min(20) + Sec(30), Isolated{Id("r01.tray06"), "compute_tray", {2}, "Xid 79"}});
  ev.push_back({Min(40), Isolated{Id("r01.tray06.gpu1"), "gpu", {2}, "Xid 79"}});
  return ev;
}

TEST_CASE("healer.metrics.credit: an isolation goes to the faults in force and to a reverted one only through its detection") {
  const RunMetrics m = ComputeMetrics(ThreeFailures(), Topo(), {}, Min(60));
  // #1 ended before its isolation, which explains its own detection: credited.
  CHECK(Fault(m, 1).time_to_detect == Sec(125));
  CHECK(Fault(m, 1).time_to_isolate == Sec(145));
  CHECK(Fault(m, 1).isolated == std::vector<std::string>{"r01.tray06.gpu0"});  // not the later tray or gpu1
  // #2 ended 10 minutes before the tray's isolation, which explains #3's detection: not credited, missed.
  CHECK_FALSE(Fault(m, 2).time_to_isolate.has_value());
  CHECK(Fault(m, 2).isolated.empty());
  CHECK(m.missed_faults == std::vector<std::string>{"#2 gpu_fail r01.tray06.gpu1"});
  CHECK(m.recall == doctest::Approx(2.0 / 3));
  // #3 in force at both of its isolations: the tray (its target's tray) is correct, gpu1 is not.
  CHECK(Fault(m, 3).time_to_isolate == Sec(30));
  CHECK(Fault(m, 3).isolated == std::vector<std::string>{"r01.tray06", "r01.tray06.gpu1"});
  CHECK(m.isolations == 3);
  CHECK(m.correct_isolations == 2);
  CHECK(m.precision == doctest::Approx(2.0 / 3));
  CHECK(m.faulty_isolations == std::vector<std::string>{"r01.tray06.gpu0", "r01.tray06"});
  CHECK(m.false_isolations == std::vector<std::string>{"r01.tray06.gpu1 at 40m"});
}

TEST_CASE("healer.metrics.credit: a fault still in force takes an isolation of its part without a detection of its own") {
  // #2 on gpu1 never reverted: the 40m isolation of gpu1 is its, and correct, though it explains #3's detection.
  std::vector<Event> ev = ThreeFailures();
  std::erase_if(ev, [](const Event& e) {
    const auto* r = std::get_if<FaultReverted>(&e.body);
    const auto* p = std::get_if<PhysicsChanged>(&e.body);
    return (r && r->fault == 2) || (p && p->cause == 2 && p->what == "repaired");
  });
  const RunMetrics m = ComputeMetrics(ev, Topo(), {}, Min(60));
  CHECK(Fault(m, 2).time_to_isolate == Min(15) + Sec(30));  // the tray at 20m30s holds gpu1
  CHECK(Fault(m, 2).isolated == std::vector<std::string>{"r01.tray06", "r01.tray06.gpu1"});
  CHECK(m.missed_faults.empty());
  CHECK(m.correct_isolations == 3);
  CHECK(m.false_isolations.empty());
}

}  // namespace
}  // namespace rackchaos::healer
