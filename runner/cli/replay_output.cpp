#include "runner/cli/replay_output.h"

#include <filesystem>
#include <ostream>

#include "core/units.h"
#include "reports/text_table.h"

namespace rackchaos::runner {
namespace {

constexpr size_t kPatternsShown = 5;
constexpr size_t kNotReplayedShown = 10;
constexpr size_t kJobEventsShown = 10;

std::string Maybe(const std::optional<double>& s) { return s ? FormatDurationShort(Duration::Seconds(*s)) : "-"; }
std::string Maybe(const std::optional<Duration>& d) { return d ? FormatDurationShort(*d) : "-"; }
std::string At(double s) { return FormatDurationShort(Duration::Seconds(s)); }

void PrintPatterns(std::ostream& out, const incident::Incident& inc, bool verbose) {
  auto shown = incident::TopPatterns(inc, verbose ? SIZE_MAX : kPatternsShown);
  if (shown.empty()) return;
  out << "\nNot understood (" << (verbose ? "all " : "top ") << shown.size() << " of " << inc.patterns.size()
      << " patterns, " << inc.not_understood << " lines)\n";
  for (const auto& [pattern, c] : shown)
    out << "  " << c.count << "  " << Ascii(pattern, 70) << "  (first "
        << Ascii(std::filesystem::path(inc.files[static_cast<size_t>(c.file)]).filename().string(), 40) << ":"
        << c.first_line << ")\n";
  if (shown.size() < inc.patterns.size()) {
    int64_t rest = inc.not_understood;
    for (const auto& [pattern, c] : shown) rest -= c.count;
    out << "  ... " << inc.patterns.size() - shown.size() << " more pattern(s), " << rest
        << " line(s): -v lists them all\n";
  }
}

}  // namespace

std::string Ascii(const std::string& s, size_t max) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max) return out + "...";
    out += (c < 0x20 || c >= 0x7f) ? '?' : static_cast<char>(c);
  }
  return out;
}

void PrintImport(std::ostream& out, const incident::Incident& inc, const ReplayTimeline& t, bool verbose) {
  out << "Incident: " << inc.files.size() << " file(s), " << inc.lines << " lines, " << inc.events.size()
      << " events, " << inc.not_understood << " lines not understood";
  if (inc.overlong_lines) out << ", " << inc.overlong_lines << " overlong lines cut";
  if (inc.dropped_events) out << ", " << inc.dropped_events << " events beyond the cap dropped";
  out << "\n  " << t.faults.size() << " fault(s) replayed, " << t.follow_ups << " follow-up event(s) folded in, "
      << t.not_replayed_count << " event(s) not replayed, " << t.requeues << " job requeue(s); span "
      << FormatDurationShort(Duration::Seconds(t.span)) << "\n";
  if (t.hostless)
    out << "  " << t.hostless << " event(s) name no host (plain dmesg, dmesg -T): give --host NODE to replay them\n";
  PrintPatterns(out, inc, verbose);
  if (t.not_replayed.empty()) return;
  const size_t listed = verbose ? t.not_replayed.size() : std::min(t.not_replayed.size(), kNotReplayedShown);
  out << "\nNot replayed (" << t.not_replayed_count << ")\n";
  for (size_t i = 0; i < listed; ++i)
    out << "  " << Ascii(t.not_replayed[i].source, 70) << ": " << Ascii(t.not_replayed[i].why, 200) << "\n";
  if (static_cast<int64_t>(listed) < t.not_replayed_count)
    out << "  ... " << t.not_replayed_count - static_cast<int64_t>(listed) << " more"
        << (verbose ? " (only the first " + std::to_string(kMaxNotReplayedListed) + " are kept)" : ": -v lists them")
        << "\n";
}

