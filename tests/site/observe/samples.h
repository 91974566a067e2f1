// Test helpers: a sample file's bytes, and small queries over an Observed.
#pragma once

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "runner/site/observe/observed.h"

namespace rackchaos::observe::testing {

inline std::string Sample(const std::string& path) {
  std::ifstream in(std::string(RACKCHAOS_SOURCE_DIR) + "/tests/site/observe/samples/" + path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read sample " + path);
  return s.str();
}

// The value of `metric` for `component`, or -1 when there is no such sample (values are >= 0).
inline double SampleOf(const Observed& o, ComponentId component, cluster::Metric metric) {
  for (const auto& b : o.observations)
    if (const auto* s = std::get_if<cluster::TelemetrySample>(&b); s && s->component == component && s->metric == metric)
      return s->value;
  return -1;
}

inline size_t Count(const Observed& o, Problem p) {
  return static_cast<size_t>(std::count_if(o.errors.begin(), o.errors.end(), [&](const ObservationError& e) { return e.problem == p; }));
}

// The first error about `component` with problem `p`, or nullptr.
inline const ObservationError* ErrorFor(const Observed& o, ComponentId component, Problem p) {
  for (const ObservationError& e : o.errors)
    if (e.component == component && e.problem == p) return &e;
  return nullptr;
}

inline std::string AllErrors(const Observed& o) {
  std::string s;
  for (const ObservationError& e : o.errors) s += e.ToString() + "\n";
  return s;
}

}  // namespace rackchaos::observe::testing
