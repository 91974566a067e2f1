#include "runner/incident/zone.h"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>

namespace rackchaos::incident {
namespace {

bool Digits(const std::string& s, size_t from, size_t n) {
  if (from + n > s.size()) return false;
  for (size_t i = from; i < from + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

int Two(const std::string& s, size_t at) { return (s[at] - '0') * 10 + (s[at + 1] - '0'); }

// "+HH", "+HH:MM", "+HHMM" (and '-'), in seconds east of UTC.
std::optional<double> FixedOffset(const std::string& s) {
  if (s.size() < 3 || (s[0] != '+' && s[0] != '-') || !Digits(s, 1, 2)) return std::nullopt;
  int minutes = 0;
  if (s.size() == 6 && s[3] == ':' && Digits(s, 4, 2)) minutes = Two(s, 4);
  else if (s.size() == 5 && Digits(s, 3, 2)) minutes = Two(s, 3);
  else if (s.size() != 3) return std::nullopt;
  int hours = Two(s, 1);
  if (hours > 14 || minutes > 59) return std::nullopt;
  return (s[0] == '-' ? -1 : 1) * (hours * 3600.0 + minutes * 60.0);
}

bool SafeZoneName(const std::string& s) {
  if (s.empty() || s.size() > 64 || s[0] == '/' || s.find("..") != std::string::npos) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '+')) return false;
  return true;
}

}  // namespace

Result<WallZone> WallZone::Parse(const std::string& text) {
  WallZone z;
  if (text == "UTC" || text == "Z" || text == "utc") return z;
  if (auto off = FixedOffset(text)) {
    z.offset_s_ = *off;
    return z;
  }
  std::error_code ec;
  if (SafeZoneName(text) && std::filesystem::is_regular_file("/usr/share/zoneinfo/" + text, ec)) {
    z.name_ = text;
    return z;
  }
  return Status::Invalid("time zone '" + text +
                                 "': expected UTC, an offset such as +02:00 or -0530, or a zone name from "
                                 "/usr/share/zoneinfo such as Europe/Berlin");
}

double WallZone::ToUtc(double naive) const {
  if (name_.empty()) return naive - offset_s_;
  // mktime() reads the zone from TZ. The importer is single-threaded and the caller's TZ is put back.
  const char* old = std::getenv("TZ");
  const std::string saved = old ? old : "";
  setenv("TZ", name_.c_str(), 1);
  tzset();
  const double whole = std::floor(naive);
  const auto t = static_cast<time_t>(whole);
  std::tm tm{};
  gmtime_r(&t, &tm);
  tm.tm_isdst = -1;
  const time_t utc = mktime(&tm);
  if (old) setenv("TZ", saved.c_str(), 1);
  else unsetenv("TZ");
  tzset();
  return static_cast<double>(utc) + (naive - whole);
}

}  // namespace rackchaos::incident
