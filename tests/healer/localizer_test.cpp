// Localization: which smallest failure domain explains a batch of symptoms.
#include "healer/localizer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/healer/test_util.h"

namespace rackchaos::healer {
namespace {

using testing::Id;
using testing::Topo;

Symptom S(SymptomClass cls, const std::string& component) {
  Symptom s;
  s.cls = cls;
  s.detector = SymptomClassName(cls);
  s.component = Id(component);
  return s;
}

// The chosen domains by name, in output order.
std::vector<std::string> Domains(const std::vector<IsolationDecision>& d) {
  std::vector<std::string> out;
  for (const auto& x : d) out.push_back(Topo().at(x.domain).name);
  return out;
}

std::vector<IsolationDecision> Run(const std::vector<Symptom>& s, int min_trays = 3) {
  return Localize(s, Topo(), min_trays);
}

TEST_CASE("healer.localize: one GPU's symptom isolates that GPU") {
  auto d = Run({S(SymptomClass::kXid, "r01.tray03.gpu2")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].domain == Id("r01.tray03.gpu2"));
  CHECK(d[0].symptoms == std::vector<size_t>{0});
  CHECK(d[0].reason == "one GPU explains the symptoms");

  // Several symptoms of the same GPU are still that GPU.
  auto same = Run({S(SymptomClass::kXid, "r01.tray03.gpu2"), S(SymptomClass::kStraggler, "r01.tray03.gpu2"),
                   S(SymptomClass::kLinkDown, "r01.tray03.gpu2")});
  CHECK(Domains(same) == std::vector<std::string>{"r01.tray03.gpu2"});
  CHECK(same[0].symptoms == std::vector<size_t>{0, 1, 2});
}

TEST_CASE("healer.localize: low flow with hot GPUs of a tray is the tray's valve") {
  auto d = Run({S(SymptomClass::kFlowLow, "r01.tray03.valve"), S(SymptomClass::kThermal, "r01.tray03.gpu0"),
                S(SymptomClass::kThermal, "r01.tray03.gpu1"), S(SymptomClass::kThermal, "r01.tray03.gpu2"),
                S(SymptomClass::kThermal, "r01.tray03.gpu3")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].domain == Id("r01.tray03.valve"));
  CHECK(d[0].symptoms == std::vector<size_t>{0, 1, 2, 3, 4});
  CHECK(d[0].reason == "coolant flow low");

  // Two hot GPUs of one tray without a flow reading also point at the valve.
  auto hot = Run({S(SymptomClass::kThermal, "r02.tray07.gpu0"), S(SymptomClass::kThermal, "r02.tray07.gpu3")});
  CHECK(Domains(hot) == std::vector<std::string>{"r02.tray07.valve"});
  CHECK(hot[0].reason == "GPUs of one tray overheating together");
}

TEST_CASE("healer.localize: a lost heartbeat is the tray, whatever else the tray reports") {
  auto d = Run({S(SymptomClass::kHeartbeatLost, "r01.tray05"), S(SymptomClass::kXid, "r01.tray05.gpu1")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].domain == Id("r01.tray05"));
  CHECK(d[0].symptoms == std::vector<size_t>{0, 1});
  CHECK(d[0].reason == "node stopped answering");
}

TEST_CASE("healer.localize: two GPUs of one tray failing together is the tray") {
  auto d = Run({S(SymptomClass::kXid, "r01.tray03.gpu0"), S(SymptomClass::kXid, "r01.tray03.gpu3")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].domain == Id("r01.tray03"));
  CHECK(d[0].reason == "2 GPUs of one tray failing together");
  // One hot GPU and one other sick GPU: still two GPUs of the tray.
  auto mixed = Run({S(SymptomClass::kThermal, "r01.tray03.gpu0"), S(SymptomClass::kStraggler, "r01.tray03.gpu1")});
  CHECK(Domains(mixed) == std::vector<std::string>{"r01.tray03"});
}

TEST_CASE("healer.localize: a NIC link down is that NIC, beside a sick GPU of the same tray") {
  auto d = Run({S(SymptomClass::kLinkDown, "r01.tray03.nic1")});
  CHECK(Domains(d) == std::vector<std::string>{"r01.tray03.nic1"});
  CHECK(d[0].reason == "NIC link down");

  auto both = Run({S(SymptomClass::kXid, "r01.tray03.gpu2"), S(SymptomClass::kLinkDown, "r01.tray03.nic1")});
  REQUIRE(both.size() == 2);
  CHECK(Domains(both) == std::vector<std::string>{"r01.tray03.nic1", "r01.tray03.gpu2"});
  CHECK(both[0].symptoms == std::vector<size_t>{1});
  CHECK(both[1].symptoms == std::vector<size_t>{0});
}

TEST_CASE("healer.localize: thermal trouble on 3 trays of a rack is its CDU - on 2 trays, each GPU") {
  auto three = Run({S(SymptomClass::kThermal, "r01.tray01.gpu0"), S(SymptomClass::kThermal, "r01.tray02.gpu1"),
                    S(SymptomClass::kFlowLow, "r01.tray09.valve")});
  REQUIRE(three.size() == 1);
  CHECK(three[0].domain == Id("r01.cdu"));
  CHECK(three[0].symptoms == std::vector<size_t>{0, 1, 2});
  CHECK(three[0].reason == "3 trays overheating together: shared cooling");

  // Below shared_domain_min_trays nothing is shared: one hot GPU per tray is that GPU.
  auto two = Run({S(SymptomClass::kThermal, "r01.tray01.gpu0"), S(SymptomClass::kThermal, "r01.tray02.gpu1")});
  CHECK(Domains(two) == std::vector<std::string>{"r01.tray01.gpu0", "r01.tray02.gpu1"});

  // The threshold comes from the policy.
  auto four_needed = Run({S(SymptomClass::kThermal, "r01.tray01.gpu0"), S(SymptomClass::kThermal, "r01.tray02.gpu1"),
                          S(SymptomClass::kThermal, "r01.tray03.gpu1")},
                         4);
  CHECK(Domains(four_needed) == std::vector<std::string>{"r01.tray01.gpu0", "r01.tray02.gpu1", "r01.tray03.gpu1"});
}

TEST_CASE("healer.localize: heartbeats lost on 3 trays of a rack is the rack") {
  auto d = Run({S(SymptomClass::kHeartbeatLost, "r02.tray01"), S(SymptomClass::kHeartbeatLost, "r02.tray02"),
                S(SymptomClass::kHeartbeatLost, "r02.tray16")});
  REQUIRE(d.size() == 1);
  CHECK(d[0].domain == Id("r02"));
  CHECK(d[0].reason == "3 trays lost together: shared rack power or network");

  // Other symptoms on the same batch are still localized on their own.
  auto plus = Run({S(SymptomClass::kHeartbeatLost, "r02.tray01"), S(SymptomClass::kHeartbeatLost, "r02.tray02"),
                   S(SymptomClass::kHeartbeatLost, "r02.tray16"), S(SymptomClass::kXid, "r01.tray04.gpu1")});
  CHECK(Domains(plus) == std::vector<std::string>{"r02", "r01.tray04.gpu1"});
}

TEST_CASE("healer.localize: racks are never merged into one domain") {
  auto thermal = Run({S(SymptomClass::kThermal, "r01.tray01.gpu0"), S(SymptomClass::kThermal, "r01.tray02.gpu0"),
                      S(SymptomClass::kThermal, "r02.tray01.gpu0"), S(SymptomClass::kThermal, "r02.tray02.gpu0")});
  CHECK(Domains(thermal) ==
        std::vector<std::string>{"r01.tray01.gpu0", "r01.tray02.gpu0", "r02.tray01.gpu0", "r02.tray02.gpu0"});

  auto lost = Run({S(SymptomClass::kHeartbeatLost, "r01.tray01"), S(SymptomClass::kHeartbeatLost, "r01.tray02"),
                   S(SymptomClass::kHeartbeatLost, "r02.tray01")});
  CHECK(Domains(lost) == std::vector<std::string>{"r01.tray01", "r01.tray02", "r02.tray01"});
}

TEST_CASE("healer.localize: job-level symptoms are left out - the output is deterministic") {
  Symptom job;
  job.cls = SymptomClass::kJobFailed;
  job.job = 4;
  CHECK(Run({job}).empty());
  auto d = Run({job, S(SymptomClass::kXid, "r01.tray03.gpu2"), job});
  REQUIRE(d.size() == 1);
  CHECK(d[0].symptoms == std::vector<size_t>{1});

  std::vector<Symptom> batch = {S(SymptomClass::kXid, "r02.tray03.gpu2"), S(SymptomClass::kLinkDown, "r01.tray04.nic0"),
                                S(SymptomClass::kHeartbeatLost, "r01.tray08")};
  CHECK(Domains(Run(batch)) == std::vector<std::string>{"r01.tray04.nic0", "r01.tray08", "r02.tray03.gpu2"});
  CHECK(Domains(Run(batch)) == Domains(Run(batch)));
}

// Parts that report their own health: a DPU with the NIC links behind it (GB200: dpu0 fronts nic0-1,
// dpu1 nic2-3), a spine switch (two racks: two spines), a CDU pump.
TEST_CASE("healer.localize: a DPU reporting failed explains the two NIC links behind it, not two NICs") {
  std::vector<Symptom> s = {S(SymptomClass::kLinkDown, "r01.tray03.nic2"),
                            S(SymptomClass::kLinkDown, "r01.tray03.nic3"),
                            S(SymptomClass::kPartFailed, "r01.tray03.dpu1")};
  auto d = Localize(s, Topo(), 3);
  REQUIRE(d.size() == 1);
  CHECK(Domains(d) == std::vector<std::string>{"r01.tray03.dpu1"});
  CHECK(d[0].symptoms == std::vector<size_t>{2, 0, 1});
  CHECK(d[0].out_of_service);  // its tray leaves multi-tray jobs
  // A NIC behind the other DPU is its own fault.
  s.push_back(S(SymptomClass::kLinkDown, "r01.tray03.nic0"));
  CHECK(Domains(Localize(s, Topo(), 3)) == std::vector<std::string>{"r01.tray03.dpu1", "r01.tray03.nic0"});
  // Without the DPU's report the same links are two NICs.
  s = {S(SymptomClass::kLinkDown, "r01.tray03.nic2"), S(SymptomClass::kLinkDown, "r01.tray03.nic3")};
  CHECK(Domains(Localize(s, Topo(), 3)) == std::vector<std::string>{"r01.tray03.nic2", "r01.tray03.nic3"});
}

TEST_CASE("healer.localize: a spine or a CDU pump reporting failed is that part, with nothing drained") {
  auto d =
      Localize({S(SymptomClass::kPartFailed, "spine02"), S(SymptomClass::kPartFailed, "r02.cdu.pump1")}, Topo(), 3);
  CHECK(Domains(d) == std::vector<std::string>{"spine02", "r02.cdu.pump1"});
  for (const auto& x : d) CHECK_FALSE(x.out_of_service);
}

}  // namespace
}  // namespace rackchaos::healer
