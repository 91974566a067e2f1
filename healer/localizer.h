// Localization: from a batch of symptoms to the smallest failure domains that explain them.
//
// Pure function of the symptoms and the component graph, unit-tested without a backend:
//  1. Trays of one rack failing together (at least `shared_min_trays` of them) point at what they
//     share: thermal symptoms at the CDU, lost heartbeats at the rack (its power or network).
//  2. Otherwise, per tray: a lost heartbeat is the tray; low coolant flow, or several hot GPUs, is the
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
};

// Symptoms without a component (job failures) are left out. Deterministic: same input, same output.
std::vector<IsolationDecision> Localize(const std::vector<Symptom>& symptoms, const cluster::Topology& topo,
                                        int shared_min_trays);

}  // namespace rackchaos::healer
