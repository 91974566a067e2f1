#include "runner/engine/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace rackchaos::runner {
namespace {

constexpr double kRedrawS = 0.25;    // terminal: at most four redraws a second
constexpr double kLogEveryS = 10;    // not a terminal: a line every 10 s
constexpr double kQuietS = 1;        // nothing drawn in the first second
constexpr double kEtaAfterS = 1;     // no ETA from less than a second of progress

// ", ETA 1m20s", or "" before there is enough to extrapolate from.
std::string Eta(double done, double elapsed_s) {
  if (done <= 0 || done >= 1 || elapsed_s < kEtaAfterS) return "";
  double left = elapsed_s * (1 - done) / done;
  return ", ETA " + FormatDuration(Duration::Seconds(static_cast<int64_t>(std::ceil(left))));
}

}  // namespace

bool ProgressWanted(bool asked, bool quiet) { return !quiet && (asked || isatty(STDERR_FILENO) == 1); }

ProgressOutput StderrOutput() {
  ProgressOutput out;
  out.terminal = isatty(STDERR_FILENO) == 1;
  winsize ws{};
  if (out.terminal && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) out.width = ws.ws_col;
  return out;
}

ProgressLine::ProgressLine(bool enabled, ProgressOutput output) : enabled_(enabled), out_(std::move(output)) {
  start_s_ = Now();
}

double ProgressLine::Now() const {
  if (out_.now_s) return out_.now_s();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ProgressLine::Done() {
  if (drawn_ == 0) return;
  // Back to the line's start, blanks over it, back again: the next output starts on a clean line.
  std::fprintf(out_.file, "\r%*s\r", static_cast<int>(drawn_), "");
  std::fflush(out_.file);
  drawn_ = 0;
}

std::string ProgressLine::RunText(const RunProgress& p, double elapsed_s, double start_fraction) {
  double fraction = p.horizon > Time{} ? p.now.Seconds() / p.horizon.Seconds() : 0;
  // The share still to go, over the share done since the clock started: the ETA of the rest.
  double done = fraction >= 1 ? 1 : start_fraction >= 1 ? 0 : (fraction - start_fraction) / (1 - start_fraction);
  return "run: " + FormatDuration(p.now) + " of " + FormatDuration(p.horizon) + " simulated, " +
         std::to_string(p.faults) + " fault(s), jobs up " + std::to_string(p.jobs_up) + "/" + std::to_string(p.jobs) +
         Eta(done, elapsed_s);
}

std::string ProgressLine::SweepText(int done, int total, int failed, double elapsed_s) {
  char rate[32] = "";
  if (elapsed_s > 0 && done > 0) std::snprintf(rate, sizeof rate, ", %.1f seeds/s", done / elapsed_s);
  return "sweep: " + std::to_string(done) + "/" + std::to_string(total) + " seeds done, " + std::to_string(failed) +
         " failed" + rate + Eta(total > 0 ? static_cast<double>(done) / total : 0, elapsed_s);
}

void ProgressLine::Run(const RunProgress& p) {
  if (!enabled_) return;
  const double now = Now();
  if (first_report_s_ < 0) {
    first_report_s_ = now;
    first_fraction_ = p.horizon > Time{} ? p.now.Seconds() / p.horizon.Seconds() : 0;
  }
  Draw(RunText(p, now - first_report_s_, first_fraction_), false);
}

void ProgressLine::Sweep(int done, int total, int failed) {
  if (!enabled_) return;
  Draw(SweepText(done, total, failed, Now() - start_s_), done == total);
}

void ProgressLine::Draw(const std::string& text, bool final) {
  const double now = Now();
  if (now - start_s_ < kQuietS) return;  // a short run or sweep ends before it would be read
  if (!final && last_s_ >= 0 && now - last_s_ < (out_.terminal ? kRedrawS : kLogEveryS)) return;
  last_s_ = now;
  if (!out_.terminal) {
    std::fprintf(out_.file, "%s\n", text.c_str());
    std::fflush(out_.file);
    return;
  }
  // One column short of the width: a line that fills the last column wraps on some terminals.
  const size_t fit = std::min(text.size(), static_cast<size_t>(std::max(out_.width - 1, 1)));
  const size_t blanks = drawn_ > fit ? drawn_ - fit : 0;  // what a longer previous line left
  std::fprintf(out_.file, "\r%.*s%*s", static_cast<int>(fit), text.c_str(), static_cast<int>(blanks), "");
  std::fflush(out_.file);
  drawn_ = fit + blanks;
}

}  // namespace rackchaos::runner
