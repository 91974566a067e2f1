// Small string helpers every module shares: trimming, ASCII case, splitting and joining, edit distance
// and "did you mean", and the one way an error message quotes text taken from a user's file.
//
// All of them are pure and ASCII-only (bytes >= 0x80 are never whitespace, letters or case-folded), so
// they behave the same in every locale.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rackchaos {

// ASCII whitespace: space, \t, \n, \v, \f, \r.
constexpr bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool IsAlnum(char c) { return IsDigit(c) || IsAlpha(c); }
constexpr bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
constexpr char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr char AsciiUpper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

// `s` without leading and trailing whitespace, or only leading or trailing (views into `s`).
std::string_view Trim(std::string_view s);
std::string_view TrimLeft(std::string_view s);
std::string_view TrimRight(std::string_view s);

std::string ToLower(std::string_view s);
std::string ToUpper(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix);
bool Contains(std::string_view s, std::string_view part);
bool ContainsIgnoreCase(std::string_view s, std::string_view part);

// "a,,b" -> {"a", "", "b"}; "" -> {""}: every field, empty ones included (views into `text`).
std::vector<std::string_view> Split(std::string_view text, char sep);
// Lines without their "\n" (and a trailing "\r"); no empty last line for text ending in "\n"; "" -> {}.
std::vector<std::string_view> SplitLines(std::string_view text);
// {"a", "b"} -> "a, b".
std::string Join(std::span<const std::string> items, std::string_view sep = ", ");
// "a, b, c" of the first `max` items, then ", and 4,992 more"; `if_empty` for none. For lists a message
// or a report prints whole whatever their length (isolated trays, missed faults, a suite's racks).
std::string JoinCut(std::span<const std::string> items, size_t max, std::string_view if_empty);
// 40429 -> "40,429": counts in prose.
std::string Thousands(size_t n);

// Levenshtein distance (insertions, deletions, substitutions), O(|a| * |b|) time, O(|b|) memory.
size_t EditDistance(std::string_view a, std::string_view b);
// The candidate nearest to `word` when it is near enough to be a typo of it (at most 2 edits, or a third
// of the word); "" when none is. Ties go to the earlier candidate.
std::string NearestWord(std::string_view word, std::span<const std::string> candidates);

// True for text that reads as a key or name a person typed: 1-64 bytes of ASCII letters, digits,
// '_', '-' and '.'. Error messages quote a key only when it is one (a line of a system file is not).
bool IsPlainWord(std::string_view s);
// `token` in single quotes for an error message, one line whatever it holds: control bytes written as
// \n, \t, \xNN, and cut after 64 bytes (at a character boundary) with "..." and its length.
std::string Quote(std::string_view token);

// "a plan", "an inventory": the noun with its indefinite article (by its first letter).
std::string WithArticle(std::string_view noun);
// A size for messages: "512 bytes", "4 MiB", "16 GiB" (whole units when exact, else one decimal).
std::string FormatBytes(uint64_t bytes);

}  // namespace rackchaos
