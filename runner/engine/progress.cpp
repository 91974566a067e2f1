#include "runner/engine/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace rackchaos::runner {
namespace {

constexpr auto kRedraw = std::chrono::milliseconds(250);

// "ETA 1m20s", or "" before there is anything to extrapolate from.
std::string Eta(double fraction, double elapsed_s) {
  if (fraction <= 0 || fraction >= 1 || elapsed_s <= 0) return "";
  double left = elapsed_s * (1 - fraction) / fraction;
  return ", ETA " + FormatDuration(Duration::Seconds(static_cast<int64_t>(std::ceil(left))));
}

}  // namespace

bool ProgressWanted(bool asked, bool quiet) { return !quiet && (asked || isatty(STDERR_FILENO) == 1); }

ProgressLine::ProgressLine(bool enabled)
    : enabled_(enabled), start_(std::chrono::steady_clock::now()), last_(start_ - kRedraw) {}

void ProgressLine::Done() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

double ProgressLine::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string ProgressLine::RunText(const RunProgress& p, double elapsed_s) {
  double fraction = p.horizon > Time{} ? p.now.Seconds() / p.horizon.Seconds() : 0;
  return "run: " + FormatDuration(p.now) + " of " + FormatDuration(p.horizon) + " simulated, " +
         std::to_string(p.faults) + " fault(s), jobs up " + std::to_string(p.jobs_up) + "/" + std::to_string(p.jobs) +
         Eta(fraction, elapsed_s);
}

std::string ProgressLine::SweepText(int done, int total, int failed, double elapsed_s) {
  char rate[32] = "";
  if (elapsed_s > 0 && done > 0) std::snprintf(rate, sizeof rate, ", %.1f seeds/s", done / elapsed_s);
  return "sweep: " + std::to_string(done) + "/" + std::to_string(total) + " seeds done, " + std::to_string(failed) +
         " failed" + rate + Eta(total > 0 ? static_cast<double>(done) / total : 0, elapsed_s);
}

void ProgressLine::Run(const RunProgress& p) { Draw(RunText(p, Elapsed()), false); }

void ProgressLine::Sweep(int done, int total, int failed) { Draw(SweepText(done, total, failed, Elapsed()), done == total); }

void ProgressLine::Draw(const std::string& text, bool final) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (!final && now - last_ < kRedraw) return;
  last_ = now;
  // \033[K clears what a longer previous line left behind.
  std::fprintf(stderr, "\r%s\033[K", text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace rackchaos::runner
