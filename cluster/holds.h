// Overlapping faults on one shared state of the simulated cluster.
//
// Some states can be impaired by more than one fault at a time: a NIC's link (its own link_down, its
// leaf, rail or DPU), a link's bandwidth (two link_degrade), a tray's storage path (storage_degrade and
// cache_fail), a GPU's power cap (two gpu_throttle), a valve's opening (valve_fail and a leak), a tray's
// presence (tray_pull and its rack's power). Each fault places a hold on the state, keyed by (holder,
// cause): the holder is the part it acts through (the NIC itself or its leaf, rail or DPU; the tray or
// its rack), the cause is the fault.
//
// The rule when holds overlap: the worst value wins, and lower is worse (0 is down, lost, shut or
// pulled); between equal values the oldest hold gives the cause. Releasing a hold leaves the others in
// force, so reverting one of two overlapping faults keeps the state at the other's value. The first
// hold saves the value the state had without holds (the site's own setting, `unheld`); the last
// release gives it back. A fault's revert releases its hold explicitly, by its id (for a value state,
// Backend::Release; cluster/sim_holds.cpp): never inferred from the value it sets, so two faults setting
// one value, or a fault setting 100% or the baseline, cannot release another's hold.
//
// Cost: a map lookup per change; only held states have an entry. Not thread-safe (the run's thread).
#pragma once

#include <algorithm>
#include <map>
#include <vector>

#include "core/ids.h"

namespace rackchaos::cluster {

template <class Key>
class Holds {
 public:
  // What the state is now: the worst hold's value and fault while `held`, else the unheld value.
  struct State {
    bool held = false;
    double value = 0;
    FaultId cause = kNoFault;
  };

  // Places the hold of (holder, cause) on `key` at `value`, or moves it there. `now` is the state's
  // value now: the unheld value if this is the key's first hold.
  State Place(const Key& key, ComponentId holder, FaultId cause, double value, double now) {
    auto it = entries_.try_emplace(key, Entry{now, {}}).first;
    if (Hold* h = Find(it->second, holder, cause))
      h->value = value;
    else
      it->second.holds.push_back({holder, cause, value});
    return Worst(it->second);
  }

  // Releases the hold of (holder, cause), if any. `unheld` is returned when the key has no hold at all.
  State Release(const Key& key, ComponentId holder, FaultId cause, double unheld) {
    return Erase(key, unheld, [&](const auto& h) { return h.holder == holder && h.cause == cause; });
  }
  // Releases every hold of `holder` on `key`, whatever its fault (a rack's power coming back).
  State ReleaseHolder(const Key& key, ComponentId holder, double unheld) {
    return Erase(key, unheld, [&](const auto& h) { return h.holder == holder; });
  }

  // The site changes the state itself (no fault): while held, that becomes the value the last release
  // gives back; else it is the state now.
  State SetUnheld(const Key& key, double value) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return {false, value, kNoFault};
    it->second.unheld = value;
    return Worst(it->second);
  }

 private:
  struct Hold {
    ComponentId holder;
    FaultId cause;
    double value;
  };
  struct Entry {
    double unheld;
    std::vector<Hold> holds;  // in the order placed
  };

  static Hold* Find(Entry& e, ComponentId holder, FaultId cause) {
    auto it = std::find_if(e.holds.begin(), e.holds.end(), [&](const Hold& h) { return h.holder == holder && h.cause == cause; });
    return it == e.holds.end() ? nullptr : &*it;
  }

  static State Worst(const Entry& e) {
    auto w = std::min_element(e.holds.begin(), e.holds.end(), [](const Hold& a, const Hold& b) { return a.value < b.value; });
    return {true, w->value, w->cause};
  }

  template <class Pred>
  State Erase(const Key& key, double unheld, Pred pred) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return {false, unheld, kNoFault};
    std::erase_if(it->second.holds, pred);
    if (!it->second.holds.empty()) return Worst(it->second);
    const State s{false, it->second.unheld, kNoFault};
    entries_.erase(it);
    return s;
  }

  std::map<Key, Entry> entries_;
};

}  // namespace rackchaos::cluster
