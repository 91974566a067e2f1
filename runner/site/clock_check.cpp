#include "runner/site/clock_check.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace rackchaos::runner {
namespace {

// bash, whatever the login shell: armed faults wait in bash too, so this also proves it is there.
constexpr const char* kProbe = "exec bash -c 'printf \"%s\\n\" \"$EPOCHREALTIME\"'";

// "1764505000.123456" (the decimal point may be a comma in some locales) as microseconds; 0 if not.
int64_t StampMicros(const std::string& text) {
  std::istringstream in(text);
  int64_t seconds = 0;
  char point = 0;
  std::string micros;
  if (!(in >> seconds >> point >> micros) || (point != '.' && point != ',') || micros.size() != 6) return 0;
  for (char c : micros)
    if (c < '0' || c > '9') return 0;
  return seconds * 1000000 + std::stoll(micros);
}

}  // namespace

std::vector<HostClock> CheckClocks(ssh::SshPool& pool, const std::vector<std::string>& hosts) {
  std::vector<HostClock> out;
  for (const ssh::CommandResult& r : pool.RunAll(hosts, kProbe)) {
    HostClock c{r.host, r.status, 0, 0};
    const int64_t stamp = r.status.ok() ? StampMicros(r.out) : 0;
    if (r.status.ok() && (r.exit_status != 0 || stamp == 0))
      c.status = Status::NotSupported(r.host + ": no bash 5 there ($EPOCHREALTIME printed \"" + r.out.substr(0, 40) +
                                      "\", exit " + std::to_string(r.exit_status) +
                                      "); armed faults wait for their instant in bash 5");
    if (c.status.ok()) {
      c.offset_us = stamp - (r.start_wall_us + r.end_wall_us) / 2;
      c.uncertainty_us = (r.end_wall_us - r.start_wall_us + 1) / 2;
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string DescribeOffset(const HostClock& c) {
  char buf[160];
  const double ms = static_cast<double>(std::llabs(c.offset_us)) / 1000.0;
  std::snprintf(buf, sizeof buf, "%s: clock %.1f ms %s the runner's (±%.1f ms)", c.host.c_str(), ms,
                c.offset_us >= 0 ? "ahead of" : "behind", static_cast<double>(c.uncertainty_us) / 1000.0);
  return buf;
}

bool ClockOff(const HostClock& c) { return c.status.ok() && std::llabs(c.offset_us) - c.uncertainty_us > kClockWarnUs; }

}  // namespace rackchaos::runner
