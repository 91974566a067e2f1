#include "core/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/strings.h"
#include "core/yaml_guard.h"

namespace rackchaos::yaml {
namespace {

std::string KeyList(std::span<const std::string> keys) { return keys.empty() ? "(any)" : Join(keys); }

std::string UnknownKey(const std::string& key, const std::string& where, std::span<const std::string> keys) {
  const std::string in = where.empty() ? "" : " in " + where;
  const std::string valid = "; expected one of: " + KeyList(keys);
  // A key that is no plain word is more likely a line of some other file than a typo: never quote it.
  if (!IsPlainWord(key)) {
    return "unknown key" + in + " that is not a plain word of letters, digits, '_', '-' or '.' (not shown)" + valid;
  }
  std::string message = "unknown key " + Quote(key) + in + valid;
  if (std::string near = NearestWord(key, keys); !near.empty()) message += " (did you mean '" + near + "'?)";
  return message;
}

}  // namespace

Result<YAML::Node> Parse(std::string_view text, const std::string& file, const Format& format) {
  RC_RETURN_IF_ERROR(GuardYamlText(text, file, {format.what, format.max_depth, format.typical_depth}));
  const SourcePos start{file, 1, 1};
  try {
    // YAML::Load, not LoadAll: LoadAll in yaml-cpp 0.7 loops forever on input such as ","
    // (jbeder/yaml-cpp#1040); the guard has already refused a second document.
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    const SourcePos pos = e.mark.is_null() ? start : SourcePos{file, e.mark.line + 1, e.mark.column + 1};
    return OneLine(At(pos, "YAML syntax error: " + e.msg +
                               "; check the indentation (spaces, not tabs), quotes and brackets here"));
  } catch (const std::exception& e) {
    return OneLine(At(start, std::string("could not read the YAML: ") + e.what()));
  }
}

const char* NodeKind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "empty";
  }
}

YAML::Node Child(const YAML::Node& map, std::string_view key) {
  if (!map.IsMap()) return YAML::Node();
  for (auto it = map.begin(); it != map.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  return YAML::Node();
}

Reader::Reader(std::string file, const Format& format) : file_(std::move(file)), format_(format) {}

SourcePos Reader::Pos(const YAML::Node& node) const {
  const YAML::Mark m = node.Mark();
  return m.is_null() ? SourcePos{file_, 0, 0} : SourcePos{file_, m.line + 1, m.column + 1};
}

SourcePos Reader::Pos(const Entry& entry) const {
  return entry.value.IsNull() ? Pos(entry.key_node) : Pos(entry.value);
}

Status Reader::Visit(const YAML::Node& node) {
  if (++visited_ <= format_.max_nodes) return Status::Ok();
  return Error(node, "the " + std::string(format_.what) + " has more than " + std::to_string(format_.max_nodes) +
                         " values (alias bomb?); " + WithArticle(format_.what) + " needs a few hundred");
}

Result<std::vector<Entry>> Reader::Entries(const YAML::Node& node, const std::string& where,
                                           std::span<const std::string> keys, bool open) {
  RC_RETURN_IF_ERROR(Visit(node));
  const std::string named = where.empty() ? "the " + std::string(format_.what) : where;
  std::vector<Entry> out;
  if (node.IsNull()) return out;
  if (!node.IsMap()) {
    return Error(node, named + " is " + NodeKind(node) + "; expected a map" +
                           (open ? std::string() : " of keys: " + KeyList(keys)));
  }
  std::map<std::string, SourcePos> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    RC_RETURN_IF_ERROR(Visit(it->second));
    if (!it->first.IsScalar()) return Error(it->first, "a key in " + named + " is not a plain word");
    Entry e{it->first.Scalar(), it->first.Scalar(), it->first, it->second};
    if (!open && std::find(keys.begin(), keys.end(), e.key) == keys.end())
      return Error(e.key_node, UnknownKey(e.key, where, keys));
    auto [first, inserted] = seen.emplace(e.key, Pos(e.key_node));
    if (!inserted) {
      return Error(e.key_node, "duplicate key " + Quote(e.key) + " (first at " + first->second.ToString() +
                                   "); each key may appear once in " + named);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string Reader::Missing(const std::vector<Entry>& entries, std::span<const std::string> required) {
  for (const std::string& key : required) {
    auto has = [&](const Entry& e) { return e.key == key; };
    if (std::none_of(entries.begin(), entries.end(), has)) return key;
  }
  return "";
}

Result<std::vector<YAML::Node>> Reader::Items(const Entry& entry, std::string_view expected) {
  std::vector<YAML::Node> out;
  if (entry.value.IsNull()) return out;
  if (!entry.value.IsSequence()) return TypeError(entry, std::string("the value is ") + NodeKind(entry.value), expected);
  for (const YAML::Node& item : entry.value) {
    RC_RETURN_IF_ERROR(Visit(item));
    out.push_back(item);
  }
  return out;
}

Status Reader::TypeError(const Entry& entry, const std::string& problem, std::string_view expected) const {
  return Error(entry, entry.name + ": " + problem + "; expected " + std::string(expected));
}

Status Reader::Scalar(const Entry& entry, std::string& out, std::string_view expected) const {
  if (!entry.value.IsScalar()) return TypeError(entry, std::string("the value is ") + NodeKind(entry.value), expected);
  out = entry.value.Scalar();
  return Status::Ok();
}

Status Reader::String(const Entry& entry, std::string& out, std::string_view expected) const {
  RC_RETURN_IF_ERROR(Scalar(entry, out, expected));
  if (out.empty()) return TypeError(entry, "the value is an empty string", expected);
  return Status::Ok();
}

Status Reader::Int(const Entry& entry, int64_t lo, int64_t hi, int64_t& out, std::string_view expected) const {
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (expected.empty()) expected = range;
  std::string text;
  RC_RETURN_IF_ERROR(Scalar(entry, text, expected));
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && ptr == text.data() + text.size()) {
    if (value >= lo && value <= hi) {
      out = value;
      return Status::Ok();
    }
    return TypeError(entry, Quote(text) + " is out of range", expected);
  }
  return TypeError(entry, Quote(text) + " " + WhyNotInteger(text), expected);
}

Status Reader::Int(const Entry& entry, int lo, int hi, int& out, std::string_view expected) const {
  int64_t value = 0;
  RC_RETURN_IF_ERROR(Int(entry, int64_t{lo}, int64_t{hi}, value, expected));
  out = static_cast<int>(value);
  return Status::Ok();
}

Status Reader::Uint64(const Entry& entry, uint64_t& out, std::string_view expected) const {
  if (expected.empty()) expected = "an integer from 0 to 18446744073709551615";
  std::string text;
  RC_RETURN_IF_ERROR(Scalar(entry, text, expected));
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc() && ptr == text.data() + text.size()) return Status::Ok();
  uint64_t magnitude = 0;
  const bool negative = !text.empty() && text[0] == '-' &&
                        std::from_chars(text.data() + 1, text.data() + text.size(), magnitude).ec == std::errc();
  return TypeError(entry, Quote(text) + " " + (negative ? "is out of range" : WhyNotInteger(text)), expected);
}

Status Reader::Number(const Entry& entry, double& out, std::string_view expected) const {
  std::string text;
  RC_RETURN_IF_ERROR(Scalar(entry, text, expected));
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value))
    return TypeError(entry, Quote(text) + " is not a number", expected);
  out = value;
  return Status::Ok();
}

