#include "runner/ssh/command_template.h"

#include <cctype>

namespace rackchaos::ssh {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

Status TemplateError(std::string_view tmpl, size_t pos, const std::string& what) {
  return Status::Invalid("command template \"" + std::string(tmpl) + "\", column " +
                         std::to_string(pos + 1) + ": " + what);
}

// Checks the placeholder name between the braces at [open, close].
Status CheckName(std::string_view tmpl, size_t open, std::string_view name) {
  if (name.empty()) return TemplateError(tmpl, open, "empty placeholder {}");
  bool ok = IsNameStart(name[0]);
  for (char c : name) ok = ok && IsNameChar(c);
  if (!ok) {
    return TemplateError(tmpl, open,
                         "\"{" + std::string(name) +
                             "}\" is not a placeholder name (letters, digits, _ . -; write {{ and "
                             "}} for literal braces)");
  }
  return Status::Ok();
}

}  // namespace

std::string ShellQuote(std::string_view value) {
  std::string out;
  out.reserve(value.size() + 2);
  out += '\'';
  for (char c : value) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

Status ValidateTemplateValue(std::string_view name, std::string_view value) {
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c != '\0' && c != '\n' && c != '\r') continue;
    const char* what = c == '\0'   ? "a NUL character"
                       : c == '\n' ? "a newline"
                                   : "a carriage return";
    return Status::Invalid("value for {" + std::string(name) + "} contains " + what +
                           " at offset " + std::to_string(i) +
                           "; command template values must be one line of text");
  }
  return Status::Ok();
}

Result<std::string> RenderTemplate(std::string_view tmpl,
                                   const std::map<std::string, std::string>& values) {
  std::string out;
  out.reserve(tmpl.size() + 16);
  for (size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    const bool doubled = i + 1 < tmpl.size() && tmpl[i + 1] == c;
    if (c == '}') {
      if (!doubled) return TemplateError(tmpl, i, "unbalanced '}' (write }} for a literal brace)");
      out += '}';
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (doubled) {
      out += '{';
      ++i;
      continue;
    }
    const size_t close = tmpl.find('}', i + 1);
    if (close == std::string_view::npos) {
      return TemplateError(tmpl, i,
                           "unbalanced '{' (no closing '}'; write {{ for a literal brace)");
    }
    const std::string_view name = tmpl.substr(i + 1, close - i - 1);
    RC_RETURN_IF_ERROR(CheckName(tmpl, i, name));
    const auto it = values.find(std::string(name));
    if (it == values.end())
      return TemplateError(tmpl, i, "no value for placeholder {" + std::string(name) + "}");
    RC_RETURN_IF_ERROR(ValidateTemplateValue(name, it->second));
    out += ShellQuote(it->second);
    i = close;
  }
  return out;
}

}  // namespace rackchaos::ssh
