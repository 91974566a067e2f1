// Every Backend verb, two backends, one set of expectations (issue 20 item 6): each of the 18 verbs of
// cluster/backend.h (enum Verb), and the value reads, releases and fault-group verbs around them, runs
// against SimBackend and against SshBackend on the loopback lab (tests/real/lab.h), so a verb that
// behaves differently on the two shows at once.
//
// The lab's inventory here defines an action for every row of the real-mode action table
// (injectors/real_actions.h): link_down on real veth links, gpu_throttle through the lab's fake
// nvidia-smi, the others as small fakes that keep their state in files under each host's RCLAB_STATE.
// A verb with no row cannot act on any site, so on the SSH side the test asserts its documented
// refusal (Supports() false, NotSupported naming the verb, no command run) instead of skipping it; when
// a row is added, the lab must define it (checked) and the verb then runs here on both backends.
//
// What is the same on both: the status each call returns; that a fault is in effect after its apply
// and not after its revert (each backend asked the way it can answer: the simulator through its state
// and ground-truth events, the lab through its links and state files); that a fault that landed is
// recorded as ground truth on its target, attributed to its fault; that a second revert is a no-op; that
// a diagnostic's result comes back as an observation; that a fault staged in a group is in effect once
// the group is committed. Label ssh (machine-wide names: the lab's namespace and ports).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "cluster/catalogue.h"
#include "cluster/sim_backend.h"
#include "core/rng.h"
#include "injectors/real_actions.h"
#include "runner/site/ssh_backend.h"
#include "runner/site/wall_clock.h"
#include "tests/real/lab.h"
#include "tests/real/lab_site.h"

