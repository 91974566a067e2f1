// Streams incident logs into an Incident (runner/incident/incident.h).
//
// Every line of every file is offered to the parsers in turn: generic timeline (JSON lines, CSV with a
// header), tables (sacctmgr show event, sinfo -R), kernel lines (NVRM Xid, NVSwitch SXid, mlx5_core
// link changes), Slurm (slurmctld log, scontrol show node) and NCCL (watchdog timeouts, NCCL WARN,
// NCCL errors). A file may mix them. What no parser
// understands is counted by pattern. Files are read in 1 MiB blocks; a line longer than kMaxLineBytes
// is cut there. Memory is bounded by kMaxEvents, kMaxPatterns and the block size, not by the input.
// Not thread-safe; one importer per incident.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "runner/incident/incident.h"
#include "runner/incident/line_parsers.h"
#include "runner/incident/zone.h"

namespace rackchaos::incident {

struct ImportOptions {
  // Year for stamps that print none (journalctl, classic syslog). Unset: the year of the first stamp
  // that has one, else 1970 (offsets within the incident are right either way, except across New Year).
  std::optional<int> year;
  // Wall time (Unix seconds) of the boot that dmesg uptimes count from. Set: relative times (dmesg
  // uptimes, numeric timeline times) become wall times boot_time + t, comparable with Slurm's and the
  // journal's. Unset: they stay on their own axis.
  std::optional<double> boot_time;
  // The zone of wall-clock stamps that print none (Slurm, dmesg -T, syslog, journalctl short). Stamps
  // with a zone, and times from boot_time (already in UTC), are left alone.
  WallZone zone;
  // The host of kernel and NCCL lines that name none (plain dmesg, dmesg -T, a job's output): `host`
  // for every file, or per file (by the path as given to ImportFile) in `host_by_file`, which wins.
  std::string host;
  std::map<std::string, std::string> host_by_file;
};

class IncidentImporter {
 public:
  explicit IncidentImporter(ImportOptions options = {}) : options_(options) {}

  // Streams the file at `path` ("-" = standard input) through core/user_file.h: a regular file (or a pipe
  // on standard input) of at most kMaxIncidentLogBytes. kNotFound / kIoError when it cannot be read as
  // such; kInvalidArgument for a binary file (a NUL byte in its first block) and for a file none of whose
  // lines any parser understands; kInvalidArgument "FILE:LINE: ..." for the first number outside its
  // bound (incident.h, kMaxRelativeSeconds and after: a time, a GPU's Xid, an NVLink, a rank, a device, a
  // job id, a hostlist's node count). Content otherwise never fails.
  Status ImportFile(const std::string& path);
  // The same for text held in memory; `name` names it in reports. Its out-of-range numbers are in status().
  void ImportText(std::string_view text, const std::string& name);
  // The first number outside its bound so far, as "FILE:LINE: ..." (ok when none); such a line makes
  // no event.
  const Status& status() const { return number_error_; }

  // Fixes guessed years, orders events by time (stable: equal times keep file order) and links each
  // Xid to the one it follows from (runner/incident/xid_links.h). Call once.
  Incident Finish();

 private:
  void BeginFile(const std::string& name);
  void Line(std::string_view line);
  void Feed(std::string_view chunk);  // split into lines across chunk boundaries
  void EndFile();

  ImportOptions options_;
  Incident incident_;
  FileState state_;
  int file_ = 0;
  int64_t file_line_ = 0;  // 1-based line number in the current file
  std::string file_host_;  // ImportOptions' host for the current file
  std::string partial_;    // the line being assembled across chunks (at most kMaxLineBytes)
  bool partial_overlong_ = false;
  std::vector<IncidentEvent> scratch_;
  std::string pattern_;  // reused for every not-understood line
  Status number_error_;  // the first out-of-range number (ok when none)
};

}  // namespace rackchaos::incident
