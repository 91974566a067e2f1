#include "healer/xid.h"

#include <charconv>
#include <cstddef>
#include <system_error>

#include "core/strings.h"

namespace rackchaos::healer {
namespace {

using std::string_view;
constexpr size_t kNpos = string_view::npos;

// Bounds that keep every failed match attempt O(1): a PCI address is at most "00000000:00:00.0".
constexpr size_t kMaxPciChars = 24;
constexpr size_t kMaxCodeDigits = 6;


// Consumes a run of 1..max_digits digits in `base` from the front of `s`. No sign, no overflow.
std::optional<int> TakeNumber(string_view& s, size_t max_digits, int base = 10) {
  size_t n = 0;
  while (n < s.size() && (base == 16 ? IsHexDigit(s[n]) : IsDigit(s[n]))) ++n;
  if (n == 0 || n > max_digits) return std::nullopt;
  int value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + n, value, base);
  if (ec != std::errc() || ptr != s.data() + n) return std::nullopt;
  s.remove_prefix(n);
  return value;
}

// "0x1f" or "31".
std::optional<int> TakeHexOrDecimal(string_view& s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    string_view digits = s.substr(2);
    auto value = TakeNumber(digits, 7, 16);
    if (value) s = digits;
    return value;
  }
  return TakeNumber(s, 9);
}

// Lower-cases a hex group and left-pads it with zeros to `width`; nullopt if not 1..max_len hex.
std::optional<std::string> HexGroup(string_view g, size_t width, size_t max_len) {
  if (g.empty() || g.size() > max_len) return std::nullopt;
  std::string out;
  for (char c : g) {
    if (!IsHexDigit(c)) return std::nullopt;
    out += AsciiLower(c);
  }
  if (out.size() < width) out.insert(0, width - out.size(), '0');
  return out;
}

// "0000:3B:00" -> "0000:3b:00"; "3b:00" -> "0000:3b:00"; "00000008:01:00" -> "0008:01:00".
// The function (".0") is kept only when `keep_function`.
std::optional<std::string> NormalizePci(string_view s, bool keep_function) {
  string_view function;
  if (size_t dot = s.find('.'); dot != kNpos) {
    function = s.substr(dot + 1);
    s = s.substr(0, dot);
    if (function.empty() || function.size() > 2) return std::nullopt;
  }
  string_view domain = "0";
  size_t last = s.rfind(':');
  if (last == kNpos) return std::nullopt;
  string_view device = s.substr(last + 1);
  string_view head = s.substr(0, last);
  if (size_t first = head.rfind(':'); first != kNpos) {
    domain = head.substr(0, first);
    head = head.substr(first + 1);
  }
  while (domain.size() > 4 && domain.front() == '0') domain.remove_prefix(1);
  auto d = HexGroup(domain, 4, 8);
  auto b = HexGroup(head, 2, 2);
  auto v = HexGroup(device, 2, 2);
  if (!d || !b || !v) return std::nullopt;
  std::string out = *d + ":" + *b + ":" + *v;
  if (!function.empty()) {
    auto f = HexGroup(function, 1, 2);
    if (!f) return std::nullopt;
    if (keep_function) out += "." + *f;
  }
  return out;
}

// The fixed part of a line: "[S]Xid (PCI:addr): CODE" and where the driver's text starts.
struct Header {
  bool sxid = false;
  size_t start = 0;         // index of "Xid"/"SXid"
  size_t kernel_start = 0;  // index of "NVRM:" or the NVSwitch device name, else `start`
  std::string pci;
  int code = 0;
  string_view rest;  // after the code: "" or ", ..." or " ..."
};

bool PrecededByNvrm(string_view line, size_t start, size_t* nvrm_at) {
  string_view before = line.substr(0, start);
  for (string_view tag : {string_view("NVRM: "), string_view("NVRM:")}) {
    if (before.ends_with(tag)) {
      *nvrm_at = start - tag.size();
      return true;
    }
  }
  return false;
}

