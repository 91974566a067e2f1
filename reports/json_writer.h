// A streaming JSON writer: keys come out in the order they are written (so output order is the
// code's order, stable across builds), two-space indentation, '\n' line ends.
//
// Contract: calls must form a valid document (a Key before every value inside an object, matched
// Begin/End); misuse is a programmer error caught by assert, not a runtime Status.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"

namespace rackchaos::reports {

class JsonWriter {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view key);

  void String(std::string_view value);
  void Number(double value);  // null when not finite
  void Int(int64_t value);
  void Bool(bool value);
  void Null();
  void Seconds(const std::optional<Duration>& d);  // seconds, or null

  // Key and value in one call.
  template <typename T>
  void Field(std::string_view key, const T& value) {
    Key(key);
    Value(value);
  }
  void StringArray(std::string_view key, const std::vector<std::string>& values);

  // The document, ending in '\n'.
  std::string Take();

 private:
  void Value(const std::string& v) { String(v); }
  void Value(const char* v) { String(v); }
  void Value(double v) { Number(v); }
  void Value(int v) { Int(v); }
  void Value(int64_t v) { Int(v); }
  void Value(uint32_t v) { Int(v); }
  void Value(uint64_t v);
  void Value(bool v) { Bool(v); }
  void Value(const std::optional<Duration>& d) { Seconds(d); }
  void Value(const Duration& d) { Seconds(d); }

  void Open(char bracket);
  void Close(char bracket);
  void BeforeValue();
  void Newline();

  std::string out_;
  std::vector<int> counts_;  // values written so far at each open level
  bool after_key_ = false;
};

}  // namespace rackchaos::reports
