// `rackchaos init [--model M] [--racks N] [--dir D]`: scaffolds a commented plan (plan.yaml) that runs on
// the simulated cluster as written, and a site inventory (site.yaml) for the same model to fill in
// for real racks. The texts are derived from the catalogue entry, so every target exists in the model.
#pragma once

#include <string>

#include "core/status.h"

namespace rackchaos::runner {

struct InitFiles {
  std::string plan;  // plan.yaml
  std::string site;  // site.yaml
};

// The two files for `racks` racks of catalogue model `model`. NotFound (listing the models) for an
// unknown model, InvalidArgument for racks outside 1..1000.
Result<InitFiles> ScaffoldFiles(const std::string& model, int racks);

// The subcommand: writes DIR/plan.yaml and DIR/site.yaml (creating DIR) and says what to run next.
// Refuses (exit 2) to overwrite either file; 3 when a file cannot be written.
int CmdInit(const std::string& model, int racks, const std::string& dir);

}  // namespace rackchaos::runner