void PrintSideBySide(std::ostream& out, const ReplayTimeline& t, const RunSpec& spec, const RunMetrics& m) {
  using reports::Align;
  reports::TextTable table({"#", "at", "fault", "severity", "target", "site drained", "site resumed", "healer detect",
                            "isolate", "recover", "GPUs(d+c)", "jobs"},
                           {Align::kRight, Align::kRight, Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight,
                            Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight});
  for (size_t i = 0; i < t.faults.size(); ++i) {
    const ReplayFault& f = t.faults[i];
    const FaultMetrics* fm = nullptr;  // the spec keeps the plan's order, which is the timeline's
    for (const auto& candidate : m.faults) {
      if (i < spec.faults.size() && candidate.fault == spec.faults[i].id) fm = &candidate;
    }
    std::string fault = f.kind;
    for (const auto& [k, v] : f.params) fault += " " + k + "=" + v;
    table.AddRow({std::to_string(i + 1), At(f.at), Ascii(fault, 30), f.fatal ? "fatal" : "non-fatal",
                  Ascii(f.target, 40), Maybe(f.drained_after), Maybe(f.resumed_after),
                  fm ? Maybe(fm->time_to_detect) : "-", fm ? Maybe(fm->time_to_isolate) : "-",
                  fm ? Maybe(fm->time_to_recover) : "-",
                  fm ? std::to_string(fm->gpus_direct) + "+" + std::to_string(fm->gpus_collateral) : "-",
                  fm ? std::to_string(fm->jobs_touched) + " (" + std::to_string(fm->jobs_interrupted) + " int)" : "-"});
  }
  out << "\nIncident (site) vs healer policy '" << Ascii(spec.policy.name)
      << "' (times after each fault; 'at' from the first event; the site's drain counts from the first fatal fault "
         "of its tray)\n"
      << table.Render("  ");
  for (size_t i = 0; i < t.faults.size(); ++i) {
    for (const std::string& c : t.faults[i].consequences)
      out << "  #" << i + 1 << " caused " << Ascii(c, 80) << "\n";
  }
}

void PrintJobSide(std::ostream& out, const ReplayTimeline& t, bool verbose) {
  if (!t.job_events.empty()) {
    out << "\nJob requeues and kills (" << t.requeues << " requeue(s), " << t.kills << " kill(s))\n";
    const size_t listed = verbose ? t.job_events.size() : std::min(t.job_events.size(), kJobEventsShown);
    for (size_t i = 0; i < listed; ++i) {
      const ReplayJobEvent& j = t.job_events[i];
      out << "  " << At(j.at) << "  " << j.kind << " job " << Ascii(j.job, 30);
      if (!j.node.empty()) out << " on " << Ascii(j.node, 40);
      if (j.fault >= 0) {
        const ReplayFault& f = t.faults[static_cast<size_t>(j.fault)];
        out << ", " << At(j.at - f.at) << " after fault #" << j.fault + 1;
      }
      out << "\n";
    }
    if (listed < t.job_events.size()) out << "  ... " << t.job_events.size() - listed << " more: -v lists them\n";
  }
  const NcclSummary& n = t.nccl;
  if (n.timeouts + n.warnings + n.errors == 0) return;
  out << "\nNCCL (the job's view)\n";
  auto line = [&](const char* what, int64_t count, const std::optional<double>& first, const std::string& detail) {
    if (count == 0) return;
    out << "  " << count << " " << what;
    if (first) {
      out << ", first at " << At(*first);
      if (t.first_fatal) {
        const double after = *first - *t.first_fatal;
        out << " (" << (after >= 0 ? At(after) + " after" : At(-after) + " before") << " the first fatal fault)";
      }
    }
    if (!detail.empty()) out << ": " << Ascii(detail, 90);
    out << "\n";
  };
  line("watchdog timeout(s)", n.timeouts, n.first_timeout, n.first_timeout_detail);
  if (!n.ranks.empty()) out << "    from " << n.ranks.size() << " rank(s)\n";
  line("NCCL WARN line(s)", n.warnings, n.first_warning, n.first_warning_detail);
  if (!n.hosts.empty()) {
    out << "    on ";
    for (size_t i = 0; i < n.hosts.size() && i < 8; ++i) out << (i ? ", " : "") << Ascii(n.hosts[i], 40);
    if (n.hosts.size() > 8) out << ", ... (" << n.hosts.size() << ")";
    out << "\n";
  }
  line("NCCL error(s)", n.errors, n.first_error, n.first_error_detail);
}

std::string NothingToReplay(const incident::Incident& inc, const ReplayTimeline& t) {
  if (inc.events.empty())
    return "nothing to replay: none of the " + std::to_string(inc.lines) +
           " line(s) read is an event the importers know (docs/replay.md lists the formats; -v lists every line "
           "pattern not understood)";
  if (t.hostless > 0)
    return "nothing to replay: " + std::to_string(t.hostless) +
           " event(s) name no host (plain dmesg and dmesg -T print none) and none maps to a fault; give "
           "--host NODE (a node of the inventory or --gpu-map), or --host FILE=NODE for each file";
  return "nothing to replay: none of the " + std::to_string(inc.events.size()) +
         " event(s) imported maps to a fault (see 'Not replayed' above; -v lists them all)";
}

}  // namespace rackchaos::runner
