// The shared string helpers (core/strings.h) and wall-time formatting (core/wall_time.h).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/strings.h"
#include "core/wall_time.h"

using namespace rackchaos;

TEST_CASE("strings: Trim takes ASCII whitespace off both ends and nothing else") {
  CHECK(Trim("  a b \t\r\n") == "a b");
  CHECK(Trim("\v\fx\f") == "x");
  CHECK(Trim("") == "");
  CHECK(Trim(" \t ") == "");
  CHECK(TrimLeft("  a ") == "a ");
  CHECK(TrimRight("  a ") == "  a");
  CHECK(Trim("\xC2\xA0x") == "\xC2\xA0x");  // a UTF-8 no-break space is not ASCII whitespace
}

TEST_CASE("strings: case, split and join") {
  CHECK(ToLower("DRAIN+Idle") == "drain+idle");
  CHECK(ToUpper("drain*") == "DRAIN*");
  CHECK(EqualsIgnoreCase("Fatal", "fATAL"));
  CHECK_FALSE(EqualsIgnoreCase("Fatal", "Fatal!"));
  CHECK(StartsWithIgnoreCase("Link Down", "link down"));
  CHECK_FALSE(StartsWithIgnoreCase("Link", "link down"));
  CHECK(Split("a,,b", ',') == std::vector<std::string_view>{"a", "", "b"});
  CHECK(Split("", '.') == std::vector<std::string_view>{""});
  CHECK(SplitLines("a\r\n\nb") == std::vector<std::string_view>{"a", "", "b"});
  CHECK(SplitLines("a\n") == std::vector<std::string_view>{"a"});
  CHECK(SplitLines("").empty());
  CHECK(Contains("dmon was stopped", "was"));
  CHECK_FALSE(Contains("dmon", "DMON"));
  CHECK(ContainsIgnoreCase("an Xid NON-FATAL error", "non-fatal"));
  CHECK(ContainsIgnoreCase("x", ""));
  CHECK_FALSE(ContainsIgnoreCase("fatal", "nonfatal"));
  const std::vector<std::string> items{"a", "b", "c"};
  CHECK(Join(items) == "a, b, c");
  CHECK(Join(items, "|") == "a|b|c");
  CHECK(Join(std::vector<std::string>{}) == "");
}

TEST_CASE("strings: a list cut after its first items, and counts with thousands separators") {
  const std::vector<std::string> items{"a", "b", "c"};
  CHECK(JoinCut(items, 3, "none") == "a, b, c");
  CHECK(JoinCut(items, 2, "none") == "a, b, and 1 more");
  CHECK(JoinCut(items, 0, "none") == "3 more");
  CHECK(JoinCut(std::vector<std::string>{}, 2, "none") == "none");
  std::vector<std::string> many(5002, "t");
  CHECK(JoinCut(many, 2, "") == "t, t, and 5,000 more");
  CHECK(Thousands(0) == "0");
  CHECK(Thousands(999) == "999");
  CHECK(Thousands(1000) == "1,000");
  CHECK(Thousands(40429) == "40,429");
  CHECK(Thousands(1000008) == "1,000,008");
}

TEST_CASE("strings: edit distance and the nearest word") {
  CHECK(EditDistance("kitten", "sitting") == 3);
  CHECK(EditDistance("", "abc") == 3);
  const std::vector<std::string> keys{"name", "faults", "safety"};
  CHECK(NearestWord("faultz", keys) == "faults");
  CHECK(NearestWord("nmae", keys) == "name");
  CHECK(NearestWord("zzzzzzzzzz", keys).empty());
  CHECK(NearestWord("x", std::vector<std::string>{}).empty());
}

TEST_CASE("strings: Quote keeps one line and a bounded length, and IsPlainWord tells keys from lines") {
  CHECK(Quote("r01.tray03") == "'r01.tray03'");
  CHECK(Quote("a\nb\tc\x01") == "'a\\nb\\tc\\x01'");
  const std::string secret = "root:$6$" + std::string(100, 'S') + ":19000:0:99999:7:::";
  const std::string quoted = Quote(secret);
  CHECK(quoted.size() < 90);
  CHECK(quoted.find(std::to_string(secret.size()) + " bytes") != std::string::npos);
  // A cut never splits a UTF-8 character: 63 ASCII bytes, then a 2-byte character across byte 64.
  const std::string accented = std::string(63, 'a') + "\xC3\xA9" + "tail";
  CHECK(Quote(accented).substr(0, 65) == "'" + std::string(63, 'a') + "'");
  CHECK(IsPlainWord("min_slowdown"));
  CHECK(IsPlainWord("r01.tray03-x"));
  CHECK_FALSE(IsPlainWord(""));
  CHECK_FALSE(IsPlainWord("root:*:20228:0:99999:7::"));
  CHECK_FALSE(IsPlainWord("two words"));
  CHECK_FALSE(IsPlainWord(std::string(65, 'a')));
}

TEST_CASE("strings: articles and byte sizes for messages") {
  CHECK(WithArticle("plan") == "a plan");
  CHECK(WithArticle("incident log") == "an incident log");
  CHECK(FormatBytes(512) == "512 bytes");
  CHECK(FormatBytes(4u << 20) == "4 MiB");
  CHECK(FormatBytes(uint64_t{16} << 30) == "16 GiB");
  CHECK(FormatBytes(1536) == "1.5 KiB");
}

TEST_CASE("wall time: stamps are UTC ISO-8601 to the second") {
  CHECK(FormatWallStamp(0) == "1970-01-01T00:00:00Z");
  CHECK(FormatWallStamp(1764547200) == "2025-12-01T00:00:00Z");
  const std::string now = WallStampNow();
  CHECK(now.size() == 20);
  CHECK(now.back() == 'Z');
  CHECK(UnixMicrosNow() / 1000000 >= UnixSecondsNow() - 1);
}

TEST_CASE("wall time: ParseWallStamp reads back FormatWallStamp's form and nothing else") {
  CHECK(ParseWallStamp("1970-01-01T00:00:00Z") == 0);
  CHECK(ParseWallStamp("2025-12-01T00:00:00Z") == 1764547200);
  CHECK(ParseWallStamp(FormatWallStamp(1700000123)) == 1700000123);
  CHECK_FALSE(ParseWallStamp("").has_value());
  CHECK_FALSE(ParseWallStamp("2025-12-01 00:00:00").has_value());
  CHECK_FALSE(ParseWallStamp("2025-12-01T00:00:00Zjunk").has_value());
}

TEST_CASE("strings: ASCII character classes and case, the same in every locale") {
  CHECK(IsAlpha('a'));
  CHECK(IsAlpha('Z'));
  CHECK_FALSE(IsAlpha('0'));
  CHECK_FALSE(IsAlpha('\xC3'));  // a UTF-8 lead byte is no letter
  CHECK(IsAlnum('7'));
  CHECK_FALSE(IsAlnum('_'));
  CHECK(IsHexDigit('f'));
  CHECK(IsHexDigit('B'));
  CHECK_FALSE(IsHexDigit('g'));
  CHECK(AsciiLower('Q') == 'q');
  CHECK(AsciiLower('\xC4') == '\xC4');
  CHECK(AsciiUpper('q') == 'Q');
  CHECK(AsciiUpper('1') == '1');
}
