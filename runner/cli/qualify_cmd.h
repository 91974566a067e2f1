// `rackchaos qualify SUITE --rack SERIAL`: a suite's stages of plans against one rack, one record
// (runner/campaign/qualify.h). Every plan is loaded and validated first (real plans against their site
// inventory too); then each runs on the simulator or, for a plan with a site inventory, on its hosts.
#pragma once

#include <string>

namespace rackchaos::runner {

struct QualifyArgs {
  std::string suite;
  std::string rack;
  std::string db = "rackchaos.db";
  std::string junit;  // also write JUnit XML here
  std::string command_line;
  bool quiet = false;
  bool progress = false;
  // Real plans: the fault ledger (empty: <db>.ledger) and first contact with unknown host keys.
  std::string ledger;
  bool accept_new_host_keys = false;
};

// Exit codes (core/exit_code.h): 0 every plan passed; 1 a plan failed or was aborted (later stages
// skipped); 2 bad suite or plan; 3 database or backend error; 4 interrupted.
int CmdQualify(const QualifyArgs& args);

}  // namespace rackchaos::runner
