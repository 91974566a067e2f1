// The progress line of long runs and sweeps: one line on stderr, redrawn in place ("\r"), at most a few
// times a second of wall time, and a newline when done. Display only: it never reaches the report, and
// the wall time it reads for the ETA never reaches the run.
//
// Shown when asked for (--progress) or when stderr is a terminal, never under --quiet. Not thread-safe:
// a sweep calls it under its own lock.
#pragma once

#include <chrono>
#include <string>

#include "core/units.h"

namespace rackchaos::runner {

// What a running simulation reports to the progress line (runner/engine/run.h RunOptions::progress).
struct RunProgress {
  Time now{};
  Time horizon{};
  int faults = 0;   // faults injected so far
  int jobs_up = 0;  // jobs running now
  int jobs = 0;
};

// Whether to draw it: `asked` (--progress) or stderr is a terminal, and not `quiet`.
bool ProgressWanted(bool asked, bool quiet);

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ~ProgressLine() { Done(); }
  // Ends a drawn line with a newline (once), before other output.
  void Done();

  // "run: 2d03h of 7d simulated, 14 faults, jobs up 3/4, ETA 1m20s"
  void Run(const RunProgress& p);
  // "sweep: 12/40 seeds done, 1 failed, 2.4 seeds/s, ETA 12s"
  void Sweep(int done, int total, int failed);

  // The texts, for tests: `elapsed_s` of wall time so far.
  static std::string RunText(const RunProgress& p, double elapsed_s);
  static std::string SweepText(int done, int total, int failed, double elapsed_s);

 private:
  void Draw(const std::string& text, bool final);
  double Elapsed() const;

  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace rackchaos::runner
