// A small JSON reader for the observe parsers (Redfish bodies, Prometheus answers, journalctl -o json).
// Boost 1.74, the Debian 12 version, has no Boost.JSON (it came with 1.75), so this reads RFC 8259
// text into a plain tree: strict grammar, \u escapes (surrogate pairs included) decoded to UTF-8,
// other bytes kept as they are, nesting limited to kMaxJsonDepth. Numbers are doubles. Errors give
// the byte offset. Never throws; linear in the input; recursion bounded by the depth limit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rackchaos::observe {

inline constexpr int kMaxJsonDepth = 64;

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  bool boolean() const { return boolean_; }
  double number() const { return number_; }
  const std::string& text() const { return text_; }  // kString
  // Array elements, or object member values (parallel to keys()).
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<std::string>& keys() const { return keys_; }  // kObject only

  // The member `key` of an object (the first one when repeated); nullptr when absent or not an object.
  const JsonValue* Find(std::string_view key) const;
  // The string member `key`, or "" when absent or not a string.
  std::string_view StringAt(std::string_view key) const;

 private:
  friend class JsonReader;
  Type type_ = Type::kNull;
  bool boolean_ = false;
  double number_ = 0;
  std::string text_;
  std::vector<std::string> keys_;
  std::vector<JsonValue> items_;
};

// One JSON document (surrounding whitespace allowed). kCorrupt: "byte N: what".
Result<JsonValue> ParseJson(std::string_view text);

}  // namespace rackchaos::observe
