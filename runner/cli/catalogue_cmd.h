// `rackchaos catalogue fit LOGS... --cluster INVENTORY_OR_PLAN --since T --until T [-o FILE]`: a site's own
// failure catalogue from its incident logs (runner/replay/catalogue_fit.h has what counts as a failure):
// the failures per cause over the window, divided by the cluster's component-days, each rate with its
// exact 95% interval; the events it could not classify and those that are not failures are listed, and a
// cause with fewer than 3 events is warned about. The file it writes is a plan's `chaos.catalogue`.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rackchaos::runner {

struct CatalogueFitArgs {
  std::vector<std::string> logs;  // incident logs ("-" = standard input), any mix the importers read
  std::string cluster;            // a plan (its cluster) or a site inventory: the exposure
  std::string since, until;       // ISO times; zone-less ones are in --tz
  std::string output;             // the catalogue file; empty = YAML on stdout, the summary on stderr
  std::string name = "site";      // the catalogue's name
  std::string tz = "UTC";         // zone of stamps that print none (Slurm logs, syslog, journalctl short)
  std::optional<int> year;        // for stamps without a year
  std::string boot_time;          // ISO time plain dmesg uptimes count from
};

// Exit codes as core/exit_code.h: 0 written; 2 bad input (an unreadable log or cluster file, a bad time
// or window, no failure in the window to fit).
int CmdCatalogueFit(const CatalogueFitArgs& args);

}  // namespace rackchaos::runner
