#include "reports/json_writer.h"

#include <cassert>

#include "reports/escape.h"

namespace rackchaos::reports {

void JsonWriter::Newline() {
  out_ += '\n';
  out_.append(2 * counts_.size(), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (counts_.empty()) return;
  if (counts_.back()++ > 0) out_ += ',';
  Newline();
}

void JsonWriter::Key(std::string_view key) {
  assert(!after_key_);
  BeforeValue();
  out_ += JsonString(key);
  out_ += ": ";
  after_key_ = true;
}

void JsonWriter::Open(char bracket) {
  BeforeValue();
  out_ += bracket;
  counts_.push_back(0);
}

void JsonWriter::Close(char bracket) {
  assert(!counts_.empty());
  bool had_values = counts_.back() > 0;
  counts_.pop_back();
  if (had_values) Newline();
  out_ += bracket;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  out_ += JsonString(value);
}

void JsonWriter::Number(double value) {
  BeforeValue();
  out_ += JsonNumber(value);
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
}

void JsonWriter::Value(uint64_t v) {
  BeforeValue();
  out_ += std::to_string(v);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

void JsonWriter::Seconds(const std::optional<Duration>& d) {
  BeforeValue();
  out_ += JsonSeconds(d);
}

void JsonWriter::StringArray(std::string_view key, const std::vector<std::string>& values) {
  Key(key);
  BeginArray();
  for (const std::string& v : values) String(v);
  EndArray();
}

std::string JsonWriter::Take() {
  assert(counts_.empty());
  out_ += '\n';
  return std::move(out_);
}

}  // namespace rackchaos::reports
