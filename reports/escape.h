// Text escaping and number formatting shared by the renderers. Every function is pure and
// deterministic: the same input gives the same bytes on every host (no locale, fixed precision).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/units.h"

namespace rackchaos::reports {

// A JSON string literal, quotes included; control characters become \u00XX. Bytes >= 0x80 are
// copied as they are (the store holds UTF-8).
std::string JsonString(std::string_view text);
// A JSON number with up to 15 significant digits ("12.5", "3", "1e-06"); "null" when not finite.
std::string JsonNumber(double value);
// Seconds of `d` as a JSON number, or "null" when absent.
std::string JsonSeconds(const std::optional<Duration>& d);

// Text for XML and HTML element content and attribute values: & < > " ' escaped, and characters
// XML 1.0 forbids (control characters other than tab, newline, carriage return) dropped.
std::string XmlEscape(std::string_view text);

// A Prometheus label value without the quotes: backslash, double quote and newline escaped.
std::string PromLabelValue(std::string_view text);

// A Markdown table cell: '|' escaped, newlines turned into spaces.
std::string MarkdownCell(std::string_view text);

// Text safe to print on a terminal, on one line: every control character (C0 including tab and newline,
// DEL, and the C1 range U+0080-U+009F, which terminals read as escape sequences too) and every byte that
// is not part of valid UTF-8 written as a visible escape ("\x1b", "\n", "\u009b"). Other text, UTF-8
// included, is copied as it is. Stored strings (plan names, targets, imported log lines) go through
// this before they reach a terminal, so a hostile name cannot move the cursor or recolour the screen.
std::string TerminalText(std::string_view text);
// TerminalText of each line of `text`, its newlines kept: for whole pages of output.
std::string TerminalLines(std::string_view text);

// FormatDurationShort(*d), or "-" when `d` is unknown (table cells).
std::string ShortOrDash(const std::optional<Duration>& d);
// `value` with exactly `decimals` digits after the point ("%.*f").
std::string Fixed(double value, int decimals);
// `fraction` as a percentage with one decimal: 0.8734 -> "87.3%".
std::string Percent(double fraction);
// The shortest "%.6g" form, for numbers in prose and tables.
std::string Num(double value);

}  // namespace rackchaos::reports
