// The time zone of log stamps that print none (Slurm's logs and sacctmgr, dmesg -T, classic syslog,
// journalctl short): a fixed offset ("+02:00", "-0530", "UTC") or an IANA zone name
// ("Europe/Berlin", with its daylight-saving rules, read from the system's tz database).
#pragma once

#include <string>

#include "core/status.h"

namespace rackchaos::incident {

class WallZone {
 public:
  WallZone() = default;  // UTC
  // "UTC", "Z", "+HH:MM", "+HHMM", "-HH", or a name under /usr/share/zoneinfo. an invalid-argument status otherwise.
  static Result<WallZone> Parse(const std::string& text);

  // Unix seconds of a wall-clock reading in this zone, given as if it were UTC. In an IANA zone a reading
  // in the hour a DST change skips or repeats resolves the way mktime() does.
  double ToUtc(double naive_seconds) const;
  bool is_utc() const { return name_.empty() && offset_s_ == 0; }

 private:
  std::string name_;    // IANA name; empty for a fixed offset
  double offset_s_ = 0;  // east of UTC
};

}  // namespace rackchaos::incident
