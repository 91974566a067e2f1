// A sweep's aggregates (runner/campaign/sweep.h SweepResult) as text, CSV and a self-contained HTML page.
//
// Determinism: the table of metrics, the CSV without timing and the HTML page depend only on the stored
// simulated results, so the same sweep gives the same bytes on any machine, after `report merge` of its
// shards too. The runs' wall and CPU times (SweepResult::timing) vary between machines and invocations:
// they appear only in RenderSweepTiming and in the CSV when asked for, never in the HTML page.
#pragma once

#include <string>

#include "runner/campaign/sweep.h"

namespace rackchaos::runner {

// The stats as a text table, one row per grid point and metric: runs, n, mean, sd, min, max, p50, p95,
// the 95% CI of the mean (time metrics in seconds) and "<- highest" / "<- lowest" on each metric's best
// point (SweepStat::best), then one line per metric naming its best point and mean.
std::string RenderSweepTable(const SweepResult& result);

// The wall and CPU milliseconds of each grid point's runs: n, mean, p50, p95, max.
std::string RenderSweepTiming(const SweepResult& result);

// One CSV row per grid point and metric (RFC 4180, header first): point, one column per grid key with
// the point's value, metric, runs, n, mean, sd, min, max, p50, p95, ci_low, ci_high. With `timing`, two
// more rows per point, metrics run.wall_ms and run.cpu_ms.
std::string RenderSweepCsv(const SweepResult& result, bool timing);

// A self-contained HTML page (no script, no external resource): per metric, its best point and mean, an
// inline SVG plot of the mean against the grid point with 95% CI bars (the best point larger, in red), and
// a table of the stats (the best row marked).
std::string RenderSweepHtml(const SweepResult& result);

}  // namespace rackchaos::runner
