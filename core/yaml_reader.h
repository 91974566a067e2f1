// The one YAML reader: plans, site inventories, healer policies and the rack and failure catalogues are
// all read through it (target rackchaos_yaml, the only one that includes yaml-cpp besides its users).
//
// Parse() runs the text guards (core/yaml_guard.h) and yaml-cpp, turning its exceptions into a Status.
// A Reader then walks the document: every error is one line, "FILE:LINE:COL: what is wrong; what would be
// valid", maps are checked against a table of keys (an unknown key names the valid ones and the nearest,
// a duplicate names the first), and every node visited is counted so an alias bomb cannot make a walk
// explode. Messages quote a value only through Quote() (core/strings.h) and a key only when it is a plain
// word: naming a system file as a policy never prints its lines.
//
// Nothing here throws; yaml-cpp's exceptions stop in this file. A Reader is not thread-safe.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/source_pos.h"
#include "core/status.h"
#include "core/units.h"

namespace rackchaos::yaml {

// A kind of YAML file, for messages and limits.
struct Format {
  std::string_view what;           // "plan", "site inventory", "healer policy", "rack model", ...
  int max_depth = 64;              // nesting of maps, lists and brackets the text guard allows
  int typical_depth = 5;           // what a real file needs, for that message
  size_t max_nodes = 1'000'000;    // nodes a walk may visit
};

// Parses `text` as one YAML document. Fails with kInvalidArgument, "FILE:LINE:COL: ...", on bytes that are
// not text, nesting deeper than format.max_depth, a second document, or a YAML syntax error. An empty
// document is a null node. `file` names the text in messages.
Result<YAML::Node> Parse(std::string_view text, const std::string& file, const Format& format);

// "a map", "a list", "a scalar" or "empty": how a node reads in messages.
const char* NodeKind(const YAML::Node& node);
// The value under `key` of a map node, or a null node (yaml-cpp's operator[] on a missing key yields a
// "zombie" node that throws when used, and on a non-const node inserts the key).
YAML::Node Child(const YAML::Node& map, std::string_view key);

// One entry of a map. `name` names the value in messages: the key, unless the caller sets a longer name
// ("detectors.heartbeat.missed_beats").
struct Entry {
  std::string key;
  std::string name;
  YAML::Node key_node, value;
};

class Reader {
 public:
  Reader(std::string file, const Format& format);

  const std::string& file() const { return file_; }
  // 1-based; {file, 0, 0} for a node without a mark.
  SourcePos Pos(const YAML::Node& node) const;
  // The value's position, or the key's when the value is empty (yaml-cpp marks an empty value on the
  // next line).
  SourcePos Pos(const Entry& entry) const;
  Status Error(const YAML::Node& node, const std::string& message) const { return At(Pos(node), message); }
  Status Error(const Entry& entry, const std::string& message) const { return At(Pos(entry), message); }

  // Counts a visited node; fails past format.max_nodes (alias bomb). Entries() and Items() call it.
  Status Visit(const YAML::Node& node);

  // The entries of map `node`, in file order (a null node has none). `where` names the map in messages
  // ("cluster", "faults[2]"; "" for the document itself). Fails when `node` is not a map, when a key is
  // not a scalar, appears twice, or is not one of `keys` (naming them and the nearest). With `open`, any
  // key is accepted (maps of names: hosts' vars, trays, fault params).
  Result<std::vector<Entry>> Entries(const YAML::Node& node, const std::string& where,
                                     std::span<const std::string> keys, bool open = false);
  // The first of `required` that `entries` lack, or "" when none is missing.
  static std::string Missing(const std::vector<Entry>& entries, std::span<const std::string> required);
  // The items of a list value (an empty value is an empty list). `expected` as for the values below.
  Result<std::vector<YAML::Node>> Items(const Entry& entry, std::string_view expected = "a list");

  // Single values. Each fails with "FILE:LINE:COL: NAME: PROBLEM; expected EXPECTED" (NAME is entry.name);
  // an empty `expected` uses the type's own description ("an integer from 1 to 100", "true or false").
  // Any scalar, the empty string included.
  Status Scalar(const Entry& entry, std::string& out, std::string_view expected = "a scalar value") const;
  // A non-empty scalar.
  Status String(const Entry& entry, std::string& out, std::string_view expected = "a string") const;
  // A plain integer (no fraction, exponent or sign other than '-') in [lo, hi].
  Status Int(const Entry& entry, int64_t lo, int64_t hi, int64_t& out, std::string_view expected = {}) const;
  Status Int(const Entry& entry, int lo, int hi, int& out, std::string_view expected = {}) const;
  Status Uint64(const Entry& entry, uint64_t& out, std::string_view expected = {}) const;
  // A finite decimal number.
  Status Number(const Entry& entry, double& out, std::string_view expected = "a number") const;
  // true or false (not yes/no/on/off: YAML 1.2 reads those as words).
  Status Bool(const Entry& entry, bool& out, std::string_view expected = "true or false") const;
  // A duration with units (core/units.h ParseDuration), e.g. 90s, 5m, 1h30m.
  Status Dur(const Entry& entry, Duration& out) const;
  // A fraction, 15% or 0.15 (core/units.h ParseFraction).
  Status Fraction(const Entry& entry, double& out) const;
  // A list of scalars.
  Status StringList(const Entry& entry, std::vector<std::string>& out, std::string_view expected = "a list of values");

  // "NAME: PROBLEM; expected EXPECTED" at the entry.
  Status TypeError(const Entry& entry, const std::string& problem, std::string_view expected) const;

 private:
  std::string file_;
  Format format_;
  size_t visited_ = 0;
};

// Why `text` is not an integer: "is out of range", "is not a whole number", "is not a number", ...
std::string WhyNotInteger(const std::string& text);

}  // namespace rackchaos::yaml
