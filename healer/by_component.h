// ByComponent<T>: one value per component id, default-constructed until first touched.
//
// Component ids are dense (0 .. topology size), so a plain array replaces a hash map for state looked up
// on every telemetry sample (a fleet's first poll alone is 400,000 samples): an index, not a hash and a
// bucket walk. It grows to the largest id touched. Not thread-safe; references stay valid until the
// next operator[] on a larger id.
#pragma once

#include <cstddef>
#include <vector>

#include "core/ids.h"

namespace rackchaos::healer {

template <class T>
class ByComponent {
 public:
  T& operator[](ComponentId c) {
    if (c == kNoComponent) return none_;
    if (c >= values_.size()) values_.resize(static_cast<size_t>(c) + 1);
    return values_[c];
  }
  // The value, or T{} if `c` was never touched.
  T Get(ComponentId c) const {
    if (c == kNoComponent) return none_;
    return c < values_.size() ? values_[c] : T{};
  }

 private:
  std::vector<T> values_;
  T none_{};
};

}  // namespace rackchaos::healer
