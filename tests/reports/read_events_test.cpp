// ReportStore::ReadRunEvents: every field AppendEvents stored comes back, including a restart's checkpoint
// store share (schema version 11) and tray lists stored as differences; older files read that share as none.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "reports/store.h"
#include "tests/reports/test_util.h"

using namespace rackchaos;
using namespace rackchaos::reports;
namespace t = rackchaos::reports::testing;

namespace {

std::string Exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string IdsText(const std::vector<uint32_t>& ids) {
  std::string out;
  for (uint32_t id : ids) out += std::to_string(id) + ",";
  return out;
}

// Every field of an event, doubles exactly: equal texts mean equal events.
std::string AllFields(const Event& e) {
  auto fields = [](const auto& b) -> std::string {
    using T = std::decay_t<decltype(b)>;
    if constexpr (std::is_same_v<T, FaultInjected>)
      return std::to_string(b.fault) + "|" + b.kind + "|" + std::to_string(b.target) + "|" + std::to_string(b.port) +
             "|" + b.selector + "|" + b.detail;
    else if constexpr (std::is_same_v<T, FaultReverted>)
      return std::to_string(b.fault) + "|" + b.detail;
    else if constexpr (std::is_same_v<T, PhysicsChanged>)
      return std::to_string(b.component) + "|" + b.what + "|" + Exact(b.value) + "|" + std::to_string(b.cause);
    else if constexpr (std::is_same_v<T, Detected>)
      return std::to_string(b.detection) + "|" + b.detector + "|" + std::to_string(b.component) + "|" + b.symptom;
    else if constexpr (std::is_same_v<T, Isolated>)
      return std::to_string(b.component) + "|" + b.domain + "|" + IdsText(b.because) + "|" + b.reason;
    else if constexpr (std::is_same_v<T, ActionTaken>)
      return b.action + "|" + std::to_string(b.component) + "|" + std::to_string(b.job) + "|" + (b.ok ? "ok" : "no") +
             "|" + b.detail;
    else if constexpr (std::is_same_v<T, JobChanged>)
      return std::to_string(b.job) + "|" + JobStateName(b.state) + "|" + Exact(b.steps) + "|" + Exact(b.step_time_s) +
             "|" + Exact(b.speed) + "|" + std::to_string(b.gpus) + "|" + std::to_string(b.lost_work.us) + "|" +
             std::to_string(b.cause) + "|" + b.detail + "|" + IdsText(b.trays.ids()) + "|" +
             std::to_string(b.store_lost_work.us) + "|" + std::to_string(b.store_cause);
    else
      return std::to_string(b.job) + "|" + Exact(b.step);
  };
  return std::to_string(e.at.us) + " " + EventTypeName(e.body) + " " + std::visit(fields, e.body);
}

std::vector<std::string> AllFields(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) out.push_back(AllFields(e));
  return out;
}

}  // namespace

TEST_CASE("reports.store: ReadRunEvents gives back every field of the events AppendEvents stored") {
  t::TempDir dir;
  auto store = ReportStore::Open(dir.File("r.db"));
  REQUIRE(store.ok());
  auto run = store->BeginRun(t::SampleRunInfo());
  REQUIRE(run.ok());
  std::vector<Event> events = t::SampleEvents();
  for (const Event& e : t::EdgeEvents()) events.push_back(e);
  // A restart whose lost work is partly a failed checkpoint store's, and a placement one tray away
  // from a long one (stored as a difference).
  std::vector<ComponentId> wide, moved;
  for (ComponentId i = 100; i < 140; ++i) wide.push_back(i);
  moved = wide;
  moved[7] = 200;
  std::sort(moved.begin(), moved.end());
  events.push_back(
      {Duration::Seconds(900), JobChanged{0, JobState::kRunning, 70, 1.25, 1, 72, {}, kNoFault, "", wide}});
  JobChanged restart{0, JobState::kRestarting, 50, 0, 0, 72, Duration::Minutes(50), 2, "from checkpoint", moved};
  restart.store_lost_work = Duration::Minutes(40);
  restart.store_cause = 1;
  events.push_back({Duration::Seconds(960), restart});
  std::vector<Event> first(events.begin(), events.begin() + 9), rest(events.begin() + 9, events.end());
  REQUIRE(store->AppendEvents(*run, first).ok());
  REQUIRE(store->AppendEvents(*run, rest).ok());
  CHECK(*StoreAccess::DbOf(*store).QueryInt("SELECT count(*) FROM placements WHERE base_id IS NOT NULL", "deltas") == 1);

  auto read = store->ReadRunEvents(*run);
  REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  CHECK(AllFields(*read) == AllFields(events));
  CHECK(store->ReadRunEvents(*run + 1).status().code() == StatusCode::kNotFound);
}

TEST_CASE("reports.store: job events stored before schema version 11 read back with no checkpoint store share") {
  t::TempDir dir;
  const std::string path = dir.File("v1.db");
  t::LoadDump(t::DataFile("v1_quickstart.sql"), path);
  auto store = ReportStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  CHECK(*StoreAccess::DbOf(*store).QueryInt("SELECT count(*) FROM job_events WHERE store_lost_work_us != 0 OR "
                              "store_cause_fault_id IS NOT NULL", "old rows") == 0);
  auto events = store->ReadRunEvents(1);
  REQUIRE_MESSAGE(events.ok(), events.status().ToString());
  CHECK(static_cast<int64_t>(events->size()) == *store->CountEvents(1));
  int restarts = 0;
  for (const Event& e : *events) {
    if (const auto* c = std::get_if<JobChanged>(&e.body)) {
      CHECK(c->store_lost_work == Duration{});
      CHECK(c->store_cause == kNoFault);
      restarts += c->lost_work > Duration{};
    }
  }
  CHECK(restarts > 0);  // the quickstart restarts its job: lost work that all stays with the restart's cause
}
