#include "runner/site/observe/json.h"

#include <charconv>
#include <cmath>
#include <utility>

namespace rackchaos::observe {

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (type_ != Type::kObject) return nullptr;
  for (size_t i = 0; i < keys_.size(); ++i)
    if (keys_[i] == key) return &items_[i];
  return nullptr;
}

std::string_view JsonValue::StringAt(std::string_view key) const {
  const JsonValue* v = Find(key);
  return v && v->is_string() ? std::string_view(v->text_) : std::string_view();
}

// A recursive-descent reader; the first error stops it.
class JsonReader {
 public:
  explicit JsonReader(std::string_view s) : s_(s) {}

  Result<JsonValue> Document() {
    JsonValue v;
    Space();
    if (!Value(v, 0)) return Failed();
    Space();
    if (pos_ != s_.size()) {
      Fail("text after the document");
      return Failed();
    }
    return v;
  }

 private:
  bool Fail(const char* what) {
    if (error_.empty()) error_ = "byte " + std::to_string(pos_) + ": " + what;
    return false;
  }
  Status Failed() const { return Status::Corrupt(error_.empty() ? "bad JSON" : error_); }
  void Space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return Fail("unknown literal");
    pos_ += word.size();
    return true;
  }

  bool Value(JsonValue& v, int depth) {
    if (pos_ >= s_.size()) return Fail("unexpected end");
    char c = s_[pos_];
    switch (c) {
      case '{': return Object(v, depth + 1);
      case '[': return Array(v, depth + 1);
      case '"': v.type_ = JsonValue::Type::kString; return String(v.text_);
      case 't': v.type_ = JsonValue::Type::kBool; v.boolean_ = true; return Literal("true");
      case 'f': v.type_ = JsonValue::Type::kBool; return Literal("false");
      case 'n': v.type_ = JsonValue::Type::kNull; return Literal("null");
      default: return Number(v);
    }
  }

  bool Object(JsonValue& v, int depth) {
    if (depth > kMaxJsonDepth) return Fail("nested too deep");
    v.type_ = JsonValue::Type::kObject;
    ++pos_;
    Space();
    if (pos_ < s_.size() && s_[pos_] == '}') return ++pos_, true;
    while (true) {
      Space();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a member name");
      std::string key;
      if (!String(key)) return false;
      Space();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':'");
      ++pos_;
      Space();
      JsonValue item;
      if (!Value(item, depth)) return false;
      v.keys_.push_back(std::move(key));
      v.items_.push_back(std::move(item));
      Space();
      if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
      if (pos_ < s_.size() && s_[pos_] == '}') return ++pos_, true;
      return Fail("expected ',' or '}'");
    }
  }

  bool Array(JsonValue& v, int depth) {
    if (depth > kMaxJsonDepth) return Fail("nested too deep");
    v.type_ = JsonValue::Type::kArray;
    ++pos_;
    Space();
    if (pos_ < s_.size() && s_[pos_] == ']') return ++pos_, true;
    while (true) {
      Space();
      JsonValue item;
      if (!Value(item, depth)) return false;
      v.items_.push_back(std::move(item));
      Space();
      if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
      if (pos_ < s_.size() && s_[pos_] == ']') return ++pos_, true;
      return Fail("expected ',' or ']'");
    }
  }

  bool Number(JsonValue& v) {
    size_t start = pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > from;
    };
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
    else if (!digits()) return Fail("expected a value");
    if (pos_ < s_.size() && s_[pos_] == '.' && (++pos_, !digits())) return Fail("expected digits after '.'");
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return Fail("expected exponent digits");
    }
    double d = 0;
    auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, d);
    if (end != s_.data() + pos_ || (ec != std::errc() && ec != std::errc::result_out_of_range) || !std::isfinite(d))
      return Fail("number out of range");
    v.type_ = JsonValue::Type::kNumber;
    v.number_ = d;
    return true;
  }

  bool Hex4(unsigned& out) {
    if (pos_ + 4 > s_.size()) return Fail("short \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9') out |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') out |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') out |= static_cast<unsigned>(c - 'A' + 10);
      else return Fail("bad \\u escape");
    }
    return true;
  }

  static void Utf8(unsigned cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  bool String(std::string& out) {
    ++pos_;  // the opening quote
    while (true) {
      size_t run = pos_;
      while (run < s_.size() && s_[run] != '"' && s_[run] != '\\' && static_cast<unsigned char>(s_[run]) >= 0x20) ++run;
      out.append(s_.data() + pos_, run - pos_);
      pos_ = run;
      if (pos_ >= s_.size()) return Fail("unterminated string");
      char c = s_[pos_];
      if (c == '"') return ++pos_, true;
      if (c != '\\') return Fail("control character in a string");
      if (++pos_ >= s_.size()) return Fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = 0;
          if (!Hex4(cp)) return false;
          if (cp >= 0xd800 && cp < 0xdc00) {  // a high surrogate needs its low half
            unsigned low = 0;
            if (s_.substr(pos_, 2) != "\\u") return Fail("lone surrogate");
            pos_ += 2;
            if (!Hex4(low)) return false;
            if (low < 0xdc00 || low >= 0xe000) return Fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          } else if (cp >= 0xdc00 && cp < 0xe000) {
            return Fail("lone surrogate");
          }
          Utf8(cp, out);
          break;
        }
        default: return Fail("bad escape");
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

Result<JsonValue> ParseJson(std::string_view text) { return JsonReader(text).Document(); }

}  // namespace rackchaos::observe
