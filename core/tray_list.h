// TrayList: the trays a job runs on, as an immutable list that copies share.
//
// A placement of a 100k-GPU job is 25,000 tray ids, and every event and observation about the job
// (running, speed changed, hung, requeued) carries it. Copies of a TrayList share one buffer, so each
// of those costs O(1), and SameAs() tells in O(1) that two carry the very same placement (the report
// store then writes the list once). Not thread-safe to mutate, because it cannot be mutated; copies
// may be read from any thread (the count is a shared_ptr's).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "core/ids.h"

namespace rackchaos {

class TrayList {
 public:
  TrayList() = default;
  // Implicit, so that `{3, 4}` and a vector read as tray lists; the ids are kept in the given order.
  TrayList(std::vector<ComponentId> ids)  // NOLINT(google-explicit-constructor)
      : data_(ids.empty() ? nullptr : std::make_shared<const Data>(std::move(ids))) {}
  TrayList(std::initializer_list<ComponentId> ids) : TrayList(std::vector<ComponentId>(ids)) {}
  // For a caller that built `ids` in ascending order (a merge of sorted lists): sorted() is true without
  // the O(n) check. Out of order is a programmer error (asserted in debug builds).
  // `tray_gpus`: the GPUs on these trays when the maker knows them (every id a compute tray of
  // `gpus_per_tray` GPUs: a scheduler's placement), so scoring need not walk 25,000 ids to count them
  // for every restart's new placement; -1 when not known (Topology::GpusOnTrays counts them).
  static TrayList Ascending(std::vector<ComponentId> ids, int64_t tray_gpus = -1) {
    assert(std::is_sorted(ids.begin(), ids.end()));
    TrayList out;
    if (!ids.empty()) out.data_ = std::make_shared<const Data>(std::move(ids), true, tray_gpus);
    return out;
  }

  const std::vector<ComponentId>& ids() const { return data_ ? data_->ids : Empty(); }
  auto begin() const { return ids().begin(); }
  auto end() const { return ids().end(); }
  size_t size() const { return ids().size(); }
  bool empty() const { return !data_; }
  ComponentId operator[](size_t i) const { return data_->ids[i]; }
  // Whether the ids are in ascending order (decided once, when the list is made).
  bool sorted() const { return !data_ || data_->sorted; }
  // The GPUs on these trays as its maker counted them (Ascending); -1 if it did not; 0 for an empty list.
  int64_t tray_gpus() const { return data_ ? data_->tray_gpus : 0; }
  // Whether `tray` is in the list: O(log n) when sorted, O(n) otherwise.
  bool Contains(ComponentId tray) const {
    if (!data_) return false;
    const auto& v = data_->ids;
    return data_->sorted ? std::binary_search(v.begin(), v.end(), tray)
                         : std::find(v.begin(), v.end(), tray) != v.end();
  }
  // Both are copies of one list (or both empty). O(1); equal lists made apart are not the same.
  bool SameAs(const TrayList& other) const { return data_ == other.data_; }

  friend bool operator==(const TrayList& a, const TrayList& b) { return a.SameAs(b) || a.ids() == b.ids(); }
  friend bool operator==(const TrayList& a, const std::vector<ComponentId>& b) { return a.ids() == b; }

 private:
  struct Data {
    explicit Data(std::vector<ComponentId> v) : ids(std::move(v)), sorted(std::is_sorted(ids.begin(), ids.end())) {}
    Data(std::vector<ComponentId> v, bool in_order, int64_t gpus) : ids(std::move(v)), sorted(in_order), tray_gpus(gpus) {}
    std::vector<ComponentId> ids;
    bool sorted;
    int64_t tray_gpus = -1;
  };
  static const std::vector<ComponentId>& Empty() {
    static const std::vector<ComponentId> empty;
    return empty;
  }
  std::shared_ptr<const Data> data_;
};

}  // namespace rackchaos