Status Reader::Bool(const Entry& entry, bool& out, std::string_view expected) const {
  std::string text;
  RC_RETURN_IF_ERROR(Scalar(entry, text, expected));
  // YAML 1.2's booleans only: "yes", "no", "on" are words in 1.2, and a plan's meaning must not hang on that.
  if (text == "true") {
    out = true;
  } else if (text == "false") {
    out = false;
  } else {
    return TypeError(entry, Quote(text) + " is not a boolean", expected);
  }
  return Status::Ok();
}

Status Reader::Dur(const Entry& entry, Duration& out) const {
  std::string text;
  RC_RETURN_IF_ERROR(Scalar(entry, text, "a duration such as 90s, 5m, 2h"));
  auto parsed = ParseDuration(text);
  if (!parsed.ok()) return Error(entry, entry.name + ": " + parsed.status().message());
  out = *parsed;
  return Status::Ok();
}

Status Reader::Fraction(const Entry& entry, double& out) const {
  std::string text;
  RC_RETURN_IF_ERROR(Scalar(entry, text, "a fraction such as 30% or 0.3"));
  auto parsed = ParseFraction(text);
  if (!parsed.ok()) return Error(entry, entry.name + ": " + parsed.status().message());
  out = *parsed;
  return Status::Ok();
}

Status Reader::StringList(const Entry& entry, std::vector<std::string>& out, std::string_view expected) {
  RC_ASSIGN_OR_RETURN(auto items, Items(entry, expected));
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string name = entry.name + "[" + std::to_string(i) + "]";
    RC_RETURN_IF_ERROR(String(Entry{name, name, entry.key_node, items[i]}, out.emplace_back()));
  }
  return Status::Ok();
}

std::string WhyNotInteger(const std::string& text) {
  int64_t value = 0;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec == std::errc::result_out_of_range)
    return "is out of range";
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  const bool numeric = !text.empty() && end == text.c_str() + text.size() && std::isfinite(d) &&
                       text.find_first_of("xXpP") == std::string::npos;
  if (!numeric) return "is not a number";
  if (d != std::floor(d)) return "is not a whole number";
  return std::fabs(d) >= 9.2e18 ? "is out of range" : "is not written as a plain integer";
}

}  // namespace rackchaos::yaml
