// The link from each region to the next (cluster.region_link_gbytes_per_s [guess]), shared by the far
// checkpoint copies in flight over it. Part of the fabric (cluster/sim_fabric.h owns it); the scheduler's
// checkpoints (sim_checkpoints.cpp) start and cancel copies on it.
//
// The copies in flight on a link share it equally (a TCP-like fair share): with n of them each moves at
// rate / n, where the rate is the link less its background traffic (cluster.region_link_background_percent,
// capped at 99% so a link never has nothing left). Between a copy's start and end nothing changes, so
// each copy's bytes left are settled only then (closed form: left -= share x elapsed), and one timer per
// link waits for the copy with the fewest bytes left. When it fires, every copy whose bytes are all moved
// (within a microsecond of the share, the timer's rounding) ends, in the order they started, and `done`
// is called for each; the others go on at the larger share.
//
// Cost: a copy's start or end costs the copies on its link. Not thread-safe (the run's event loop).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "core/clock.h"
#include "core/ids.h"

namespace rackchaos::cluster {

class RegionLinks {
 public:
  // `regions` links (region k to k + 1, the last to the first); `done` is told of each copy that lands.
  RegionLinks(VirtualClock& clock, size_t regions, double gbytes_per_s, double background,
              std::function<void(JobId)> done);

  size_t size() const { return links_.size(); }
  // Starts `job`'s copy of `gbytes` on region `k`'s link.
  void Start(size_t k, JobId job, double gbytes);
  // Ends `job`'s copy in flight, if any (its share goes to the others on its link).
  void Cancel(JobId job);

 private:
  struct Flow {
    JobId job;
    double left_gb;
  };
  struct Link {
    std::vector<Flow> flows;  // in the order they started
    Time since{};             // when flows' bytes left were last settled
    TimerId timer = 0;        // the flow with the fewest bytes left ends
  };
  double Rate() const;  // what the copies on a link share
  void Settle(Link& link);
  void Schedule(size_t k);
  void OnDone(size_t k);

  VirtualClock& clock_;
  double gbytes_per_s_, background_;
  std::function<void(JobId)> done_;
  std::vector<Link> links_;  // per region, to the next
};

}  // namespace rackchaos::cluster
