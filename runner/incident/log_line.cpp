#include "runner/incident/log_line.h"

#include <charconv>
#include <cstdint>

#include "core/strings.h"

namespace rackchaos::incident {
namespace {

using std::string_view;



string_view NextToken(string_view& s) {
  s = TrimLeft(s);
  size_t n = 0;
  while (n < s.size() && !IsSpace(s[n])) ++n;
  string_view t = s.substr(0, n);
  s.remove_prefix(n);
  return t;
}

// Exactly `n` digits from the front of `s`.
std::optional<int> Digits(string_view& s, size_t n) {
  if (s.size() < n) return std::nullopt;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!IsDigit(s[i])) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  s.remove_prefix(n);
  return v;
}

bool Take(string_view& s, char c) {
  if (s.empty() || s[0] != c) return false;
  s.remove_prefix(1);
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Civil {
  int64_t y;
  unsigned m, d;
};
Civil CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

bool ValidDate(int y, int m, int d) {
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1970 || y > 9999 || m < 1 || m > 12 || d < 1 || d > kDays[m - 1]) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m != 2 || d <= 28 || leap;
}

// "HH:MM:SS[.frac]" -> seconds of the day.
std::optional<double> TimeOfDay(string_view& s) {
  auto h = Digits(s, 2);
  if (!h || !Take(s, ':')) return std::nullopt;
  auto mi = Digits(s, 2);
  if (!mi || !Take(s, ':')) return std::nullopt;
  auto se = Digits(s, 2);
  if (!se || *h > 23 || *mi > 59 || *se > 60) return std::nullopt;
  double frac = 0, scale = 0.1;
  if (Take(s, '.') || Take(s, ',')) {
    size_t n = 0;
    for (; n < s.size() && IsDigit(s[n]) && n < 9; ++n, scale /= 10) frac += (s[n] - '0') * scale;
    while (n < s.size() && IsDigit(s[n])) ++n;
    s.remove_prefix(n);
  }
  return *h * 3600.0 + *mi * 60.0 + *se + frac;
}

int MonthIndex(string_view t) {
  static constexpr string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (t == kMonths[i]) return i + 1;
  }
  return 0;
}

std::optional<double> Compose(int y, int m, int d, double tod) {
  if (!ValidDate(y, m, d)) return std::nullopt;
  return static_cast<double>(DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d))) * 86400.0 + tod;
}

std::optional<int> SmallInt(string_view t) {
  int v = 0;
  if (t.empty() || t.size() > 4) return std::nullopt;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<double> ParseUptime(string_view t) {
  t = Trim(t);
  if (t.empty() || t.size() > 24 || !IsDigit(t[0])) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

// "host tag[pid]: body" after a wall-clock time. Without a "tag:" the host is not trusted.
void TakeHostAndTag(string_view rest, SplitLine& out) {
  string_view probe = rest;
  string_view host = NextToken(probe);
  string_view tag = NextToken(probe);
  if (host.empty() || tag.empty() || tag.back() != ':') {
    out.body = Trim(rest);
    return;
  }
  tag.remove_suffix(1);
  if (size_t b = tag.find('['); b != string_view::npos) tag = tag.substr(0, b);
  out.host = host;
  out.tag = tag;
  out.body = Trim(probe);
  // syslog of kernel messages keeps dmesg's "[ uptime]"; the wall time already says when.
  if (!out.body.empty() && out.body[0] == '[') {
    size_t close = out.body.find(']');
    if (close != string_view::npos && close < 32 && ParseUptime(out.body.substr(1, close - 1)))
      out.body = Trim(out.body.substr(close + 1));
  }
}

}  // namespace

std::optional<double> ParseIsoTime(string_view s, bool* zoned) {
  s = Trim(s);
  auto y = Digits(s, 4);
  if (!y || !Take(s, '-')) return std::nullopt;
  auto m = Digits(s, 2);
  if (!m || !Take(s, '-')) return std::nullopt;
  auto d = Digits(s, 2);
  if (!d || !(Take(s, 'T') || Take(s, ' '))) return std::nullopt;
  auto tod = TimeOfDay(s);
  if (!tod) return std::nullopt;
  double offset = 0;
  bool has_zone = true;
  if (Take(s, 'Z') || Take(s, 'z')) {
  } else if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    int sign = s[0] == '-' ? -1 : 1;
    s.remove_prefix(1);
    auto oh = Digits(s, 2);
    Take(s, ':');
    auto om = Digits(s, 2);
    if (!oh || !om || *oh > 23 || *om > 59) return std::nullopt;
    offset = sign * (*oh * 3600.0 + *om * 60.0);
  } else {
    has_zone = false;
  }
  if (!s.empty()) return std::nullopt;
  auto t = Compose(*y, *m, *d, *tod);
  if (!t) return std::nullopt;
  if (zoned) *zoned = has_zone;
  return *t - offset;
}

