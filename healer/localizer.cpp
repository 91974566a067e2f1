#include "healer/localizer.h"

#include <map>
#include <set>

namespace rackchaos::healer {
namespace {

using cluster::Kind;

bool IsThermal(SymptomClass c) { return c == SymptomClass::kThermal || c == SymptomClass::kFlowLow; }

// Step 1: rack-wide domains when enough of a rack's trays are in trouble together.
void SharedDomains(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, int min_trays,
                   std::vector<bool>& used, std::vector<IsolationDecision>& out) {
  struct Group { std::set<ComponentId> trays; std::vector<size_t> idx; };
  std::map<ComponentId, Group> by_cdu, by_rack;
  for (size_t i = 0; i < symptoms.size(); ++i) {
    const Symptom& s = symptoms[i];
    ComponentId tray = topo.TrayOf(s.component);
    if (tray == kNoComponent) continue;
    ComponentId rack = topo.RackOf(tray);
    Group* g = IsThermal(s.cls) ? &by_cdu[topo.CduOfRack(rack)]
             : s.cls == SymptomClass::kHeartbeatLost ? &by_rack[rack] : nullptr;
    if (!g) continue;
    g->trays.insert(tray);
    g->idx.push_back(i);
  }
  auto emit = [&](std::map<ComponentId, Group>& groups, const char* why) {
    for (auto& [domain, g] : groups) {
      if (static_cast<int>(g.trays.size()) < min_trays) continue;
      for (size_t i : g.idx) used[i] = true;
      out.push_back({domain, g.idx, std::to_string(g.trays.size()) + " trays " + why});
    }
  };
  emit(by_cdu, "overheating together: shared cooling");
  emit(by_rack, "lost together: shared rack power or network");
}

// Step 2: the smallest domain inside one tray.
void TrayDomains(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, std::vector<bool>& used,
                 std::vector<IsolationDecision>& out) {
  std::map<ComponentId, std::vector<size_t>> by_tray;
  for (size_t i = 0; i < symptoms.size(); ++i) {
    ComponentId tray = symptoms[i].component == kNoComponent ? kNoComponent : topo.TrayOf(symptoms[i].component);
    if (!used[i] && tray != kNoComponent) by_tray[tray].push_back(i);
  }
  for (const auto& [tray, idx] : by_tray) {
    bool heartbeat = false, flow = false;
    std::set<ComponentId> hot, sick;
    std::map<ComponentId, std::vector<size_t>> nics;
    for (size_t i : idx) {
      const Symptom& s = symptoms[i];
      if (s.cls == SymptomClass::kHeartbeatLost) heartbeat = true;
      else if (s.cls == SymptomClass::kFlowLow) flow = true;
      else if (s.cls == SymptomClass::kThermal) hot.insert(s.component);
      else if (topo.at(s.component).kind == Kind::kNic) nics[s.component].push_back(i);
      else sick.insert(s.component);
    }
    if (heartbeat) {
      out.push_back({tray, idx, "node stopped answering"});
      continue;
    }
    if (flow || hot.size() >= 2) {
      out.push_back({topo.ValveOfTray(tray), idx, flow ? "coolant flow low" : "GPUs of one tray overheating together"});
      continue;
    }
    std::set<ComponentId> gpus = sick;
    gpus.insert(hot.begin(), hot.end());
    if (gpus.size() >= 2) {
      out.push_back({tray, idx, std::to_string(gpus.size()) + " GPUs of one tray failing together"});
      continue;
    }
    for (const auto& [nic, ni] : nics) out.push_back({nic, ni, "NIC link down"});
    if (gpus.size() == 1) {
      std::vector<size_t> gi;
      for (size_t i : idx)
        if (topo.at(symptoms[i].component).kind != Kind::kNic) gi.push_back(i);
      out.push_back({*gpus.begin(), gi, "one GPU explains the symptoms"});
    }
  }
}

}  // namespace

std::vector<IsolationDecision> Localize(const std::vector<Symptom>& symptoms, const cluster::Topology& topo,
                                        int shared_min_trays) {
  std::vector<bool> used(symptoms.size(), false);
  std::vector<IsolationDecision> out;
  SharedDomains(symptoms, topo, shared_min_trays, used, out);
  TrayDomains(symptoms, topo, used, out);
  return out;
}

}  // namespace rackchaos::healer
