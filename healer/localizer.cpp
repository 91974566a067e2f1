#include "healer/localizer.h"

#include <algorithm>
#include <map>
#include <set>

namespace rackchaos::healer {
namespace {

using cluster::Kind;

bool IsThermal(SymptomClass c) { return c == SymptomClass::kThermal || c == SymptomClass::kFlowLow; }

// A switch tray's own temperature alert (healer/detectors.cpp, Metric::kSwitchTemperature).
bool HotSwitch(const Symptom& s, const cluster::Topology& topo) {
  return s.cls == SymptomClass::kThermal && s.component != kNoComponent && topo.at(s.component).kind == Kind::kSwitchTray;
}

struct Group {
  std::set<ComponentId> trays;
  std::vector<size_t> idx;
};

// Step 0: NVLink ports down across trays, all wired to one switch tray.
void SwitchTrays(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, int min_trays,
                 std::vector<bool>& used, std::vector<IsolationDecision>& out) {
  std::map<ComponentId, Group> by_switch;
  for (size_t i = 0; i < symptoms.size(); ++i) {
    const Symptom& s = symptoms[i];
    if (s.cls != SymptomClass::kLinkDown || s.port < 0 || topo.at(s.component).kind != Kind::kGpu) continue;
    ComponentId sw = SwitchOfPort(topo, s.component, s.port);
    if (sw == kNoComponent) continue;
    by_switch[sw].trays.insert(topo.TrayOf(s.component));
    by_switch[sw].idx.push_back(i);
  }
  const bool adaptive = topo.model().adaptive_bandwidth;
  for (auto& [sw, g] : by_switch) {
    if (static_cast<int>(g.trays.size()) < min_trays) continue;
    for (size_t i : g.idx) used[i] = true;
    out.push_back({sw, g.idx,
                   "NVLink ports to one switch tray down on " + std::to_string(g.trays.size()) + " trays; domain " +
                       (adaptive ? "BANDWIDTH (adaptive mode): its jobs keep running" : "UNHEALTHY (full-bandwidth mode)"),
                   !adaptive});
  }
}

bool NicLinkDown(const Symptom& s, const cluster::Topology& topo) {
  return s.cls == SymptomClass::kLinkDown && s.component != kNoComponent && topo.at(s.component).kind == Kind::kNic;
}

// The trays with every NIC link down (at least two) among the symptoms not yet explained.
std::set<ComponentId> TraysOffTheNetwork(const std::vector<Symptom>& symptoms, const cluster::Topology& topo,
                                         const std::vector<bool>& used) {
  std::map<ComponentId, std::set<ComponentId>> nics_down;
  for (size_t i = 0; i < symptoms.size(); ++i)
    if (!used[i] && NicLinkDown(symptoms[i], topo)) nics_down[topo.TrayOf(symptoms[i].component)].insert(symptoms[i].component);
  const size_t tray_nics = static_cast<size_t>(std::max(2, topo.model().nics_per_tray));
  std::set<ComponentId> out;
  for (const auto& [tray, nics] : nics_down)
    if (nics.size() >= tray_nics) out.insert(tray);
  return out;
}

// Step 0b: NIC links down on trays of one leaf (at least `min_trays`): that leaf; on two or more leaves
// of one rail: the rail. A leaf or a rail takes one NIC of each tray behind it (the tray's NIC on that
// rail), so a tray with every NIC link down (pulled, or its PCIe gone) is not the leaf's doing: its links
// are left to the tray (step 3), or several trays pulled at once would read as their leaves failing.
void FabricDomains(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, int min_trays,
                   std::vector<bool>& used, std::vector<IsolationDecision>& out) {
  const std::set<ComponentId> dark = TraysOffTheNetwork(symptoms, topo, used);
  std::map<ComponentId, Group> by_leaf;
  for (size_t i = 0; i < symptoms.size(); ++i) {
    const Symptom& s = symptoms[i];
    if (used[i] || !NicLinkDown(s, topo) || dark.count(topo.TrayOf(s.component))) continue;
    ComponentId leaf = topo.LeafOfNic(s.component);
    if (leaf == kNoComponent) continue;
    by_leaf[leaf].trays.insert(topo.TrayOf(s.component));
    by_leaf[leaf].idx.push_back(i);
  }
  std::map<ComponentId, std::vector<ComponentId>> leaves_by_rail;
  for (const auto& [leaf, g] : by_leaf)
    if (static_cast<int>(g.trays.size()) >= min_trays) leaves_by_rail[topo.at(leaf).parent].push_back(leaf);
  for (const auto& [rail, leaves] : leaves_by_rail) {
    std::vector<size_t> idx;
    size_t trays = 0;
    for (ComponentId leaf : leaves) {
      idx.insert(idx.end(), by_leaf[leaf].idx.begin(), by_leaf[leaf].idx.end());
      trays += by_leaf[leaf].trays.size();
    }
    for (size_t i : idx) used[i] = true;
    if (leaves.size() >= 2) {
      std::sort(idx.begin(), idx.end());
      out.push_back({rail, idx, "NIC links down behind " + std::to_string(leaves.size()) + " leaves of one rail (" +
                                    std::to_string(trays) + " trays)"});
      continue;
    }
    out.push_back({leaves[0], idx, "NIC links down on " + std::to_string(trays) + " trays behind one leaf"});
  }
}

// A region whose probe fails explains every symptom of its trays (lost heartbeats, its jobs' hangs): it
// is failed over, not drained (healer.cpp).
IsolationDecision RegionDown(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, size_t i,
                             std::vector<bool>& used) {
  const int region = topo.RegionOf(symptoms[i].component);
  std::vector<size_t> idx{i};
  for (size_t j = 0; j < symptoms.size(); ++j) {
    const ComponentId tray = symptoms[j].component == kNoComponent ? kNoComponent : topo.TrayOf(symptoms[j].component);
    if (used[j] || j == i || tray == kNoComponent || topo.RegionOf(tray) != region) continue;
    used[j] = true;
    idx.push_back(j);
  }
  std::sort(idx.begin(), idx.end());
  return {symptoms[i].component, idx,
          "region unreachable (" + std::to_string(idx.size() - 1) + " other symptoms inside it): fail its jobs over",
          false};
}

// Step 0a: parts that report their own health. A DPU explains the NIC links down behind it (its tray is
// out of service for multi-tray jobs); a spine or a CDU pump is marked for repair and drains nothing (the
// spines left carry its traffic; the other pumps carry the flow, and a flow drop beyond the redundancy
// shows as the rack's trays overheating together, step 2).
void ReportedParts(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, std::vector<bool>& used,
                   std::vector<IsolationDecision>& out) {
  for (size_t i = 0; i < symptoms.size(); ++i) {
    const Symptom& s = symptoms[i];
    if (used[i] || s.cls != SymptomClass::kPartFailed || s.component == kNoComponent) continue;
    used[i] = true;
    const Kind kind = topo.at(s.component).kind;
    if (kind == Kind::kSpine || kind == Kind::kSuperSpine) {
      out.push_back(
          {s.component, {i}, "spine reports failed: cross-leaf traffic re-routes over the other spines", false});
      continue;
    }
    if (kind == Kind::kPump) {
      out.push_back({s.component, {i}, "CDU pump reports failed", false});
      continue;
    }
    if (kind == Kind::kObjectStore || kind == Kind::kCheckpointStore) {
      out.push_back({s.component, {i},
                     kind == Kind::kObjectStore ? "object store probe failing: reads below its service level"
                                                : "checkpoint store probe failing: writes not acknowledged",
                     false});
      continue;
    }
    if (kind == Kind::kRegion) {
      out.push_back(RegionDown(symptoms, topo, i, used));
      continue;
    }
    if (kind != Kind::kDpu) continue;
    std::vector<size_t> idx{i};
    for (size_t j = 0; j < symptoms.size(); ++j) {
      const Symptom& l = symptoms[j];
      if (used[j] || l.cls != SymptomClass::kLinkDown || topo.at(l.component).kind != Kind::kNic) continue;
      if (topo.DpuOfNic(l.component) != s.component) continue;
      used[j] = true;
      idx.push_back(j);
    }
    out.push_back({s.component, idx,
                   "DPU reports failed; " + std::to_string(idx.size() - 1) +
                       " NIC link(s) behind it down: the tray's scale-out path"});
  }
}

// Step 1: power. PSU symptoms per rack, with the rack's lost heartbeats when its trays went dark.
void PowerDomains(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, int min_trays,
                  std::vector<bool>& used, std::vector<IsolationDecision>& out) {
  struct Rack { std::map<ComponentId, std::vector<size_t>> psus_by_shelf; Group dark; };
  std::map<ComponentId, Rack> racks;
  for (size_t i = 0; i < symptoms.size(); ++i) {
    const Symptom& s = symptoms[i];
    if (s.cls == SymptomClass::kPsuFailed && topo.at(s.component).kind == Kind::kPsu)
      racks[topo.RackOf(s.component)].psus_by_shelf[topo.at(s.component).parent].push_back(i);
  }
  for (size_t i = 0; i < symptoms.size(); ++i) {
    const Symptom& s = symptoms[i];
    ComponentId tray = topo.TrayOf(s.component);
    if (s.cls != SymptomClass::kHeartbeatLost || tray == kNoComponent) continue;
    auto it = racks.find(topo.RackOf(tray));
    if (it == racks.end()) continue;
    it->second.dark.trays.insert(tray);
    it->second.dark.idx.push_back(i);
  }
  for (auto& [rack, r] : racks) {
    const bool dark = static_cast<int>(r.dark.trays.size()) >= min_trays;
    const std::string why = dark ? "beyond the rack's PSU redundancy" : "within the rack's PSU redundancy";
    // Trays dark with the failed PSUs all in one shelf: that shelf fed them (it drains the rack).
    if (dark && r.psus_by_shelf.size() == 1) {
      auto& [shelf, idx] = *r.psus_by_shelf.begin();
      std::vector<size_t> all = idx;
      all.insert(all.end(), r.dark.idx.begin(), r.dark.idx.end());
      for (size_t i : all) used[i] = true;
      out.push_back({shelf, all, std::to_string(r.dark.trays.size()) + " trays lost power with the shelf; " + why});
      continue;
    }
    // Each wholly failed shelf, else each PSU, is marked for replacement; dark trays are the rack's power.
    for (auto& [shelf, idx] : r.psus_by_shelf) {
      for (size_t i : idx) used[i] = true;
      if (static_cast<int>(idx.size()) == topo.model().psus_per_shelf) {
        out.push_back({shelf, idx, "every PSU of the shelf failed; " + why, false});
        continue;
      }
      for (size_t i : idx) out.push_back({symptoms[i].component, {i}, "PSU failed; " + why, false});
    }
    if (!dark) continue;
    for (size_t i : r.dark.idx) used[i] = true;
    out.push_back({rack, r.dark.idx, std::to_string(r.dark.trays.size()) + " trays lost power together; " + why});
  }
}

// Step 2: rack-wide domains when enough of a rack's trays are in trouble together.
void SharedDomains(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, int min_trays,
                   std::vector<bool>& used, std::vector<IsolationDecision>& out) {
  std::map<ComponentId, Group> by_cdu, by_rack;
  // A tray lost is one whose heartbeats stopped or whose every NIC link went down (its links are seen
  // before its heartbeats are missed).
  const std::set<ComponentId> dark = TraysOffTheNetwork(symptoms, topo, used);
  for (size_t i = 0; i < symptoms.size(); ++i) {
    const Symptom& s = symptoms[i];
    ComponentId tray = topo.TrayOf(s.component);
    if (used[i] || tray == kNoComponent) continue;
    ComponentId rack = topo.RackOf(tray);
    const bool lost = s.cls == SymptomClass::kHeartbeatLost || (NicLinkDown(s, topo) && dark.count(tray));
    Group* g = IsThermal(s.cls) ? &by_cdu[topo.CduOfRack(rack)] : lost ? &by_rack[rack] : nullptr;
    if (!g) continue;
    g->trays.insert(tray);
    g->idx.push_back(i);
  }
  auto emit = [&](std::map<ComponentId, Group>& groups, const char* why) {
    for (auto& [domain, g] : groups) {
      if (static_cast<int>(g.trays.size()) < min_trays) continue;
      // What else those trays report (GPUs off the bus after a thermal shutdown) is the same failure, and
      // so is a switch tray of the rack running hot when its CDU is what fails.
      for (size_t i = 0; i < symptoms.size(); ++i)
        if (!used[i] && (g.trays.count(topo.TrayOf(symptoms[i].component)) ||
                         (&groups == &by_cdu && HotSwitch(symptoms[i], topo) &&
                          topo.CduOfRack(topo.RackOf(symptoms[i].component)) == domain)) &&
            std::find(g.idx.begin(), g.idx.end(), i) == g.idx.end())
          g.idx.push_back(i);
      std::sort(g.idx.begin(), g.idx.end());
      for (size_t i : g.idx) used[i] = true;
      out.push_back({domain, g.idx, std::to_string(g.trays.size()) + " trays " + why});
    }
  };
  emit(by_cdu, "overheating together: shared cooling");
  emit(by_rack, "lost together: shared rack power or network");
}

// Step 2b: a switch tray reporting its own temperature too high (its valve, or a flow drop that no
// rack-wide group explains): taken out before it shuts down. In full-bandwidth mode that stops the
// domain's partition (its trays are drained and their jobs restart elsewhere, not hang); in adaptive
// mode the domain runs on the others (BANDWIDTH).
void HotSwitchTrays(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, std::vector<bool>& used,
                    std::vector<IsolationDecision>& out) {
  std::map<ComponentId, std::vector<size_t>> by_switch;
  for (size_t i = 0; i < symptoms.size(); ++i)
    if (!used[i] && HotSwitch(symptoms[i], topo)) by_switch[symptoms[i].component].push_back(i);
  const bool adaptive = topo.model().adaptive_bandwidth;
  for (const auto& [sw, idx] : by_switch) {
    for (size_t i : idx) used[i] = true;
    out.push_back({sw, idx,
                   std::string("switch tray overheating: taken out before it shuts down; domain ") +
                       (adaptive ? "BANDWIDTH (adaptive mode): its jobs keep running" : "UNHEALTHY (full-bandwidth mode)"),
                   !adaptive});
  }
}

// Step 3: the smallest domain inside one tray.
void TrayDomains(const std::vector<Symptom>& symptoms, const cluster::Topology& topo, std::vector<bool>& used,
                 std::vector<IsolationDecision>& out) {
  std::map<ComponentId, std::vector<size_t>> by_tray;
  for (size_t i = 0; i < symptoms.size(); ++i) {
    ComponentId tray = symptoms[i].component == kNoComponent ? kNoComponent : topo.TrayOf(symptoms[i].component);
    if (!used[i] && tray != kNoComponent) by_tray[tray].push_back(i);
  }
  for (const auto& [tray, idx] : by_tray) {
    bool heartbeat = false, flow = false, leak = false;
    std::set<ComponentId> hot, sick;
    std::map<ComponentId, std::vector<size_t>> nics;
    for (size_t i : idx) {
      const Symptom& s = symptoms[i];
      if (s.cls == SymptomClass::kHeartbeatLost) heartbeat = true;
      else if (s.cls == SymptomClass::kFlowLow) flow = true;
      else if (s.cls == SymptomClass::kLeak) leak = true;
      else if (s.cls == SymptomClass::kThermal) hot.insert(s.component);
      else if (topo.at(s.component).kind == Kind::kNic) nics[s.component].push_back(i);
      else sick.insert(s.component);
    }
    if (heartbeat) {
      out.push_back({tray, idx, "node stopped answering"});
      continue;
    }
    if (leak || flow || hot.size() >= 2) {
      out.push_back({topo.ValveOfTray(tray), idx,
                     leak ? "leak in the tray's cooling zone" : flow ? "coolant flow low" : "GPUs of one tray overheating together"});
      continue;
    }
    std::set<ComponentId> gpus = sick;
    gpus.insert(hot.begin(), hot.end());
    if (gpus.size() >= 2) {
      out.push_back({tray, idx, std::to_string(gpus.size()) + " GPUs of one tray failing together"});
      continue;
    }
    // Every NIC link of the tray down together (no leaf explained them): the tray, as a pulled tray takes
    // them all. Fewer are each their own NIC (two behind one DPU are that DPU when it reports, step 0a).
    if (nics.size() >= static_cast<size_t>(std::max(2, topo.model().nics_per_tray))) {
      out.push_back({tray, idx, std::to_string(nics.size()) + " NIC links of one tray down together"});
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

ComponentId SwitchOfPort(const cluster::Topology& topo, ComponentId gpu, int port) {
  const cluster::RackModel& m = topo.model();
  if (port < 0 || m.nvlink_links_per_gpu <= 0 || topo.at(gpu).kind != Kind::kGpu) return kNoComponent;
  int index = port * m.switch_trays / m.nvlink_links_per_gpu;
  for (ComponentId c : topo.ChildrenOf(topo.RackOf(gpu)))
    if (topo.at(c).kind == Kind::kSwitchTray && topo.at(c).index == index) return c;
  return kNoComponent;
}

std::vector<IsolationDecision> Localize(const std::vector<Symptom>& symptoms, const cluster::Topology& topo,
                                        int shared_min_trays) {
  std::vector<bool> used(symptoms.size(), false);
  std::vector<IsolationDecision> out;
  ReportedParts(symptoms, topo, used, out);
  SwitchTrays(symptoms, topo, shared_min_trays, used, out);
  FabricDomains(symptoms, topo, shared_min_trays, used, out);
  PowerDomains(symptoms, topo, shared_min_trays, used, out);
  SharedDomains(symptoms, topo, shared_min_trays, used, out);
  HotSwitchTrays(symptoms, topo, used, out);
  TrayDomains(symptoms, topo, used, out);
  return out;
}

}  // namespace rackchaos::healer
