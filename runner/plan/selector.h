// Target selectors over dotted component names, pick modes, and "did you mean" name suggestions.
//
// Component names come from the cluster model: `r01`, `r01.tray03`, `r01.tray03.gpu2`, `r01.switch1`,
// `r01.shelf1.psu1`, `r01.cdu`, ... A selector addresses them segment by segment:
//
//   r01.tray03.gpu2          literal
//   r*.switch3, r01.*        glob: `*` matches any run of characters inside one segment (never a dot)
//   r01.tray[01-04]          range: zero padding is significant as written ([1-4] matches tray1..tray4,
//                            [01-04] matches tray01..tray04); bounds of different widths mean "unpadded"
//   r01.tray03.gpu[0,2,3]    list; ranges and list items mix: tray[01-03,07]
//   r01.tray03.gpu2.nvlink5  a trailing `nvlink` segment selects NVLink ports (0..17) of the matched
//                            GPUs; ports are sub-targets, not components (see port_pattern())
//   kind=gpu, region=east    attribute form: stored here, resolved later by the cluster model
//
// Numbers in names are zero-padded to the widest number of their kind in the cluster: racks to at
// least two digits, three from 100 racks on (r01..r99, then r001..r120), trays to two, leaves, spines
// and NVLink domains to two (three past 99); GPUs, NICs, CPUs, switches and PSUs are not padded. A
// selector written for another width (r1, r01 on a 120-rack cluster, r001 on a 10-rack one) matches by
// number: the validator retries a selector that matched nothing with padding ignored
// (ParseSelectorIgnoringPadding), which is unambiguous because no two components differ only in padding.
//
// Everything here is a pure value; nothing touches the cluster. No function throws.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "core/status.h"
#include "core/strings.h"  // EditDistance

namespace rackchaos::runner {

// One dot-free segment pattern: literal text, `*` globs and bracketed number sets, e.g. "tray[01-04]".
class SegmentPattern {
 public:
  // Fails with kInvalidArgument naming what is wrong in `text` (the message does not quote a whole
  // selector; ParseSelector adds that).
  static Result<SegmentPattern> Parse(std::string_view text);

  bool Matches(std::string_view segment) const;
  bool IsLiteral() const;  // no `*` and no `[...]`
  const std::string& text() const { return text_; }

  struct Item {           // one entry of a [...] set
    std::string literal;  // a list entry, compared exactly ("2", "07"); empty for a range
    long lo = 0, hi = 0;  // a range lo..hi
    size_t width = 0;     // digits a range value must have; 0 = unpadded (no leading zeros)
  };
  struct Part {
    enum Kind { kLiteral, kStar, kSet } kind = kLiteral;
    std::string literal;
    std::vector<Item> items;
  };

 private:
  bool MatchFrom(size_t part, std::string_view rest) const;

  std::string text_;
  std::vector<Part> parts_;
};

class Selector {
 public:
  const std::string& text() const { return text_; }

  // Attribute form `key=value`: no segments; Matches() is always false (the cluster model resolves it).
  bool is_attribute() const { return !attribute_key_.empty(); }
  const std::string& attribute_key() const { return attribute_key_; }
  const std::string& attribute_value() const { return attribute_value_; }

  // Component segments, without the trailing port segment.
  const std::vector<SegmentPattern>& segments() const { return segments_; }
  // The trailing `nvlink...` segment, if the selector names NVLink ports.
  const std::optional<SegmentPattern>& port_pattern() const { return port_; }

  // True when `component_name` has exactly as many segments as segments() and each one matches.
  bool Matches(std::string_view component_name) const;
  // True when there is a port pattern and it matches "nvlink<port>". False without a port pattern.
  bool MatchesPort(int port) const;
  // True when every component segment is literal (no globs, ranges or lists; not an attribute), so
  // that an unmatched selector can be reported as an unknown name with NearestNames(). A port
  // segment does not count.
  bool IsLiteral() const;

 private:
  friend Result<Selector> ParseSelector(std::string_view text);

  std::string text_;
  std::string attribute_key_, attribute_value_;
  std::vector<SegmentPattern> segments_;
  std::optional<SegmentPattern> port_;
};

// Parses a selector. Fails with kInvalidArgument: "'<text>': <what is wrong>; accepted forms: ...".
Result<Selector> ParseSelector(std::string_view text);

// The accepted selector forms, for messages and docs.
const char* SelectorForms();

// `name` with the leading zeros of every number removed: "r001.tray03.gpu0" -> "r1.tray3.gpu0".
// Two component names with the same UnpaddedName name the same component.
std::string UnpaddedName(std::string_view name);

// The selector that matches UnpaddedName() of the names `text` matches whatever their padding: its
// numbers (literal, listed or range bounds) lose their leading zeros ("r01.tray[01-04]" ->
// "r1.tray[1-4]"). Match it against UnpaddedName(component_name). Attribute selectors are kept as they are.
Result<Selector> ParseSelectorIgnoringPadding(std::string_view text);

// The up to k names in `names` closest to `wanted`, closest first: names sharing more leading segments
// with `wanted` come first, then names with the same segment count, then by edit distance, then by how
// close the numbers are in the first segment that differs (for tray33, tray13 before tray03), then by
// name. Edit distances are computed only for the best prefix groups: tens of ms for 100k names.
std::vector<std::string> NearestNames(std::string_view wanted, const std::vector<std::string>& names, size_t k = 3);

// How many of the matched components a fault takes.
struct Pick {
  enum Kind { kOne, kAll, kCount, kPercent };
  Kind kind = kOne;
  double amount = 1;             // kCount: how many (a whole number >= 1); kPercent: (0, 100]; otherwise unused
  std::string ToString() const;  // "one", "all", "count:3", "25%"
};

// Parses "one", "all", "count:N", "N%" or "percent:N". Fails with kInvalidArgument listing the forms.
Result<Pick> ParsePick(std::string_view text);

// Chooses which of `matches` matched components to take, as sorted indices in [0, matches). The choice
// depends only on the pick, `matches` and the generator's state: the same seed gives the same indices.
// kPercent takes ceil(percent * matches / 100), at least one. Fails with kInvalidArgument when nothing
// matched or a count exceeds `matches`.
Result<std::vector<size_t>> ApplyPick(const Pick& pick, size_t matches, Rng& rng);

}  // namespace rackchaos::runner
