// Test helpers: an Incident from text held in memory or from a sample file.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "runner/incident/importer.h"

namespace rackchaos::incident::testing {

inline Incident Import(const std::string& text, ImportOptions options = {}, const std::string& name = "test.log") {
  IncidentImporter importer(options);
  importer.ImportText(text, name);
  return importer.Finish();
}

// An Incident from a file of the source tree (`relative` to its root): the verbatim samples.
inline Incident ImportSourceFile(const std::string& relative, ImportOptions options = {}) {
  IncidentImporter importer(options);
  REQUIRE(importer.ImportFile(std::string(RACKCHAOS_SOURCE_DIR) + "/" + relative).ok());
  return importer.Finish();
}

// An event's kind as the report names it.
inline std::string Kind(const IncidentEvent& e) { return EventKindName(e.kind); }

}  // namespace rackchaos::incident::testing