std::optional<LogTime> ParseIsoLogTime(string_view text) {
  bool zoned = false;
  auto t = ParseIsoTime(text, &zoned);
  if (!t) return std::nullopt;
  return LogTime{TimeAxis::kWall, *t, false, zoned};
}

std::optional<double> ParseCtimeTime(string_view s) {
  string_view weekday = NextToken(s);
  int m = MonthIndex(NextToken(s));
  auto d = SmallInt(NextToken(s));
  string_view hms = NextToken(s);
  auto y = SmallInt(NextToken(s));
  if (weekday.size() != 3 || !m || !d || !y || !Trim(s).empty()) return std::nullopt;
  auto tod = TimeOfDay(hms);
  if (!tod || !hms.empty()) return std::nullopt;
  return Compose(*y, m, *d, *tod);
}

std::optional<double> ParseShortTime(string_view s) {
  int m = MonthIndex(NextToken(s));
  auto d = SmallInt(NextToken(s));
  string_view hms = NextToken(s);
  if (!m || !d || !Trim(s).empty()) return std::nullopt;
  auto tod = TimeOfDay(hms);
  if (!tod || !hms.empty()) return std::nullopt;
  return Compose(1972, m, *d, *tod);
}

double FixGuessedYear(double seconds_in_1972, int year) {
  auto days = static_cast<int64_t>(seconds_in_1972 / 86400.0);
  double tod = seconds_in_1972 - static_cast<double>(days) * 86400.0;
  Civil c = CivilFromDays(days);
  unsigned d = c.d;
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (c.m == 2 && d == 29 && !leap) d = 28;  // a Feb 29 stamp in a year without one: keep it in February
  return static_cast<double>(DaysFromCivil(year, c.m, d)) * 86400.0 + tod;
}

int YearOf(double unix_seconds) {
  return static_cast<int>(CivilFromDays(static_cast<int64_t>(unix_seconds / 86400.0)).y);
}

namespace {

// journalctl -o short-full: "Mon 2026-11-30 06:02:21[.123456] UTC host tag: body". The zone word is
// read when it is UTC/GMT/Z or a numeric offset; other abbreviations (CET, PST) are ambiguous and the
// time is taken in --tz like the other zone-less stamps.
bool TakeShortFull(string_view s, SplitLine& out) {
  string_view rest = s;
  string_view weekday = NextToken(rest);
  string_view date = NextToken(rest);
  string_view hms = NextToken(rest);
  string_view zone = NextToken(rest);
  if (weekday.size() != 3 || date.size() != 10 || hms.size() < 8 || zone.empty()) return false;
  std::string iso = std::string(date) + "T" + std::string(hms);
  bool zoned = false;
  if (zone == "UTC" || zone == "GMT" || zone == "Z") {
    iso += "Z";
  } else if (zone[0] == '+' || zone[0] == '-') {
    iso += std::string(zone);
  }
  auto t = ParseIsoTime(iso, &zoned);
  if (!t) return false;
  out.time = {TimeAxis::kWall, *t, false, zoned};
  TakeHostAndTag(rest, out);
  return true;
}

// journalctl -o short-unix: "1795989741.123456 host tag: body" (seconds since the epoch, UTC).
bool TakeShortUnix(string_view s, SplitLine& out) {
  string_view rest = s;
  string_view first = NextToken(rest);
  size_t dot = first.find('.');
  if (dot < 9 || dot > 11 || first.find_first_not_of("0123456789.") != string_view::npos) return false;
  auto t = ParseUptime(first);
  if (!t) return false;
  SplitLine probe;
  TakeHostAndTag(rest, probe);
  if (probe.host.empty()) return false;  // a bare number is not a stamp without "host tag:" after it
  out = probe;
  out.time = {TimeAxis::kWall, *t, false, true};
  return true;
}

}  // namespace

