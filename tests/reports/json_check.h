// A strict little JSON reader for tests: checks that text is one valid JSON value (RFC 8259) and
// collects the keys of the top-level object in order. Not a general parser: values are skipped.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace rackchaos::reports::testing {

class JsonCheck {
 public:
  explicit JsonCheck(std::string_view text) : s_(text) {}

  // True when the whole text is exactly one JSON value (surrounding whitespace allowed).
  bool Valid() {
    Ws();
    if (!Value(0)) return false;
    Ws();
    return i_ == s_.size();
  }
  const std::vector<std::string>& top_keys() const { return top_keys_; }
  size_t error_at() const { return i_; }

 private:
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool Lit(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool Value(int depth) {
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') return Object(depth);
    if (c == '[') return Array(depth);
    if (c == '"') return String(nullptr);
    if (c == 't') return Lit("true");
    if (c == 'f') return Lit("false");
    if (c == 'n') return Lit("null");
    return Number();
  }
  bool Object(int depth) {
    ++i_;
    Ws();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    for (;;) {
      std::string key;
      Ws();
      if (!String(&key)) return false;
      if (depth == 0) top_keys_.push_back(key);
      Ws();
      if (!Lit(":")) return false;
      Ws();
      if (!Value(depth + 1)) return false;
      Ws();
      if (Lit("}")) return true;
      if (!Lit(",")) return false;
    }
  }
  bool Array(int depth) {
    ++i_;
    Ws();
    if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
    for (;;) {
      Ws();
      if (!Value(depth + 1)) return false;
      Ws();
      if (Lit("]")) return true;
      if (!Lit(",")) return false;
    }
  }
  bool String(std::string* out) {
    if (!Lit("\"")) return false;
    while (i_ < s_.size()) {
      auto c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        char e = s_[i_++];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k, ++i_) {
            if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
          }
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
      } else if (out) {
        out->push_back(static_cast<char>(c));
      }
    }
    return false;
  }
  bool Digits() {
    size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ > start;
  }
  bool Number() {
    Lit("-");
    if (Lit("0")) {
    } else if (!Digits()) {
      return false;
    }
    if (Lit(".") && !Digits()) return false;
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (!Lit("+")) Lit("-");
      if (!Digits()) return false;
    }
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
  std::vector<std::string> top_keys_;
};

}  // namespace rackchaos::reports::testing
