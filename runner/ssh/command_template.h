// Command templates with shell-quoted values: "ip link set dev {if} down" + {if: "eth0"}.
//
// Template values come from inventories and plans, so they are data, never shell syntax: each value
// is inserted as exactly one single-quoted shell word. A value "eth0; rm -rf /" renders as
// 'eth0; rm -rf /' and reaches the command as one argument. The template text itself is trusted
// (it comes from the site's reviewed command table), so it may contain pipes, && and redirections.
//
// Syntax: {name} is a placeholder; name is [A-Za-z_][A-Za-z0-9_.-]*. "{{" and "}}" are literal
// braces (for JSON bodies: '{{"LinkState":"Disabled"}}'). Pure functions, thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/status.h"

namespace rackchaos::ssh {

// Quotes `value` as one POSIX shell word: wrapped in single quotes, each ' written as '\''.
// The empty string becomes ''.
std::string ShellQuote(std::string_view value);

// Refuses values that cannot be passed safely through a command line or a log line: NUL, newline
// and carriage return. The error names the placeholder and the offending character's position.
Status ValidateTemplateValue(std::string_view name, std::string_view value);

// Replaces every {name} with ShellQuote(values[name]). Fails with InvalidArgument (quoting the
// template and the column) on a placeholder that has no value, an unbalanced or stray brace, an
// empty or malformed placeholder name, or a value refused by ValidateTemplateValue. Values that no
// placeholder uses are ignored.
Result<std::string> RenderTemplate(std::string_view tmpl,
                                   const std::map<std::string, std::string>& values);

}  // namespace rackchaos::ssh
