#include "runner/plan/selector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <tuple>

namespace rackchaos::runner {
namespace {

constexpr size_t kMaxSelectorLength = 256;
constexpr size_t kMaxSegments = 8;
constexpr size_t kMaxRangeDigits = 9;  // keeps range values inside a long on every platform
constexpr std::string_view kPortPrefix = "nvlink";

bool IsWordChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
}
bool AllDigits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit); }
long ToLong(std::string_view digits) {
  long v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}


// Parses one entry of a [...] set: a range "01-04" or a list entry "7".
Result<SegmentPattern::Item> ParseItem(std::string_view item) {
  SegmentPattern::Item out;
  size_t dash = item.find('-');
  if (dash == std::string_view::npos) {
    if (item.empty()) return Status::Invalid("empty entry in [...]");
    if (!std::all_of(item.begin(), item.end(), IsWordChar)) {
      return Status::Invalid("bad list entry '" + std::string(item) + "' in [...]");
    }
    out.literal = std::string(item);
    return out;
  }
  std::string_view lo = item.substr(0, dash), hi = item.substr(dash + 1);
  if (!AllDigits(lo) || !AllDigits(hi)) {
    return Status::Invalid("range '" + std::string(item) + "' must be two numbers, e.g. [01-04]");
  }
  if (lo.size() > kMaxRangeDigits || hi.size() > kMaxRangeDigits) {
    return Status::Invalid("range '" + std::string(item) + "' has numbers that are too long");
  }
  bool padded = (lo.size() > 1 && lo[0] == '0') || (hi.size() > 1 && hi[0] == '0');
  if (lo.size() != hi.size() && padded) {
    return Status::Invalid("zero-padded range '" + std::string(item) +
                           "' needs bounds of the same width, e.g. [01-12]");
  }
  out.lo = ToLong(lo);
  out.hi = ToLong(hi);
  out.width = lo.size() == hi.size() ? lo.size() : 0;
  if (out.lo > out.hi) return Status::Invalid("range '" + std::string(item) + "' is backwards");
  return out;
}

bool RangeAccepts(const SegmentPattern::Item& item, std::string_view digits) {
  if (item.width != 0 && digits.size() != item.width) return false;
  if (item.width == 0 && digits.size() > 1 && digits[0] == '0') return false;
  long v = ToLong(digits);
  return v >= item.lo && v <= item.hi;
}

std::string Quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

const char* SelectorForms() {
  return "r01.tray03.gpu2, r*.switch3, r01.tray[01-04], r01.tray03.gpu[0,2,3], "
         "r01.tray03.gpu2.nvlink[0-3], kind=gpu";
}

Result<SegmentPattern> SegmentPattern::Parse(std::string_view text) {
  if (text.empty()) return Status::Invalid("empty segment (two dots, or a dot at the start or end)");
  SegmentPattern out;
  out.text_ = std::string(text);
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '*') {
      if (out.parts_.empty() || out.parts_.back().kind != Part::kStar) out.parts_.push_back({Part::kStar, "", {}});
      ++i;
    } else if (c == '[') {
      size_t close = text.find(']', i);
      if (close == std::string_view::npos) return Status::Invalid("'[' without a closing ']'");
      Part set{Part::kSet, "", {}};
      for (std::string_view entry : Split(text.substr(i + 1, close - i - 1), ',')) {
        RC_ASSIGN_OR_RETURN(Item item, ParseItem(entry));
        set.items.push_back(std::move(item));
      }
      out.parts_.push_back(std::move(set));
      i = close + 1;
    } else if (IsWordChar(c)) {
      if (out.parts_.empty() || out.parts_.back().kind != Part::kLiteral)
        out.parts_.push_back({Part::kLiteral, "", {}});
      out.parts_.back().literal += c;
      ++i;
    } else {
      return Status::Invalid(std::string("unexpected character '") + c + "' in segment " + Quoted(text));
    }
  }
  return out;
}

