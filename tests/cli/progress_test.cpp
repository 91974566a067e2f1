// The progress line (runner/engine/progress.h) on a fake clock and a temporary file: plain lines into a
// file, in-place redraws erased when done on a terminal, nothing for a short run, an ETA only from a
// second of simulation on (issue 27: "ETA 9s" for a 0.2 s run, \r and escape codes in a log file, the
// line left on the screen after the summary).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "runner/engine/progress.h"

using namespace rackchaos;
using runner::ProgressLine;
using runner::ProgressOutput;
using runner::RunProgress;

namespace {

// A progress line writing into a temporary file, on a clock the test moves.
struct Harness {
  std::FILE* file = std::tmpfile();
  double now = 0;
  explicit Harness(bool terminal, int width = 80)
      : line(true, ProgressOutput{file, terminal, width, [this] { return now; }}) {}
  ~Harness() {
    line.Done();  // before the file closes
    std::fclose(file);
  }
  std::string Written() {
    std::fflush(file);
    std::string out;
    std::rewind(file);
    for (int c; (c = std::fgetc(file)) != EOF;) out += static_cast<char>(c);
    return out;
  }
  // Reports `seconds` of a run over a 1 h horizon, ten times a second, the run `fraction` done at the end.
  void Run(double seconds, double from = 0, double to = 1) {
    for (int i = 0; i <= static_cast<int>(seconds * 10); ++i) {
      const double share = from + (to - from) * i / (seconds * 10);
      line.Run({Duration::FromSecondsF(3600 * share), Duration::Hours(1), i, 1, 1});
      now += 0.1;
    }
  }
  ProgressLine line;
};

}  // namespace

TEST_CASE("progress: into a file, plain lines every 10 s - no carriage return, no escape code") {
  Harness h(false);
  h.Run(25);
  h.line.Done();
  const std::string out = h.Written();
  CAPTURE(out);
  CHECK(out.find('\r') == std::string::npos);
  CHECK(out.find('\x1b') == std::string::npos);
  CHECK(out.ends_with("\n"));
  size_t lines = 0;
  for (char c : out) lines += c == '\n';
  CHECK(lines == 3);  // at 1 s, 11 s and 21 s
  CHECK(out.rfind("run: ", 0) == 0);
}

TEST_CASE("progress: on a terminal the line is redrawn in place and erased when done") {
  Harness h(true, 40);
  h.Run(3);
  const std::string drawn = h.Written();
  CHECK(drawn.find('\n') == std::string::npos);
  CHECK(drawn.find('\x1b') == std::string::npos);
  CHECK(drawn.rfind("\rrun: ", 0) == 0);
  // Cut to the terminal's width (one column short), then erased: back, blanks, back.
  for (size_t start = drawn.find('\r'); start != std::string::npos; start = drawn.find('\r', start + 1)) {
    const size_t end = drawn.find('\r', start + 1);
    CHECK((end == std::string::npos ? drawn.size() : end) - start - 1 <= 39);
  }
  h.line.Done();
  const std::string out = h.Written();
  CHECK(out.ends_with("\r" + std::string(39, ' ') + "\r"));
  h.line.Done();
  CHECK(h.Written() == out);  // once
}

TEST_CASE("progress: a run of a fraction of a second draws nothing, and no ETA") {
  for (bool terminal : {true, false}) {
    Harness h(terminal);
    h.Run(0.2);
    h.line.Done();
    CHECK(h.Written().empty());
  }
}

TEST_CASE("progress: the ETA extrapolates from the first report on, not from the setup before it") {
  Harness h(true);
  h.now = 5;  // five seconds building a large cluster before the first report
  h.Run(2, 0.01, 0.51);
  // The last redraw, at about 46% after 1.8 s of simulation: about 2 s to go (3 s rounded up). From the
  // start it would be 6.8 s for 46%: 8 s to go.
  const std::string out = h.Written();
  const std::string last = out.substr(out.rfind('\r'));
  CAPTURE(last);
  CHECK(last.ends_with(", ETA 3s"));
  CHECK(ProgressLine::RunText({Duration::Minutes(30), Duration::Hours(1), 0, 0, 0}, 0.5) ==
        "run: 30m of 1h simulated, 0 fault(s), jobs up 0/0");  // under a second: no ETA yet
}
