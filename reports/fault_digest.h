// What a renderer shows of a run too large to list whole. A month of chaos on a fleet has tens of
// thousands of faults: listed one per row, the text summary was 8 MB and the HTML report 24 MB. Here a
// renderer gets the faults worth a row each (all of them when they fit) and the rest counted by kind and
// by rack, so that every report stays of bounded size and can say what it left out.
//
// Pure functions of the stored metrics: the same run gives the same digest on every host.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/metrics.h"

namespace rackchaos::reports {

// How many rows of each kind a renderer lists before it aggregates.
struct ListLimits {
  size_t faults = 40;  // faults listed one per row
  size_t racks = 20;   // racks in the "by rack" table
  size_t jobs = 30;    // jobs listed one per row
  size_t names = 10;   // names in a list in prose (false isolations, missed faults)
};
inline constexpr ListLimits kTextLimits{40, 20, 30, 10};
inline constexpr ListLimits kHtmlLimits{100, 30, 50, 25};

// Faults of one kind, or of one rack.
struct FaultGroup {
  std::string name;  // the kind, or the rack
  int faults = 0, detected = 0, isolated = 0, recovered = 0;
  // Nearest-rank percentiles over the group's faults; a fault that never got there ranks last, so a
  // value is absent ("never") when the rank falls on one. ttd_p50 counts detections the same way.
  std::optional<Duration> ttd_p50, ttr_p50, ttr_p95, ttr_max;
  int gpus = 0;  // direct + collateral, summed
  double gpu_hours_lost = 0;
};

struct FaultDigest {
  size_t total = 0;  // faults of the run
  // Every fault in stored order when there are at most ListLimits::faults; otherwise that many of the
  // worst: those that never recovered and cost GPUs (most GPU-hours lost first), then the slowest to
  // recover, then those that never recovered but touched nothing.
  std::vector<const FaultMetrics*> listed;
  std::vector<FaultGroup> by_kind;  // every kind, most faults first
  std::vector<FaultGroup> by_rack;  // the racks with the most faults, at most ListLimits::racks
  size_t racks = 0;                 // racks (and parts outside racks) with at least one fault
  int faults_in_other_racks = 0;    // faults of the racks not in by_rack
  bool cut() const { return listed.size() < total; }
};

// "the 40 worst are listed (...); all 40,429 are counted by kind and by rack": what a cut fault table
// says above itself.
std::string CutFaultsSentence(const FaultDigest& digest);

// Digests `metrics.faults`; the pointers point into `metrics`, which must outlive the digest.
FaultDigest DigestFaults(const RunMetrics& metrics, const ListLimits& limits);

// The rack a component name belongs to: its first dotted part ("r01" of "r01.tray03.gpu2", also "r001"
// on clusters of 100 racks or more); a part outside every rack (spine02, a region's store) is its own.
std::string_view RackOfName(std::string_view component);

// The jobs to list: all, in stored order, when there are at most `limits.jobs`; otherwise that many with
// the lowest ETTR, lowest first.
std::vector<const JobMetrics*> ListedJobs(const RunMetrics& metrics, const ListLimits& limits);

}  // namespace rackchaos::reports