bool SegmentPattern::IsLiteral() const {
  return std::all_of(parts_.begin(), parts_.end(), [](const Part& p) { return p.kind == Part::kLiteral; });
}

bool SegmentPattern::Matches(std::string_view segment) const { return MatchFrom(0, segment); }

// Backtracking over parts; segments are a few characters long, so this stays cheap.
bool SegmentPattern::MatchFrom(size_t index, std::string_view rest) const {
  if (index == parts_.size()) return rest.empty();
  const Part& part = parts_[index];
  switch (part.kind) {
    case Part::kLiteral:
      return rest.substr(0, part.literal.size()) == part.literal &&
             MatchFrom(index + 1, rest.substr(part.literal.size()));
    case Part::kStar:
      for (size_t n = 0; n <= rest.size(); ++n) {
        if (MatchFrom(index + 1, rest.substr(n))) return true;
      }
      return false;
    case Part::kSet: {
      size_t run = 0;
      while (run < rest.size() && run < kMaxRangeDigits && IsDigit(rest[run])) ++run;
      for (const Item& item : part.items) {
        if (!item.literal.empty()) {
          if (rest.substr(0, item.literal.size()) == item.literal &&
              MatchFrom(index + 1, rest.substr(item.literal.size())))
            return true;
          continue;
        }
        for (size_t n = 1; n <= run; ++n) {
          if (RangeAccepts(item, rest.substr(0, n)) && MatchFrom(index + 1, rest.substr(n))) return true;
        }
      }
      return false;
    }
  }
  return false;
}

Result<Selector> ParseSelector(std::string_view text) {
  auto fail = [&](const std::string& what) {
    return Status::Invalid(Quoted(text) + ": " + what + "; accepted forms: " + SelectorForms());
  };
  if (text.empty()) return fail("empty selector");
  if (text.size() > kMaxSelectorLength) return Status::Invalid("selector is longer than 256 characters");
  Selector out;
  out.text_ = std::string(text);
  if (size_t eq = text.find('='); eq != std::string_view::npos) {
    std::string_view key = text.substr(0, eq), value = text.substr(eq + 1);
    bool key_ok = !key.empty() && !IsDigit(key[0]) && std::all_of(key.begin(), key.end(), IsWordChar);
    bool value_ok = !value.empty() && std::all_of(value.begin(), value.end(),
                                                  [](char c) { return IsWordChar(c) || c == '.' || c == '*'; });
    if (!key_ok || !value_ok) return fail("an attribute selector is key=value with a word on each side");
    out.attribute_key_ = std::string(key);
    out.attribute_value_ = std::string(value);
    return out;
  }
  std::vector<std::string_view> parts = Split(text, '.');
  if (parts.size() > kMaxSegments) return fail("more than 8 segments");
  for (size_t i = 0; i < parts.size(); ++i) {
    auto segment = SegmentPattern::Parse(parts[i]);
    if (!segment.ok()) return fail(segment.status().message());
    bool is_port = parts[i].substr(0, kPortPrefix.size()) == kPortPrefix;
    if (is_port && i + 1 != parts.size()) return fail("an nvlink port segment must come last");
    if (is_port && i == 0) return fail("an nvlink port needs a GPU before it, e.g. r01.tray03.gpu2.nvlink5");
    if (is_port)
      out.port_ = std::move(segment).value();
    else
      out.segments_.push_back(std::move(segment).value());
  }
  return out;
}

bool Selector::Matches(std::string_view name) const {
  if (is_attribute()) return false;
  size_t index = 0, start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i != name.size() && name[i] != '.') continue;
    if (index == segments_.size() || !segments_[index].Matches(name.substr(start, i - start))) return false;
    ++index;
    start = i + 1;
  }
  return index == segments_.size();
}