// Tries the match whose "Xid (" is at `at`. Costs O(1) whatever the line length.
std::optional<Header> ParseHeaderAt(string_view line, size_t at) {
  Header h;
  h.sxid = at > 0 && line[at - 1] == 'S';
  h.start = h.sxid ? at - 1 : at;
  h.kernel_start = h.start;
  if (h.start > 0) {
    char c = line[h.start - 1];
    if (!IsSpace(c) && c != ':' && c != ']') return std::nullopt;  // "fooXid (" is not ours
  }
  size_t nvrm_at = 0;
  bool nvrm = !h.sxid && PrecededByNvrm(line, h.start, &nvrm_at);
  if (nvrm) h.kernel_start = nvrm_at;

  string_view s = line.substr(at + 5);  // after "Xid ("
  if (s.starts_with("PCI:")) {
    s.remove_prefix(4);
  } else if (!nvrm) {
    return std::nullopt;  // the legacy "Xid (0000:03:00)" form only counts behind "NVRM: "
  }
  size_t close = s.substr(0, kMaxPciChars + 1).find(')');
  if (close == kNpos) return std::nullopt;
  auto pci = NormalizePci(s.substr(0, close), h.sxid);
  if (!pci) return std::nullopt;
  h.pci = std::move(*pci);
  s.remove_prefix(close + 1);
  if (s.empty() || s[0] != ':') return std::nullopt;
  s.remove_prefix(1);
  while (!s.empty() && s[0] == ' ') s.remove_prefix(1);
  auto code = TakeNumber(s, kMaxCodeDigits);
  if (!code) return std::nullopt;
  if (!s.empty() && s[0] != ',' && !IsSpace(s[0])) return std::nullopt;  // "79abc"
  h.code = *code;
  h.rest = s;
  return h;
}

// SXid lines name their device before the tag: "nvidia-nvswitch3: SXid (...)". Returns the name and
// moves `kernel_start` to it. Called once per line, so its O(n) back-scan keeps the parse linear.
string_view TakeNvswitchName(string_view line, Header& h) {
  size_t j = h.start;
  while (j > 0 && line[j - 1] == ' ') --j;
  if (j == 0 || line[j - 1] != ':') return {};
  size_t end = j - 1;
  size_t k = end;
  while (k > 0 && !IsSpace(line[k - 1]) && line[k - 1] != ']') --k;
  if (k == end) return {};
  h.kernel_start = k;
  return line.substr(k, end - k);
}

std::optional<Header> FindHeader(string_view line) {
  for (size_t at = line.find("Xid ("); at != kNpos; at = line.find("Xid (", at + 1)) {
    if (auto h = ParseHeaderAt(line, at)) return h;
  }
  return std::nullopt;
}

string_view NextToken(string_view& s) {
  s = TrimLeft(s);
  size_t n = 0;
  while (n < s.size() && !IsSpace(s[n])) ++n;
  string_view token = s.substr(0, n);
  s.remove_prefix(n);
  return token;
}

bool IsMonth(string_view t) {
  static constexpr string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (string_view m : kMonths) {
    if (t == m) return true;
  }
  return false;
}

bool IsIsoDate(string_view t) {
  return t.size() >= 10 && IsDigit(t[0]) && IsDigit(t[1]) && IsDigit(t[2]) && IsDigit(t[3]) && t[4] == '-' &&
         IsDigit(t[5]) && IsDigit(t[6]) && t[7] == '-';
}

// The host follows the time in journal/syslog prefixes; "kernel:" would be the tag, not a host.
void TakeHost(string_view rest, XidEvent& e) {
  string_view host = NextToken(rest);
  if (!host.empty() && host.back() != ':') e.host = std::string(host);
}

// Reads the time (and host) from what precedes the driver's text. Unknown prefixes leave both unset.
void ParsePrefix(string_view prefix, XidEvent& e) {
  prefix = Trim(prefix);
  if (prefix.empty()) return;
  if (prefix[0] == '[') {  // dmesg "[ 1234.567890]" or dmesg -T "[Mon Nov 30 06:02:21 2026]"
    size_t close = prefix.find(']');
    if (close == kNpos) return;
    string_view ts = Trim(prefix.substr(1, close - 1));
    if (!ts.empty()) e.timestamp = std::string(ts);
    return;
  }
  string_view rest = prefix;
  string_view first = NextToken(rest);
  if (IsIsoDate(first)) {  // syslog "2026-11-30T06:02:21.123456+00:00 host kernel: [ 1234.5]"
    e.timestamp = std::string(first);
    TakeHost(rest, e);
    return;
  }
  if (!IsMonth(first)) return;
  string_view day = NextToken(rest);  // journalctl "Nov 30 06:02:21 host kernel:"
  string_view time = NextToken(rest);
  if (day.empty() || !IsDigit(day[0]) || time.find(':') == kNpos) return;
  auto end = static_cast<size_t>(time.data() + time.size() - prefix.data());
  e.timestamp = std::string(prefix.substr(0, end));
  TakeHost(rest, e);
}

