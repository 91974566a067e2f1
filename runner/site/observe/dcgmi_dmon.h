// `dcgmi dmon -e 150,155,160,100,113,112,230 -c 1` from one tray host -> telemetry.
//
// dcgmi prints a header ("#Entity" then each field's short name), a unit line ("ID ..."), then one
// row per entity ("GPU 0", "GPU-I 1", "Switch 3", ...), every column left-aligned at a fixed width
// (dcgmi/DeviceMonitor.cpp). Columns are cut at the header's positions, because a field the host
// engine returned nothing for prints as blanks, not as a token. Short names read:
//   TMPTR (150 GPU temperature), POWER (155 power), PMLMT/EPLMT (160/164 power limit), SMCLK (100 SM
//   clock), SMMAX (113 max SM clock), DVCCTR (112 clocks event reasons, decimal), XIDER (230 last Xid).
// "N/A" (DCGM's blank values: not found, not supported, not permitted) and a blank column are
// kMissing. Rows of entities other than GPUs are skipped. A GPU row maps by its DCGM GPU id, which
// DCGM assigns in NVML index order. The header repeats every 14 samples; with -c > 1 the last row of
// a GPU wins. "Error: unable to establish a connection ..." (no host engine) is kUnavailable for the
// node; any other "Error..." line is kToolError. Never throws; linear in the input.
#pragma once

#include <string_view>

#include "runner/site/observe/host_map.h"
#include "runner/site/observe/observed.h"

namespace rackchaos::observe {

Observed ParseDcgmiDmon(std::string_view output, const HostMap& host);

}  // namespace rackchaos::observe