std::string UnpaddedName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    if (!IsDigit(name[i])) {
      out += name[i++];
      continue;
    }
    size_t end = i;
    while (end < name.size() && IsDigit(name[end])) ++end;
    while (i + 1 < end && name[i] == '0') ++i;  // keep one digit of "000"
    out.append(name.substr(i, end - i));
    i = end;
  }
  return out;
}

Result<Selector> ParseSelectorIgnoringPadding(std::string_view text) {
  if (text.find('=') != std::string_view::npos) return ParseSelector(text);
  return ParseSelector(UnpaddedName(text));
}

bool Selector::MatchesPort(int port) const {
  return port_.has_value() && port >= 0 && port_->Matches(std::string(kPortPrefix) + std::to_string(port));
}

bool Selector::IsLiteral() const {
  return !is_attribute() &&
         std::all_of(segments_.begin(), segments_.end(), [](const SegmentPattern& s) { return s.IsLiteral(); });
}


namespace {

struct Candidate {
  size_t common_segments;  // leading segments equal to the wanted name's
  bool same_depth;         // same number of segments
  size_t distance;
  long number_gap;  // see NumberGap
  size_t index;
};

size_t CountSegments(std::string_view s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '.')) + 1; }

size_t CommonSegments(std::string_view a, std::string_view b) {
  size_t common = 0, i = 0;
  for (; i < a.size() && i < b.size() && a[i] == b[i]; ++i) {
    if (a[i] == '.') ++common;
  }
  bool segment_ends = (i == a.size() || a[i] == '.') && (i == b.size() || b[i] == '.');
  return common + (segment_ends && i > 0 ? 1 : 0);
}

// The i-th dot-separated segment of `s`, or "" when it has fewer.
std::string_view SegmentAt(std::string_view s, size_t i) {
  for (; i > 0; --i) {
    size_t dot = s.find('.');
    if (dot == std::string_view::npos) return {};
    s.remove_prefix(dot + 1);
  }
  return s.substr(0, s.find('.'));
}

// The number at the end of a segment ("tray33" -> 33), or -1.
long TrailingNumber(std::string_view s) {
  size_t start = s.size();
  while (start > 0 && s.size() - start < kMaxRangeDigits && IsDigit(s[start - 1])) --start;
  return start == s.size() ? -1 : ToLong(s.substr(start));
}

// How far apart the numbers are in the first segment where the names differ: for "r01.tray33",
// "r01.tray13" is nearer than "r01.tray03". LONG_MAX when either segment has no number.
long NumberGap(std::string_view wanted, std::string_view name, size_t common) {
  long a = TrailingNumber(SegmentAt(wanted, common)), b = TrailingNumber(SegmentAt(name, common));
  return (a < 0 || b < 0) ? std::numeric_limits<long>::max() : std::labs(a - b);
}

bool Closer(const Candidate& a, const Candidate& b, const std::vector<std::string>& names) {
  if (a.common_segments != b.common_segments) return a.common_segments > b.common_segments;
  if (a.same_depth != b.same_depth) return a.same_depth;
  if (a.distance != b.distance) return a.distance < b.distance;
  if (a.number_gap != b.number_gap) return a.number_gap < b.number_gap;
  return names[a.index] < names[b.index];
}

}  // namespace

std::vector<std::string> NearestNames(std::string_view wanted, const std::vector<std::string>& names, size_t k) {
  const size_t depth = CountSegments(wanted);
  std::vector<Candidate> candidates;
  candidates.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != wanted)
      candidates.push_back({CommonSegments(wanted, names[i]), CountSegments(names[i]) == depth, 0, 0, i});
  }
  // Group by shared prefix and depth, best group first; edit distances are only needed for the groups
  // that can supply the k answers (usually one rack's or one tray's names, not all of them).
  auto group_before = [](const Candidate& a, const Candidate& b) {
    return std::tie(a.common_segments, a.same_depth) > std::tie(b.common_segments, b.same_depth);
  };
  std::stable_sort(candidates.begin(), candidates.end(), group_before);
  size_t scored = 0;
  while (scored < candidates.size() && scored < k) {
    const Candidate first = candidates[scored];
    for (; scored < candidates.size() && !group_before(first, candidates[scored]); ++scored) {
      Candidate& c = candidates[scored];
      c.distance = EditDistance(wanted, names[c.index]);
      c.number_gap = NumberGap(wanted, names[c.index], c.common_segments);
    }
  }
  candidates.resize(scored);
  k = std::min(k, candidates.size());
  auto closer = [&](const Candidate& a, const Candidate& b) { return Closer(a, b, names); };
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k), candidates.end(), closer);
  std::vector<std::string> out;
  for (size_t i = 0; i < k; ++i) out.push_back(names[candidates[i].index]);
  return out;
}