namespace rackchaos::runner {
namespace {

namespace fs = std::filesystem;
using cluster::Held;
using cluster::Target;
using cluster::Verb;

constexpr int kVerbCount = static_cast<int>(Verb::kRegionOutage) + 1;

// One rack in one region ("east"), so the region and store verbs have their targets.
cluster::Topology EastRack() {
  auto model = cluster::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cluster::Topology::Build(*model, 1, 0, {{"east", 1}});
  REQUIRE_MESSAGE(topo.ok(), topo.status().ToString());
  return std::move(*topo);
}

// The lab's fakes: each keeps its state in a file named for its target under the host's RCLAB_STATE.
constexpr const char* kLabActions = R"(  nvlink_down:
    apply: touch "$RCLAB_STATE"/nvlink-{gpu}-{port}
    verify: test -e "$RCLAB_STATE"/nvlink-{gpu}-{port}
    revert: rm -f "$RCLAB_STATE"/nvlink-{gpu}-{port}
  link_degrade:
    apply: echo {rate} > "$RCLAB_STATE"/degrade-{iface}
    verify: test -e "$RCLAB_STATE"/degrade-{iface}
    revert: rm -f "$RCLAB_STATE"/degrade-{iface}
  gpu_fail:
    apply: echo {xid} > "$RCLAB_STATE"/gpufail-{gpu}
    verify: test -e "$RCLAB_STATE"/gpufail-{gpu}
    revert: rm -f "$RCLAB_STATE"/gpufail-{gpu}
  tray_pull:
    apply: touch "$RCLAB_STATE/pulled"
    verify: test -e "$RCLAB_STATE/pulled"
    revert: rm -f "$RCLAB_STATE/pulled"
  valve_fail:
    baseline: cat "$RCLAB_STATE"/valve-{valve_object} 2>/dev/null || echo 100
    apply: echo {opening} > "$RCLAB_STATE"/valve-{valve_object}
    revert: echo {baseline} > "$RCLAB_STATE"/valve-{valve_object}
healer:
  drain: {apply: 'echo {reason} > "$RCLAB_STATE/drained"'}
  resume: {apply: 'rm -f "$RCLAB_STATE/drained"'}
  diagnostic: {apply: 'echo "all GPUs passed"'}
  gpu_reset: {apply: 'nvidia-smi -r -i {gpu} && touch "$RCLAB_STATE"/reset-{gpu}'}
  reboot: {apply: 'touch "$RCLAB_STATE"/rebooted'}
  requeue_job: {apply: 'echo {job} >> "$RCLAB_STATE/requeued"', run_on: host00}
)";

// A backend under test and the ways to ask it about its world.
struct Subject {
  const char* name;
  cluster::Backend& backend;
  Clock& clock;
  EventLog& events;
  // Whether the fault or decision `verb` is in effect on `t` now.
  std::function<bool(Verb, Target)> in_effect;
  // Lets what is due run (a diagnostic's result) until `done` or a while has passed.
  std::function<void(const std::function<bool()>& done)> settle;
};

struct Diagnostics : cluster::ObservationSink {
  std::vector<cluster::DiagnosticResult> results;
  void OnObservation(const cluster::Observation& obs) override {
    if (auto* d = std::get_if<cluster::DiagnosticResult>(&obs.body)) results.push_back(*d);
  }
};

// A verb's call with its target: `apply` turns it on (or does it, for a one-shot verb), `revert` (on/off
// verbs only) turns it off. The same calls go to both backends.
struct VerbCase {
  Verb verb;
  const char* target;
  std::function<Status(cluster::Backend&, Target, FaultId)> apply;
  std::function<Status(cluster::Backend&, Target, FaultId)> revert;  // empty: a one-shot verb
  bool fault = true;  // a fault (ground truth recorded when it lands), not a healer decision
};

std::vector<VerbCase> Cases() {
  using B = cluster::Backend;
  auto release = [](Held h) { return [h](B& b, Target t, FaultId f) { return b.Release(h, t, f); }; };
  return {
      // First, while the job still runs on the tray (the simulator crashes only a rank that runs).
      {Verb::kProcessCrash, "r01.tray01.gpu2", [](B& b, Target t, FaultId f) { return b.CrashProcesses(t.component, f); }, {}},
      {Verb::kNvlinkPort, "r01.tray01.gpu1.nvlink3", [](B& b, Target t, FaultId f) { return b.SetNvlinkPort(t.component, t.port, false, f); },
       [](B& b, Target t, FaultId f) { return b.SetNvlinkPort(t.component, t.port, true, f); }},
      {Verb::kNicLink, "r01.tray02.nic1", [](B& b, Target t, FaultId f) { return b.SetNicLink(t.component, false, f); },
       [](B& b, Target t, FaultId f) { return b.SetNicLink(t.component, true, f); }},
      {Verb::kPowerCap, "r01.tray02.gpu2", [](B& b, Target t, FaultId f) { return b.SetPowerCap(t.component, 650, f); },
       release(Held::kPowerCap)},
      {Verb::kValve, "r01.tray01.valve", [](B& b, Target t, FaultId f) { return b.SetValveOpening(t.component, 0.25, f); },
       release(Held::kValveOpening)},
      {Verb::kTrayPresence, "r01.tray02", [](B& b, Target t, FaultId f) { return b.SetTrayPresent(t.component, false, f); },
       [](B& b, Target t, FaultId f) { return b.SetTrayPresent(t.component, true, f); }},
      {Verb::kDrain, "r01.tray01", [](B& b, Target t, FaultId) { return b.Drain(t.component, "conformance\nsecond line"); },
       [](B& b, Target t, FaultId) { return b.Resume(t.component); }, false},
      // kResume is the revert of kDrain above; here on a tray that was never drained (a no-op on both).
      {Verb::kResume, "r01.tray02", [](B& b, Target t, FaultId) { return b.Resume(t.component); }, {}, false},
      {Verb::kGpuReset, "r01.tray02.gpu3", [](B& b, Target t, FaultId) { return b.ResetGpu(t.component); }, {}, false},
      {Verb::kRequeueJob, "", [](B& b, Target, FaultId) { return b.RequeueJob(0, "conformance"); }, {}, false},
      {Verb::kDiagnostic, "r01.tray01", [](B& b, Target t, FaultId) { return b.RunDiagnostic(t.component); }, {}, false},
      {Verb::kGpuFailure, "r01.tray01.gpu0", [](B& b, Target t, FaultId f) { return b.SetGpuFailed(t.component, true, 79, f); },
       [](B& b, Target t, FaultId f) { return b.SetGpuFailed(t.component, false, 79, f); }},
      {Verb::kReboot, "r01.tray02", [](B& b, Target t, FaultId) { return b.RebootNode(t.component); }, {}, false},
      {Verb::kComponentFailure, "r01.switch3", [](B& b, Target t, FaultId f) { return b.SetComponentFailed(t.component, true, f); },
       [](B& b, Target t, FaultId f) { return b.SetComponentFailed(t.component, false, f); }},
      {Verb::kLinkBandwidth, "r01.tray01.nic1", [](B& b, Target t, FaultId f) { return b.SetLinkBandwidth(t.component, -1, 0.25, f); },
       release(Held::kLinkBandwidth)},
      {Verb::kStorageRead, "r01.tray02", [](B& b, Target t, FaultId f) { return b.SetStorageRead(t.component, 0.5, f); },
       release(Held::kStorageRead)},
      {Verb::kStoreRate, "east.objstore", [](B& b, Target t, FaultId f) { return b.SetStoreRate(t.component, 0, f); },
       release(Held::kStoreRate)},
      {Verb::kRegionOutage, "east", [](B& b, Target t, FaultId f) { return b.SetRegionDown(t.component, true, f); },
       [](B& b, Target t, FaultId f) { return b.SetRegionDown(t.component, false, f); }},
  };
}

// True when a fault that landed since event `from` is on the record as ground truth on `t` (or a part
// under it), attributed to `fault`.
bool GroundTruth(const EventLog& events, size_t from, const cluster::Topology& topo, Target t, FaultId fault) {
  for (size_t i = from; i < events.events().size(); ++i)
    if (auto* p = std::get_if<PhysicsChanged>(&events.events()[i].body); p && p->cause == fault)
      for (ComponentId c = p->component; c != kNoComponent; c = topo.at(c).parent)
        if (c == t.component) return true;
  return false;
}

size_t CommandsSince(const EventLog& events, size_t from) {
  size_t n = 0;
  for (size_t i = from; i < events.events().size(); ++i) n += std::holds_alternative<ActionTaken>(events.events()[i].body);
  return n;
}

// The suite. `acts(verb)`: whether this backend can carry the verb out; where it cannot, the verb must
// refuse as documented and touch nothing.
void RunEveryVerb(Subject s, const cluster::Topology& topo, const std::function<bool(Verb)>& acts, Diagnostics& diag) {
  std::vector<bool> covered(kVerbCount, false);
  FaultId fault = 100;
  for (const VerbCase& c : Cases()) {
    ++fault;
    covered[static_cast<int>(c.verb)] = true;
    const std::string verb = cluster::VerbName(c.verb), subject = s.name;
    CAPTURE(subject);
    CAPTURE(verb);
    Target t{kNoComponent, -1};
    if (*c.target) {
      auto resolved = topo.ResolveTarget(c.target);
      REQUIRE_MESSAGE(resolved.ok(), resolved.status().ToString());
      t = *resolved;
    }
    const size_t before = s.events.events().size();
    const size_t still = s.backend.StillApplied();
    if (!acts(c.verb)) {
      CHECK_FALSE(s.backend.Supports(c.verb));
      const Status refused = c.apply(s.backend, t, fault);
      CHECK(refused.code() == StatusCode::kNotSupported);
      CHECK_MESSAGE(refused.message().find(std::string("carries out the '") + verb + "' verb") != std::string::npos,
                    refused.message());
      CHECK(CommandsSince(s.events, before) == 0);
      CHECK(s.backend.StillApplied() == still);
      if (c.revert) CHECK(c.revert(s.backend, t, fault).code() == StatusCode::kNotSupported);
      continue;
    }
    CHECK(s.backend.Supports(c.verb));
    if (c.revert) CHECK_FALSE(s.in_effect(c.verb, t));
    const Status applied = c.apply(s.backend, t, fault);
    REQUIRE_MESSAGE(applied.ok(), applied.ToString());
    if (c.fault) CHECK(GroundTruth(s.events, before, topo, t, fault));
    if (c.verb == Verb::kDiagnostic) {
      s.settle([&] { return !diag.results.empty(); });
      REQUIRE(diag.results.size() == 1);
      CHECK(diag.results[0].tray == t.component);
      CHECK(diag.results[0].passed);
    }
    if (!c.revert) continue;
    CHECK(s.in_effect(c.verb, t));
    const Status reverted = c.revert(s.backend, t, fault);
    CHECK_MESSAGE(reverted.ok(), reverted.ToString());
    CHECK_FALSE(s.in_effect(c.verb, t));
    const Status again = c.revert(s.backend, t, fault);  // reverting what is not applied changes nothing
    CHECK_MESSAGE(again.ok(), again.ToString());
    CHECK_FALSE(s.in_effect(c.verb, t));
  }
  for (int v = 0; v < kVerbCount; ++v) CHECK_MESSAGE(covered[v], cluster::VerbName(static_cast<Verb>(v)));

  // Refused on both, running nothing: a job the plan does not have (NotFound on both), a healer verb on
  // a part it does not take and a power cap read of a NIC (the simulator: InvalidArgument; a site:
  // NotSupported, "drain on real hosts takes a tray", which validation turns into bad input alike).
  const size_t commands = CommandsSince(s.events, 0);
  CHECK(s.backend.RequeueJob(7, "no such job").code() == StatusCode::kNotFound);
  const ComponentId gpu = *topo.Find("r01.tray01.gpu0"), nic = *topo.Find("r01.tray01.nic0");
  CHECK_FALSE(s.backend.Drain(gpu, "not a tray").ok());
  CHECK_FALSE(s.backend.GetPowerCap(nic).ok());
  CHECK(CommandsSince(s.events, 0) == commands);

  // A fault group: staged where the backend stages (its lead is not zero), in effect once committed.
  const Target link = *topo.ResolveTarget("r01.tray01.nic0");
  const cluster::GroupLeads leads = s.backend.Leads();
  const Time at = s.clock.Now() + Duration::Millis(500);
  const bool staged = s.backend.StageGroup(at);
  CHECK(staged == (leads.stage > Duration{}));
  REQUIRE(s.backend.SetNicLink(link.component, false, 300).ok());
  CHECK(s.backend.SealGroup().empty());
  CHECK(s.backend.CommitGroup(at).empty());
  CHECK(s.in_effect(Verb::kNicLink, link));
  REQUIRE(s.backend.SetNicLink(link.component, true, 300).ok());
  CHECK_FALSE(s.in_effect(Verb::kNicLink, link));
  CHECK(s.backend.StillApplied() == 0);
}

// The simulator's answer: the last of a pair of ground-truth events on the component.
bool LastIs(const EventLog& events, ComponentId c, std::initializer_list<const char*> on,
            std::initializer_list<const char*> off) {
  bool in = false;
  for (const Event& e : events.events())
    if (auto* p = std::get_if<PhysicsChanged>(&e.body); p && p->component == c) {
      for (const char* w : on) in = in || p->what == w;
      for (const char* w : off) in = in && p->what != w;
    }
  return in;
}

TEST_CASE("every verb: SimBackend") {
  cluster::Topology topo = EastRack();
  VirtualClock clock;
  EventLog events;
  cluster::SimBackend sim(topo, clock, Rng(1), events);
  Diagnostics diag;
  sim.Subscribe(&diag);
  cluster::JobConfig job;
  job.name = "train";
  job.gpus = 8;
  REQUIRE(sim.StartJobs({job}).ok());
  sim.StartObserving();
  clock.RunUntil(clock.Now() + Duration::Minutes(5));
  REQUIRE(sim.JobOfGpu(*topo.Find("r01.tray01.gpu2")) == 0);  // where process_crash lands
  auto in_effect = [&](Verb verb, Target t) -> bool {
    switch (verb) {
      case Verb::kNvlinkPort: {
        bool down = false;
        for (const Event& e : events.events())
          if (auto* p = std::get_if<PhysicsChanged>(&e.body); p && p->component == t.component && p->value == t.port)
            down = p->what == "nvlink_down" ? true : p->what == "nvlink_up" ? false : down;
        return down;
      }
      case Verb::kNicLink: return LastIs(events, t.component, {"link_down"}, {"link_up"});
      case Verb::kPowerCap: return std::abs(*sim.GetPowerCap(t.component) - 650) < 0.5;
      case Verb::kValve: return *sim.GetValveOpening(t.component) < 0.5;
      case Verb::kTrayPresence: return LastIs(events, t.component, {"removed", "unpowered"}, {"inserted"});
      case Verb::kDrain: return sim.TrayDrained(t.component);
      case Verb::kGpuFailure: return !sim.GpuAlive(t.component);
      case Verb::kComponentFailure: return LastIs(events, t.component, {"failed"}, {"repaired"});
      case Verb::kLinkBandwidth: {
        double fraction = 1;
        for (const Event& e : events.events())
          if (auto* p = std::get_if<PhysicsChanged>(&e.body); p && p->component == t.component && p->what == "link_bandwidth")
            fraction = p->value;
        return fraction < 1;
      }
      case Verb::kStorageRead: return LastIs(events, t.component, {"storage_read"}, {"storage_read_up"});
      case Verb::kStoreRate: return LastIs(events, t.component, {"object_store_read"}, {"object_store_up"});
      case Verb::kRegionOutage: return LastIs(events, t.component, {"region_down"}, {"region_up"});
      default: FAIL("no in-effect probe for ", cluster::VerbName(verb)); return false;
    }
  };
  auto settle = [&](const std::function<bool()>& done) {
    const Time until = clock.Now() + Duration::Hours(1);
    while (!done() && clock.RunNext(until)) {
    }
  };
  RunEveryVerb({"sim", sim, clock, events, in_effect, settle}, topo, [](Verb) { return true; }, diag);
}

TEST_CASE("every verb: SshBackend on the loopback lab") {
  auto lab = testing::Lab::Start();
  REQUIRE_MESSAGE(lab.ok(), lab.status().ToString());
  const std::string path = (*lab)->WriteInventory("every-verb.yaml", "30s", "",
                                                  {{"serial: LAB-T01,", "serial: LAB-T01, valve: {endpoint: cdu0, object: v1},"},
                                                   {"serial: LAB-T02,", "serial: LAB-T02, valve: {endpoint: cdu0, object: v2},"}});
  std::ofstream(path, std::ios::app) << kLabActions;
  testing::LabSite site(path);
  // The lab defines every action of the table: a row added there is run here, on both backends.
  for (const injectors::RealAction& a : injectors::RealActions())
    if (a.verb) CHECK_MESSAGE(site.inv.actions.count(a.name), "the lab's every-verb inventory lacks ", a.name);
  cluster::Topology topo = EastRack();
  WallClock& clock = site.clock;
  EventLog& events = site.events;
  SshBackendOptions options;
  options.job_names[0] = "train";
  SshBackend ssh(site.inv, topo, site.pool, clock, events, options);
  Diagnostics diag;
  ssh.Subscribe(&diag);
  const fs::path state = fs::path((*lab)->dir()) / "state";
  auto host_of = [&](Target t) {
    const ComponentId tray = topo.at(t.component).kind == cluster::Kind::kComputeTray ? t.component
                             : topo.at(topo.at(t.component).parent).kind == cluster::Kind::kComputeTray
                                 ? topo.at(t.component).parent
                                 : kNoComponent;
    REQUIRE(tray != kNoComponent);
    return state / (topo.at(tray).name == "r01.tray01" ? "host00" : "host01");
  };
  auto gpu_index = [&](Target t) { return std::to_string(topo.at(t.component).index); };
  auto in_effect = [&](Verb verb, Target t) -> bool {
    const std::string name = topo.at(t.component).name;
    switch (verb) {
      case Verb::kNvlinkPort: return fs::exists(host_of(t) / ("nvlink-" + gpu_index(t) + "-" + std::to_string(t.port)));
      case Verb::kNicLink:
        return !(*lab)->LinkUp((*lab)->Iface(name.find("tray01") != std::string::npos ? 'a' : 'b', name.back() - '0'));
      case Verb::kPowerCap: return std::abs(*ssh.GetPowerCap(t.component) - 650) < 0.5;
      case Verb::kValve: return *ssh.GetValveOpening(t.component) < 0.5;
      case Verb::kTrayPresence: return fs::exists(host_of(t) / "pulled");
      case Verb::kGpuFailure: return fs::exists(host_of(t) / ("gpufail-" + gpu_index(t)));
      case Verb::kDrain: return fs::exists(host_of(t) / "drained");
      case Verb::kLinkBandwidth:
        return fs::exists(host_of(t) / ("degrade-" + (*lab)->Iface(name.find("tray01") != std::string::npos ? 'a' : 'b',
                                                                     name.back() - '0')));
      default: FAIL("no in-effect probe for ", cluster::VerbName(verb)); return false;
    }
  };
  auto settle = [&](const std::function<bool()>& done) {
    const Time until = clock.Now() + Duration::Seconds(5);
    while (!done() && clock.RunNext(until, done)) {
    }
  };
  RunEveryVerb({"ssh", ssh, clock, events, in_effect, settle}, topo,
               [](Verb v) { return injectors::RealActionFor(v) != nullptr; }, diag);
  // The one-shot healer verbs ran their commands on the hosts they concern.
  CHECK(fs::exists(state / "host01" / "reset-3"));
  CHECK(testing::ReadText((state / "host00" / "requeued").string()) == "train\n");
  // Every command the verbs ran succeeded.
  for (const Event& e : events.events())
    if (auto* a = std::get_if<ActionTaken>(&e.body)) CHECK_MESSAGE(a->ok, a->detail);
}

}  // namespace
}  // namespace rackchaos::runner
