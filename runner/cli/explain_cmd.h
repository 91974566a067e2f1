// `rackchaos explain NAME`: everything rackchaos knows about one injector, detector, rack model, healer
// policy, gate metric or failure catalogue (a shipped name or a catalogue file's path), printed from the same tables the code runs on (injector parameter specs, the
// detector table, the embedded catalogue and policy YAML, the metric definitions, the inventory's
// action table), so the text cannot drift from the behaviour.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace rackchaos::runner {

// The explanation of `name` (every kind it names, e.g. an injector and a metric of the same name).
// NotFound, listing the nearest known names and the `rackchaos list` commands, when nothing matches.
Result<std::string> Explain(const std::string& name);

// Every name Explain() accepts, sorted (shell completion and the man page use it).
std::vector<std::string> ExplainableNames();

// The subcommand: the explanation on stdout, 0; unknown name: one line on stderr, 2.
int CmdExplain(const std::string& name);

}  // namespace rackchaos::runner