std::string Pick::ToString() const {
  char buf[48];
  switch (kind) {
    case kOne:
      return "one";
    case kAll:
      return "all";
    case kCount:
      std::snprintf(buf, sizeof buf, "count:%.0f", amount);
      return buf;
    case kPercent:
      std::snprintf(buf, sizeof buf, "%g%%", amount);
      return buf;
  }
  return "one";
}

Result<Pick> ParsePick(std::string_view text) {
  auto fail = [&](const std::string& what) {
    return Status::Invalid(Quoted(text) + " " + what +
                           "; accepted: one, all, count:N (N >= 1), N% or percent:N (0 < N <= 100)");
  };
  if (text == "one") return Pick{Pick::kOne, 1};
  if (text == "all") return Pick{Pick::kAll, 1};
  std::string number;
  Pick::Kind kind = Pick::kCount;
  if (text.substr(0, 6) == "count:") {
    number = std::string(text.substr(6));
  } else if (text.substr(0, 8) == "percent:") {
    number = std::string(text.substr(8));
    kind = Pick::kPercent;
  } else if (!text.empty() && text.back() == '%') {
    number = std::string(text.substr(0, text.size() - 1));
    kind = Pick::kPercent;
  } else {
    return fail("is not a pick mode");
  }
  if (number.empty() || !std::all_of(number.begin(), number.end(), [](char c) { return IsDigit(c) || c == '.'; })) {
    return fail("needs a number");
  }
  double amount = std::strtod(number.c_str(), nullptr);
  if (kind == Pick::kCount && (amount < 1 || amount > 1e9 || amount != std::floor(amount))) {
    return fail("needs a whole count from 1 to 1000000000");
  }
  if (kind == Pick::kPercent && !(amount > 0 && amount <= 100))
    return fail("needs a percentage above 0 and at most 100");
  return Pick{kind, amount};
}

Result<std::vector<size_t>> ApplyPick(const Pick& pick, size_t matches, Rng& rng) {
  if (matches == 0) return Status::Invalid("the target matched no components; a fault needs at least one");
  size_t take = 1;
  switch (pick.kind) {
    case Pick::kOne:
      take = 1;
      break;
    case Pick::kAll:
      take = matches;
      break;
    case Pick::kCount:
      take = static_cast<size_t>(pick.amount);
      break;
    case Pick::kPercent:
      take = static_cast<size_t>(std::ceil(pick.amount * static_cast<double>(matches) / 100.0 - 1e-9));
      take = std::clamp<size_t>(take, 1, matches);
      break;
  }
  if (take > matches) {
    return Status::Invalid("pick " + pick.ToString() + " needs " + std::to_string(take) +
                           " components but the target matched " + std::to_string(matches) +
                           "; use a smaller count or pick: all");
  }
  // A partial Fisher-Yates shuffle: `take` draws, none when every match is taken.
  std::vector<size_t> order(matches);
  std::iota(order.begin(), order.end(), size_t{0});
  for (size_t i = 0; i < take && take < matches; ++i) {
    size_t j = i + static_cast<size_t>(rng.Below(matches - i));
    std::swap(order[i], order[j]);
  }
  order.resize(take);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace rackchaos::runner
