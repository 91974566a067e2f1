#include "cluster/sim_region_link.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace rackchaos::cluster {

RegionLinks::RegionLinks(VirtualClock& clock, size_t regions, double gbytes_per_s, double background,
                         std::function<void(JobId)> done)
    : clock_(clock), gbytes_per_s_(gbytes_per_s), background_(background), done_(std::move(done)), links_(regions) {}

// The plan caps the share at 99%; a caller setting SimOptions directly gets the same cap, never a link of 0.
double RegionLinks::Rate() const { return gbytes_per_s_ * (1 - std::clamp(background_, 0.0, 0.99)); }

void RegionLinks::Settle(Link& link) {
  if (!link.flows.empty()) {
    const double moved = Rate() / static_cast<double>(link.flows.size()) * (clock_.Now() - link.since).Seconds();
    for (Flow& f : link.flows) f.left_gb -= moved;
  }
  link.since = clock_.Now();
}

void RegionLinks::Schedule(size_t k) {
  Link& link = links_[k];
  if (link.timer) clock_.Cancel(link.timer);
  link.timer = 0;
  if (link.flows.empty()) return;
  double least = link.flows.front().left_gb;
  for (const Flow& f : link.flows) least = std::min(least, f.left_gb);
  const double share = Rate() / static_cast<double>(link.flows.size());
  const auto us = static_cast<int64_t>(std::ceil(std::max(0.0, least) / share * 1e6));
  link.timer = clock_.CallAfter(Duration::Micros(us), [this, k] { OnDone(k); });
}

void RegionLinks::Start(size_t k, JobId job, double gbytes) {
  Settle(links_[k]);
  links_[k].flows.push_back({job, gbytes});
  Schedule(k);
}

void RegionLinks::Cancel(JobId job) {
  for (size_t k = 0; k < links_.size(); ++k) {
    auto& flows = links_[k].flows;
    auto it = std::find_if(flows.begin(), flows.end(), [&](const Flow& f) { return f.job == job; });
    if (it == flows.end()) continue;
    Settle(links_[k]);
    flows.erase(it);
    Schedule(k);
    return;
  }
}

void RegionLinks::OnDone(size_t k) {
  Link& link = links_[k];
  link.timer = 0;
  const double slack = Rate() / static_cast<double>(std::max<size_t>(1, link.flows.size())) * 2e-6;
  Settle(link);
  std::vector<JobId> done;
  std::erase_if(link.flows, [&](const Flow& f) {
    if (f.left_gb > slack) return false;
    done.push_back(f.job);
    return true;
  });
  Schedule(k);
  for (JobId id : done) done_(id);
}

}  // namespace rackchaos::cluster