// "pid=1234" / "pid='<unknown>'": the number, or nullopt.
std::optional<int> ParsePid(string_view value) {
  value = Trim(value);
  auto pid = TakeNumber(value, 10);
  return value.empty() ? pid : std::nullopt;
}

// Cuts the text up to the next ',' off the front of `s` and returns it.
string_view TakeField(string_view& s) {
  size_t comma = s.find(',');
  string_view field = s.substr(0, comma);
  s = comma == kNpos ? string_view() : TrimLeft(s.substr(comma + 1));
  return field;
}

string_view SkipSeparator(string_view rest) {
  rest = TrimLeft(rest);
  if (!rest.empty() && rest[0] == ',') rest.remove_prefix(1);
  return TrimLeft(rest);
}

// XID: optional "pid=..., name=...," then the free text.
void ParseOwnerAndMessage(string_view rest, XidEvent& e) {
  rest = SkipSeparator(rest);
  for (int field = 0; field < 2; ++field) {
    if (rest.starts_with("pid=")) {
      rest.remove_prefix(4);
      e.pid = ParsePid(TakeField(rest));
    } else if (rest.starts_with("name=")) {
      rest.remove_prefix(5);
      string_view name = Trim(TakeField(rest));
      if (name != "<unknown>") e.process_name = std::string(name);
    } else {
      break;
    }
  }
  e.message = std::string(TrimRight(rest));
}

SxidSeverity ParseSeverity(string_view word) {
  if (EqualsIgnoreCase(word, "Fatal")) return SxidSeverity::kFatal;
  for (string_view nf : {"Non-fatal", "Nonfatal", "Non fatal"}) {
    if (EqualsIgnoreCase(word, nf)) return SxidSeverity::kNonFatal;
  }
  return SxidSeverity::kUnspecified;
}

// SXid: optional "Fatal," / "Non-fatal," then the free text.
void ParseSeverityAndMessage(string_view rest, XidEvent& e) {
  rest = SkipSeparator(rest);
  string_view after = rest;
  e.severity = ParseSeverity(Trim(TakeField(after)));
  if (e.severity != SxidSeverity::kUnspecified) rest = after;
  rest = TrimRight(rest);
  e.sxid_detail = rest.starts_with("Severity ") || rest.starts_with("Data {");
  e.message = std::string(rest);
}

// First "link N" / "Link N" / "link14(" as a whole word ("NVLink" does not count).
std::optional<int> FindLink(string_view msg) {
  for (size_t i = msg.find("ink"); i != kNpos; i = msg.find("ink", i + 1)) {
    if (i == 0 || AsciiLower(msg[i - 1]) != 'l') continue;
    if (i >= 2 && IsAlnum(msg[i - 2])) continue;
    string_view s = msg.substr(i + 3);
    for (int spaces = 0; spaces < 3 && !s.empty() && s[0] == ' '; ++spaces) s.remove_prefix(1);
    if (auto link = TakeNumber(s, 4)) return link;
  }
  return std::nullopt;
}

// XID 154: "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)" -> 1.
std::optional<int> FindRecoveryAction(string_view msg) {
  size_t from = msg.find("changed from ");
  if (from == kNpos) return std::nullopt;
  size_t to = msg.find(" to ", from);
  if (to == kNpos) return std::nullopt;
  string_view s = TrimLeft(msg.substr(to + 4));
  return TakeHexOrDecimal(s);
}

}  // namespace

std::optional<XidEvent> ParseXidLine(std::string_view line) {
  auto header = FindHeader(line);
  if (!header) return std::nullopt;
  XidEvent e;
  e.is_sxid = header->sxid;
  e.code = header->code;
  e.pci = std::move(header->pci);
  if (e.is_sxid) e.nvswitch = std::string(TakeNvswitchName(line, *header));
  ParsePrefix(line.substr(0, header->kernel_start), e);
  if (e.is_sxid) {
    ParseSeverityAndMessage(header->rest, e);
    e.action = RecommendedSxidAction(e.severity, e.sxid_detail);
  } else {
    ParseOwnerAndMessage(header->rest, e);
    if (e.code == 154) e.recovery_action = FindRecoveryAction(e.message);
    e.action = RecommendedAction(e.code, e.recovery_action);
  }
  e.link = FindLink(e.message);
  return e;
}

}  // namespace rackchaos::healer
