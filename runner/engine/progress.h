// The progress line of long runs and sweeps, on stderr. Display only: it never reaches the report, and
// the wall time it reads for the ETA never reaches the run.
//
// On a terminal: one line redrawn in place at most four times a second, cut to the terminal's width and
// erased when done, so the summary starts on a clean screen; nothing at all in the first second (a
// short run shows no line). It is drawn with carriage returns and spaces only, no escape codes. Not a
// terminal (--progress into a log): a plain line every 10 s, ended by a newline; never a carriage
// return or an escape code. The ETA extrapolates from the first report on (the setup of a large cluster
// is not simulation) and appears only once a second of it has passed: no "ETA 9s" for a 0.2 s run.
//
// Shown when asked for (--progress) or when stderr is a terminal, never under --quiet. Not thread-safe:
// a sweep calls it under its own lock.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
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

// Where the line goes and how time passes; tests give a file, a width and a clock of their own.
struct ProgressOutput {
  std::FILE* file = stderr;
  bool terminal = false;  // redraw in place and erase when done; otherwise plain lines
  int width = 80;         // terminal columns
  std::function<double()> now_s;  // wall seconds; empty: the steady clock
};
// stderr, as it is: a terminal (with its width) or not.
ProgressOutput StderrOutput();

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : ProgressLine(enabled, StderrOutput()) {}
  ProgressLine(bool enabled, ProgressOutput output);
  ~ProgressLine() { Done(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Erases a drawn terminal line (once), before other output.
  void Done();

  // "run: 2d03h of 7d simulated, 14 faults, jobs up 3/4, ETA 1m20s"
  void Run(const RunProgress& p);
  // "sweep: 12/40 seeds done, 1 failed, 2.4 seeds/s, ETA 12s"
  void Sweep(int done, int total, int failed);

  // The texts, for tests: `elapsed_s` of wall time since the fraction was `start_fraction` (the
  // ETA extrapolates over that stretch, and only once it is a second or more).
  static std::string RunText(const RunProgress& p, double elapsed_s, double start_fraction = 0);
  static std::string SweepText(int done, int total, int failed, double elapsed_s);

 private:
  void Draw(const std::string& text, bool final);
  double Now() const;

  bool enabled_;
  ProgressOutput out_;
  double start_s_ = 0, last_s_ = -1;
  double first_report_s_ = -1, first_fraction_ = 0;  // the first Run() call: where the ETA starts
  size_t drawn_ = 0;  // columns of the line on the terminal now (0: none)
};

}  // namespace rackchaos::runner
