// Localization: from a batch of symptoms to the smallest failure domains that explain them.
//
// Pure function of the symptoms and the component graph, unit-tested without a backend:
//  0a. Parts reporting their own failure: a DPU with the NIC links down behind it (the tray drains); a
//     spine or a CDU pump alone (nothing drains: the other spines or pumps carry on); an object or
//     checkpoint store whose probe fails, as an alert (nothing drains); a region whose probe fails, with
//     every symptom of its trays (its jobs fail over to another region).
//  0. NVLink ports down on GPUs of at least `shared_min_trays` trays, all wired to one switch tray
//     (port p goes to switch tray p * S / L): that switch tray.
//     NIC links down on at least `shared_min_trays` trays behind one leaf switch: that leaf; behind two
//     or more leaves of one rail: the rail.
//  1. Power: PSUs reported failed. With the trays of their rack losing heartbeats together, the shelf
//     (all failed PSUs in one) or the rack's power; alone, each wholly failed shelf, else each PSU.
//  2. Trays of one rack failing together (at least `shared_min_trays` of them) point at what they
//     share: thermal symptoms at the CDU (with the rack's switch trays running hot), lost heartbeats at
//     the rack (its power or network).
//  2b. A switch tray reporting its own temperature too high, not explained by step 2: that switch tray
//     (taken out before it shuts down).
//  3. Otherwise, per tray: a lost heartbeat is the tray; low coolant flow, or several hot GPUs, is the
//     tray's valve; several GPUs with device symptoms is the tray; one GPU is that GPU; a NIC is that NIC.
#pragma once

#include <string>
#include <vector>

#include "cluster/topology.h"
#include "healer/detector.h"

namespace rackchaos::healer {

struct IsolationDecision {
  ComponentId domain = kNoComponent;
  std::vector<size_t> symptoms;  // indexes into the input that this domain explains
  std::string reason;
  // Whether the compute trays the domain covers are out of service and must be drained. False for a
  // switch tray in adaptive mode (its domain runs at reduced bandwidth) and for PSUs within redundancy.
  bool out_of_service = true;
};

// The switch tray an NVLink port of a GPU is wired to (port p of L goes to switch tray p * S / L), or
// kNoComponent when `gpu` is no GPU or `port` no NVLink port.
ComponentId SwitchOfPort(const cluster::Topology& topo, ComponentId gpu, int port);

// Symptoms without a component (job failures) are left out. Deterministic: same input, same output.
std::vector<IsolationDecision> Localize(const std::vector<Symptom>& symptoms, const cluster::Topology& topo,
                                        int shared_min_trays);

}  // namespace rackchaos::healer