std::optional<LogTime> ParseGlogTime(string_view s) {
  // "E1206 18:44:12.715298746": severity letter, month and day, time of day (no year, local time).
  if (s.size() < 14 || (s[0] != 'E' && s[0] != 'W' && s[0] != 'I' && s[0] != 'F')) return std::nullopt;
  s.remove_prefix(1);
  size_t space = s.find(' ');
  if (space == string_view::npos || space < 3 || space > 4) return std::nullopt;
  int mmdd = 0;
  for (size_t i = 0; i < space; ++i) {
    if (!IsDigit(s[i])) return std::nullopt;
    mmdd = mmdd * 10 + (s[i] - '0');
  }
  string_view hms = s.substr(space + 1);
  auto tod = TimeOfDay(hms);
  if (!tod) return std::nullopt;
  auto t = Compose(1972, mmdd / 100, mmdd % 100, *tod);
  if (!t) return std::nullopt;
  return LogTime{TimeAxis::kWall, *t, true, false};
}

// dmesg -x (--decode) puts "FACILITY:LEVEL : " before the stamp ("kern  :err   : [ 1234.5] ...").
string_view SkipDecodePrefix(string_view s) {
  size_t colon = s.substr(0, 9).find(':');
  if (colon == string_view::npos || colon == 0 || colon > 8) return s;
  for (size_t i = 0; i < colon; ++i) {
    if (!(s[i] >= 'a' && s[i] <= 'z') && s[i] != ' ') return s;
  }
  size_t end = s.find(": ", colon + 1);
  if (end == string_view::npos || end > colon + 10) return s;
  for (size_t i = colon + 1; i < end; ++i) {
    if (!(s[i] >= 'a' && s[i] <= 'z') && s[i] != ' ') return s;
  }
  return Trim(s.substr(end + 2));
}

SplitLine SplitLogLine(string_view line) {
  SplitLine out;
  string_view s = SkipDecodePrefix(Trim(line));
  out.body = s;
  if (s.empty()) return out;
  if (s[0] == '[') {
    size_t close = s.find(']');
    if (close == string_view::npos || close > 64) return out;
    string_view inside = Trim(s.substr(1, close - 1));
    string_view rest = Trim(s.substr(close + 1));
    if (auto up = ParseUptime(inside)) {
      out.time = {TimeAxis::kRelative, *up, false};
      // journalctl -o short-monotonic: "[ 1234.567890] host kernel: body". Only the "kernel" tag is
      // taken as the sign of a host: dmesg bodies look alike ("usb 1-1: new device").
      SplitLine probe;
      TakeHostAndTag(rest, probe);
      if (probe.tag == "kernel") {
        out.host = probe.host;
        out.tag = probe.tag;
        out.body = probe.body;
        return out;
      }
    } else if (auto ct = ParseCtimeTime(inside)) {
      out.time = {TimeAxis::kWall, *ct, false};
    } else if (auto iso = ParseIsoLogTime(inside)) {
      out.time = *iso;
    } else {
      return out;
    }
    out.body = rest;
    return out;
  }
  string_view rest = s;
  string_view first = NextToken(rest);
  // "2026-11-30T06:02:21.123Z: body" is Open MPI's --timestamp-output: a stamp, then the rank's output.
  bool mpi_stamp = first.size() > 20 && first.back() == ':' && IsDigit(first[0]);
  if (mpi_stamp) first.remove_suffix(1);
  if (auto iso = ParseIsoLogTime(first)) {
    out.time = *iso;
    // dmesg --time-format=iso writes a comma before the fraction and no host; journald and syslog a dot.
    if (mpi_stamp || first.find(',') != string_view::npos) {
      out.body = Trim(rest);
      return out;
    }
    TakeHostAndTag(rest, out);
    return out;
  }
  if (IsDigit(first[0]) && TakeShortUnix(s, out)) return out;
  if (first.size() == 3 && !MonthIndex(first) && TakeShortFull(s, out)) return out;
  if (!MonthIndex(first) || s.size() < 15) return out;
  if (auto st = ParseShortTime(s.substr(0, 15))) {  // "Nov 30 06:02:21" (day space-padded: "Nov  3")
    size_t end = 15;
    double frac = 0, scale = 0.1;
    if (end < s.size() && s[end] == '.') {  // journalctl -o short-precise: "Nov 30 06:02:21.123456"
      for (++end; end < s.size() && IsDigit(s[end]); ++end, scale /= 10) frac += (s[end] - '0') * scale;
    }
    out.time = {TimeAxis::kWall, *st + frac, true};
    TakeHostAndTag(s.substr(end), out);
  }
  return out;
}

}  // namespace rackchaos::incident
