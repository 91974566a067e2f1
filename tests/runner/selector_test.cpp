#include "runner/plan/selector.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/rng.h"

using namespace rackchaos;
using namespace rackchaos::runner;

namespace {

Selector Parsed(const std::string& text) {
  auto s = ParseSelector(text);
  REQUIRE_MESSAGE(s.ok(), s.status().message());
  return s.value();
}

// Every component name of `racks` GB200 NVL72 racks, as the cluster model spells them.
std::vector<std::string> RackNames(int racks) {
  std::vector<std::string> names;
  auto two = [](int v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  for (int r = 1; r <= racks; ++r) {
    std::string rack = "r" + two(r);
    names.push_back(rack);
    names.push_back(rack + ".cdu");
    for (int t = 1; t <= 18; ++t) {
      std::string tray = rack + ".tray" + two(t);
      names.push_back(tray);
      names.push_back(tray + ".valve");
      for (int i = 0; i < 4; ++i) names.push_back(tray + ".gpu" + std::to_string(i));
      for (int i = 0; i < 4; ++i) names.push_back(tray + ".nic" + std::to_string(i));
      names.push_back(tray + ".cpu0");
    }
    for (int s = 1; s <= 9; ++s) names.push_back(rack + ".switch" + std::to_string(s));
    names.push_back(rack + ".shelf1");
    names.push_back(rack + ".shelf1.psu1");
  }
  return names;
}

}  // namespace

TEST_CASE("selectors match and do not match component names") {
  struct Row {
    const char* selector;
    const char* name;
    bool matches;
  };
  const Row rows[] = {
      {"r01.tray03.gpu2", "r01.tray03.gpu2", true},
      {"r01.tray03.gpu2", "r01.tray03.gpu1", false},
      {"r01.tray03.gpu2", "r01.tray03", false},
      {"r01.tray03", "r01.tray03.gpu2", false},
      {"r*.switch3", "r07.switch3", true},
      {"r*.switch3", "r07.switch30", false},
      {"r*", "r01", true},
      {"r*", "r01.cdu", false},
      {"r01.*", "r01.cdu", true},
      {"r01.*", "r02.cdu", false},
      {"*.*.gpu*", "r01.tray18.gpu3", true},
      {"*.*.gpu*", "r01.tray18.nic3", false},
      {"r01.tray[01-04]", "r01.tray01", true},
      {"r01.tray[01-04]", "r01.tray04", true},
      {"r01.tray[01-04]", "r01.tray05", false},
      {"r01.tray[01-04]", "r01.tray1", false},
      {"r01.tray[1-4]", "r01.tray1", true},
      {"r01.tray[1-4]", "r01.tray01", false},
      {"r01.tray[8-12]", "r01.tray9", true},
      {"r01.tray[8-12]", "r01.tray09", false},
      {"r01.tray[8-12]", "r01.tray12", true},
      {"r01.tray[01-03,07]", "r01.tray07", true},
      {"r01.tray[01-03,07]", "r01.tray02", true},
      {"r01.tray[01-03,07]", "r01.tray05", false},
      {"r01.tray03.gpu[0,2,3]", "r01.tray03.gpu2", true},
      {"r01.tray03.gpu[0,2,3]", "r01.tray03.gpu1", false},
      {"r[01-02].tray*.valve", "r02.tray11.valve", true},
      {"r[01-02].tray*.valve", "r03.tray11.valve", false},
      {"r01.shelf*.psu[1-6]", "r01.shelf1.psu1", true},
      {"r01.tray0*", "r01.tray10", false},
  };
  for (const Row& row : rows) {
    CAPTURE(row.selector);
    CAPTURE(row.name);
    CHECK(Parsed(row.selector).Matches(row.name) == row.matches);
  }
}

TEST_CASE("a trailing nvlink segment selects ports, not components") {
  Selector one = Parsed("r01.tray03.gpu2.nvlink5");
  CHECK(one.segments().size() == 3);
  REQUIRE(one.port_pattern().has_value());
  CHECK(one.port_pattern()->text() == "nvlink5");
  CHECK(one.Matches("r01.tray03.gpu2"));
  CHECK(one.MatchesPort(5));
  CHECK_FALSE(one.MatchesPort(4));
  CHECK(one.IsLiteral());

  Selector range = Parsed("r01.tray03.gpu*.nvlink[0-3]");
  for (int p = 0; p < 18; ++p) CHECK(range.MatchesPort(p) == (p <= 3));
  CHECK(Parsed("r01.tray03.gpu2.nvlink*").MatchesPort(17));
  CHECK_FALSE(Parsed("r01.tray03.gpu2").MatchesPort(0));
  CHECK_FALSE(Parsed("r01.tray*").IsLiteral());
}

TEST_CASE("attribute selectors are stored for the cluster model") {
  Selector s = Parsed("kind=gpu");
  CHECK(s.is_attribute());
  CHECK(s.attribute_key() == "kind");
  CHECK(s.attribute_value() == "gpu");
  CHECK_FALSE(s.Matches("kind=gpu"));
  CHECK(Parsed("region=east").attribute_value() == "east");
}

TEST_CASE("bad selectors say what is wrong and show the accepted forms") {
  struct Row {
    const char* selector;
    const char* says;
  };
  const Row rows[] = {
      {"", "empty selector"},
      {"r01..tray03", "empty segment"},
      {"r01.tray03.", "empty segment"},
      {"r01.tray[04-01]", "backwards"},
      {"r01.tray[01-4]", "same width"},
      {"r01.tray[01-04", "without a closing"},
      {"r01.tray[]", "empty entry"},
      {"r01.tray[a-b]", "must be two numbers"},
      {"r01 tray03", "unexpected character ' '"},
      {"r01.nvlink3.gpu2", "must come last"},
      {"nvlink3", "needs a GPU"},
      {"kind=", "key=value"},
      {"=gpu", "key=value"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.selector);
    auto s = ParseSelector(row.selector);
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kInvalidArgument);
    CHECK(s.status().message().find(row.says) != std::string::npos);
    CHECK(s.status().message().find("accepted forms: ") != std::string::npos);
  }
  CHECK_FALSE(ParseSelector(std::string(300, 'a')).ok());
  CHECK_FALSE(ParseSelector("a.b.c.d.e.f.g.h.i").ok());
}

