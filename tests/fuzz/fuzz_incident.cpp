// libFuzzer target: any bytes through the incident importers (kernel, Slurm, NCCL, tables, JSON/CSV timeline).
// The contract under test: never crash, never hang, bounded work per line, and the counts add up.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/strings.h"
#include "runner/incident/importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ri = rackchaos::incident;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ri::ImportOptions options;
  if (size > 0 && (data[0] & 1)) options.host = "fuzz-host";  // host-less lines take --host
  ri::IncidentImporter importer(options);
  importer.ImportText(text, "fuzz.log");
  ri::Incident inc = importer.Finish();
  // Every non-blank line is understood or counted as not understood; never both, never neither.
  int64_t blank = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    // Blank as the importer reads it: core/strings.h's IsSpace (\v and \f too), within the line's first
    // kMaxLineBytes. (This target's own list, " \t\r\n", fell behind when the importer took the shared Trim:
    // regressions/incident/vt-blank-line.)
    if (rackchaos::Trim(line.substr(0, ri::kMaxLineBytes)).empty()) ++blank;
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  if (inc.understood + inc.not_understood + blank != inc.lines) std::abort();
  if (inc.patterns.size() > ri::kMaxPatterns + 1) std::abort();
  for (size_t i = 1; i < inc.events.size(); ++i) {
    const auto& a = inc.events[i - 1].time;
    const auto& b = inc.events[i].time;
    if (a.axis == b.axis && a.seconds > b.seconds) std::abort();  // Finish() orders each axis by time
  }
  // An Xid's cause is an earlier Xid of the same GPU.
  for (size_t i = 0; i < inc.events.size(); ++i) {
    const auto& e = inc.events[i];
    if (e.caused_by < 0) continue;
    if (static_cast<size_t>(e.caused_by) >= i) std::abort();
    const auto& c = inc.events[static_cast<size_t>(e.caused_by)];
    if (c.kind != ri::EventKind::kXid || e.kind != ri::EventKind::kXid || c.address != e.address || c.host != e.host)
      std::abort();
  }
  (void)ri::TopPatterns(inc, 10);
  (void)ri::TopPatterns(inc, SIZE_MAX);
  return 0;
}
