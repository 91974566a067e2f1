#include "runner/incident/importer.h"

#include <algorithm>
#include <charconv>
#include <memory>

#include "core/strings.h"
#include "core/user_file.h"
#include "core/yaml_guard.h"
#include "runner/incident/xid_links.h"

namespace rackchaos::incident {
namespace {

constexpr size_t kBlockBytes = 1 << 20;

constexpr std::string_view kLogWhat = "incident log";

// Events whose lines come from one host's kernel or one job's output: --host names it when they do not.
bool TakesFileHost(EventKind kind) {
  switch (kind) {
    case EventKind::kXid:
    case EventKind::kSxid:
    case EventKind::kNicDown:
    case EventKind::kNicUp:
    case EventKind::kNcclTimeout:
    case EventKind::kNcclWarn:
    case EventKind::kNcclError: return true;
    default: return false;
  }
}

}  // namespace

void IncidentImporter::BeginFile(const std::string& name) {
  file_ = static_cast<int>(incident_.files.size());
  incident_.files.push_back(name);
  state_ = FileState{};
  file_line_ = 0;
  auto host = options_.host_by_file.find(name);
  file_host_ = host != options_.host_by_file.end() ? host->second : options_.host;
  partial_.clear();
  partial_overlong_ = false;
}

void IncidentImporter::EndFile() {
  if (!partial_.empty()) Line(partial_);
  partial_.clear();
  partial_overlong_ = false;
}

Status IncidentImporter::ImportFile(const std::string& path) {
  RC_ASSIGN_OR_RETURN(UserFile file, UserFile::Open(path, {kLogWhat, kMaxIncidentLogBytes, /*stdin_dash=*/true}));
  BeginFile(path);
  const int64_t understood_before = incident_.understood;
  std::unique_ptr<char[]> block(new char[kBlockBytes]);
  for (bool first = true;; first = false) {
    RC_ASSIGN_OR_RETURN(size_t n, file.Read(block.get(), kBlockBytes));
    if (n == 0) break;
    // A NUL in the first block: a binary or compressed file, not a log with a stray byte in it.
    if (first) RC_RETURN_IF_ERROR(GuardNotBinary(std::string_view(block.get(), n), path, kLogWhat));
    Feed(std::string_view(block.get(), n));
  }
  EndFile();
  RC_RETURN_IF_ERROR(number_error_);
  if (file_line_ > 0 && incident_.understood == understood_before) {
    return Status::Invalid((path == "-" ? std::string("standard input") : path) + ": none of its " +
                           std::to_string(file_line_) +
                           " line(s) is in a format rackchaos reads (docs/replay.md lists them); is it an incident log?");
  }
  return Status::Ok();
}

void IncidentImporter::ImportText(std::string_view text, const std::string& name) {
  BeginFile(name);
  Feed(text);
  EndFile();
}

void IncidentImporter::Feed(std::string_view chunk) {
  incident_.bytes += static_cast<int64_t>(chunk.size());
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    std::string_view piece = chunk.substr(0, nl);
    if (!partial_overlong_) {
      size_t room = kMaxLineBytes - partial_.size();
      if (piece.size() > room) {
        partial_overlong_ = true;
        ++incident_.overlong_lines;
      }
      partial_.append(piece.substr(0, std::min(room, piece.size())));
    }
    if (nl == std::string_view::npos) return;
    chunk.remove_prefix(nl + 1);
    Line(partial_);
    partial_.clear();
    partial_overlong_ = false;
  }
}

void IncidentImporter::Line(std::string_view line) {
  ++incident_.lines;
  ++file_line_;
  if (Trim(line).empty()) return;
  SplitLine split = SplitLogLine(line);
  scratch_.clear();
  LineResult r = LineResult::kNotUnderstood;
  std::string_view body = split.body;
  if (split.time.axis == TimeAxis::kNone && !body.empty() && body[0] == '{')
    r = ParseTimelineLine(body, state_, scratch_);
  if (r == LineResult::kNotUnderstood && split.time.axis == TimeAxis::kNone) r = ParseTableLine(line, state_, scratch_);
  if (r == LineResult::kNotUnderstood) r = ParseKernelLine(line, split, state_, scratch_);
  if (r == LineResult::kNotUnderstood) r = ParseSlurmLine(split, state_, scratch_);
  if (r == LineResult::kNotUnderstood) r = ParseNcclLine(line, split, state_, scratch_);
  if (r == LineResult::kNotUnderstood) {
    CountNotUnderstood(incident_, body, file_, file_line_, pattern_);
    return;
  }
  ++incident_.understood;
  for (IncidentEvent& e : scratch_) {
    // A number outside its bound: the first one fails the import, named with its file and line.
    if (std::string why = CheckEventNumbers(e); !why.empty()) {
      if (number_error_.ok()) {
        const std::string& name = incident_.files[static_cast<size_t>(file_)];
        number_error_ = Status::Invalid((name == "-" ? std::string("standard input") : name) + ":" +
                                        std::to_string(file_line_) + ": " + why);
      }
      continue;
    }
    if (incident_.events.size() >= kMaxEvents) {
      ++incident_.dropped_events;
      continue;
    }
    e.file = file_;
    e.line = file_line_;
    if (e.host.empty() && TakesFileHost(e.kind)) e.host = file_host_;
    if (e.kind == EventKind::kXid && e.code == 0 && e.action == "xid") {  // timeline rows: the code is in the detail
      size_t d = e.detail.find_first_of("0123456789");
      if (d != std::string::npos)
        std::from_chars(e.detail.data() + d, e.detail.data() + std::min(e.detail.size(), d + 6), e.code);
    }
    incident_.events.push_back(std::move(e));
  }
}

Incident IncidentImporter::Finish() {
  for (IncidentEvent& e : incident_.events) {
    if (options_.boot_time && e.time.axis == TimeAxis::kRelative)
      e.time = {TimeAxis::kWall, *options_.boot_time + e.time.seconds, false, true};
  }
  std::optional<int> year = options_.year;
  for (const IncidentEvent& e : incident_.events) {
    if (year) break;
    if (e.time.axis == TimeAxis::kWall && !e.time.year_guessed) year = YearOf(e.time.seconds);
  }
  for (IncidentEvent& e : incident_.events) {
    if (!e.time.year_guessed) continue;
    e.time.seconds = FixGuessedYear(e.time.seconds, year.value_or(1970));
    e.time.year_guessed = false;
  }
  // After the years are known: a zone's offset depends on the date.
  if (!options_.zone.is_utc())
    for (IncidentEvent& e : incident_.events)
      if (e.time.axis == TimeAxis::kWall && !e.time.zoned) {
        e.time.seconds = options_.zone.ToUtc(e.time.seconds);
        e.time.zoned = true;
      }
  std::stable_sort(incident_.events.begin(), incident_.events.end(),
                   [](const IncidentEvent& a, const IncidentEvent& b) {
                     if (a.time.axis != b.time.axis) return a.time.axis < b.time.axis;
                     return a.time.seconds < b.time.seconds;
                   });
  LinkXidCauses(incident_.events);
  return std::move(incident_);
}

}  // namespace rackchaos::incident
