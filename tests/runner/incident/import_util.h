// Test helper: an Incident from text held in memory.
#pragma once

#include <string>

#include "runner/incident/importer.h"

namespace rackchaos::incident::testing {

inline Incident Import(const std::string& text, ImportOptions options = {}, const std::string& name = "test.log") {
  IncidentImporter importer(options);
  importer.ImportText(text, name);
  return importer.Finish();
}

}  // namespace rackchaos::incident::testing