TEST_CASE("NearestNames suggests close names, same prefix first") {
  std::vector<std::string> names = RackNames(2);
  auto near = NearestNames("r01.tray33", names);
  REQUIRE(near.size() == 3);
  CHECK(near[0] == "r01.tray13");
  CHECK(near[1] == "r01.tray03");
  CHECK(near[2] == "r01.tray18");
  CHECK(NearestNames("r01.tray03.gpu7", names, 1) == std::vector<std::string>{"r01.tray03.gpu3"});
  CHECK(NearestNames("r1.tray03", names, 1) == std::vector<std::string>{"r01.tray03"});
  CHECK(NearestNames("r02.trya05.valve", names, 1) == std::vector<std::string>{"r02.tray05.valve"});
  CHECK(NearestNames("x", {}, 3).empty());
  CHECK(NearestNames("r01", {"r01", "r02"}, 5) == std::vector<std::string>{"r02"});
  CHECK(EditDistance("kitten", "sitting") == 3);
  CHECK(EditDistance("", "abc") == 3);
}

// Over a 500-rack cluster's names. No clock here: a timed assertion failed under ASan at -O0 on a loaded
// 2-core machine (6.3 s against a 5 s bound; ~30 ms optimized); speed is for benchmarks.
TEST_CASE("NearestNames over 100k names") {
  std::vector<std::string> names = RackNames(500);
  REQUIRE(names.size() > 100000);
  auto near = NearestNames("r377.tray33.gpu2", names);
  auto far = NearestNames("x9.y9.z9", names);  // no shared prefix: every name is scored
  CHECK(near.front() == "r377.tray13.gpu2");
  CHECK(far.size() == 3);
}

TEST_CASE("pick modes parse") {
  CHECK(ParsePick("one")->kind == Pick::kOne);
  CHECK(ParsePick("all")->kind == Pick::kAll);
  CHECK(ParsePick("count:3")->kind == Pick::kCount);
  CHECK(ParsePick("count:3")->amount == 3);
  CHECK(ParsePick("25%")->kind == Pick::kPercent);
  CHECK(ParsePick("percent:12.5")->amount == doctest::Approx(12.5));
  CHECK(ParsePick("count:3")->ToString() == "count:3");
  CHECK(ParsePick("percent:25")->ToString() == "25%");
  for (const char* bad : {"", "some", "count:", "count:0", "count:1.5", "count:-2", "0%", "150%", "x%", "ONE"}) {
    CAPTURE(bad);
    auto p = ParsePick(bad);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().message().find("accepted: one, all, count:N") != std::string::npos);
  }
}

TEST_CASE("ApplyPick is deterministic for a seed and returns sorted distinct indices") {
  Pick three = ParsePick("count:3").value();
  Rng a(7), b(7), c(8);
  auto first = ApplyPick(three, 100, a).value();
  CHECK(first == ApplyPick(three, 100, b).value());
  CHECK(first.size() == 3);
  CHECK(std::is_sorted(first.begin(), first.end()));
  CHECK(std::adjacent_find(first.begin(), first.end()) == first.end());
  CHECK(first.back() < 100);
  // Different seeds choose differently at least once over a few draws.
  bool differs = false;
  for (int i = 0; i < 5; ++i) differs |= ApplyPick(three, 100, a).value() != ApplyPick(three, 100, c).value();
  CHECK(differs);

  Rng rng(1);
  CHECK(ApplyPick(ParsePick("all").value(), 4, rng).value() == std::vector<size_t>{0, 1, 2, 3});
  CHECK(ApplyPick(ParsePick("one").value(), 4, rng)->size() == 1);
  CHECK(ApplyPick(ParsePick("25%").value(), 10, rng)->size() == 3);  // ceil(2.5)
  CHECK(ApplyPick(ParsePick("1%").value(), 10, rng)->size() == 1);   // at least one
  CHECK(ApplyPick(ParsePick("100%").value(), 10, rng)->size() == 10);
}

TEST_CASE("ApplyPick fails when the pick cannot be met") {
  Rng rng(1);
  auto too_many = ApplyPick(ParsePick("count:5").value(), 3, rng);
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.status().message().find("needs 5 components but the target matched 3") != std::string::npos);
  CHECK_FALSE(ApplyPick(ParsePick("one").value(), 0, rng).ok());
}
