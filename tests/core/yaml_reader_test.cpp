// The one YAML reader (core/yaml_reader.h) and the embedded texts registry (core/embedded.h).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/embedded.h"
#include "core/yaml_reader.h"

using namespace rackchaos;

namespace {

const yaml::Format kTestFormat{"test file", 64, 3, 50};
const std::vector<std::string> kTopKeys{"name", "racks", "ratio", "on", "for", "share", "seed", "items"};

// The message of the first error reading `text`'s top-level map and each of its values as the key says.
std::string ReadError(const std::string& text) {
  auto root = yaml::Parse(text, "t.yaml", kTestFormat);
  if (!root.ok()) return root.status().message();
  yaml::Reader r("t.yaml", kTestFormat);
  auto entries = r.Entries(*root, "", kTopKeys);
  if (!entries.ok()) return entries.status().message();
  for (const yaml::Entry& e : *entries) {
    std::string s;
    int i = 0;
    double d = 0;
    bool b = false;
    Duration dur;
    uint64_t u = 0;
    std::vector<std::string> list;
    Status st;
    if (e.key == "name") st = r.String(e, s);
    if (e.key == "racks") st = r.Int(e, 1, 100, i);
    if (e.key == "ratio") st = r.Number(e, d);
    if (e.key == "on") st = r.Bool(e, b);
    if (e.key == "for") st = r.Dur(e, dur);
    if (e.key == "share") st = r.Fraction(e, d);
    if (e.key == "seed") st = r.Uint64(e, u);
    if (e.key == "items") st = r.StringList(e, list);
    if (!st.ok()) return st.message();
  }
  return "(read fine)";
}

}  // namespace

TEST_CASE("yaml reader: syntax errors and the text guards name FILE:LINE:COL") {
  CHECK(ReadError("name: x\nracks: [1, 2\n").rfind("t.yaml:3:1: YAML syntax error: ", 0) == 0);
  CHECK(ReadError("name: x\n\x01\n").rfind("t.yaml:2:1: byte 0x01 is not text; a test file is UTF-8 text", 0) == 0);
  CHECK(ReadError("name: x\n---\nname: y\n").rfind("t.yaml:2:1: a second YAML document starts here", 0) == 0);
  CHECK(ReadError(std::string(100, '[')).find("nesting is deeper than 64 levels; a test file needs about 3") !=
        std::string::npos);
  auto empty = yaml::Parse("# nothing\n", "t.yaml", kTestFormat);
  REQUIRE(empty.ok());
  CHECK(empty->IsNull());
}

TEST_CASE("yaml reader: maps are checked against their keys") {
  CHECK(ReadError("nmae: x\n") ==
        "t.yaml:1:1: unknown key 'nmae'; expected one of: name, racks, ratio, on, for, share, seed, items (did you "
        "mean 'name'?)");
  CHECK(ReadError("name: x\nname: y\n") ==
        "t.yaml:2:1: duplicate key 'name' (first at t.yaml:1:1); each key may appear once in the test file");
  CHECK(ReadError("- a\n") == "t.yaml:1:1: the test file is a list; expected a map of keys: name, racks, ratio, on, "
                              "for, share, seed, items");
  CHECK(ReadError("? [a]\n: 1\n") == "t.yaml:1:3: a key in the test file is not a plain word");
  // A line of some other file is never quoted, however it is taken apart.
  const std::string shadow = ReadError("root:$6$SECRETSALT$SECRETHASH:19000:0:99999:7:::\n");
  CHECK(shadow.find("SECRET") == std::string::npos);
  CHECK(shadow.rfind("t.yaml:1:1: unknown key that is not a plain word", 0) == 0);
}

TEST_CASE("yaml reader: values say what is wrong and what would be valid") {
  CHECK(ReadError("name: x\nracks: 7\nratio: 0.25\non: true\nfor: 90s\nshare: 15%\nseed: 7\nitems: [a, b]\n") ==
        "(read fine)");
  CHECK(ReadError("name:\n") == "t.yaml:1:1: name: the value is empty; expected a string");
  CHECK(ReadError("name: ''\n") == "t.yaml:1:7: name: the value is an empty string; expected a string");
  CHECK(ReadError("racks: 101\n") == "t.yaml:1:8: racks: '101' is out of range; expected an integer from 1 to 100");
  CHECK(ReadError("racks: 6.5\n") == "t.yaml:1:8: racks: '6.5' is not a whole number; expected an integer from 1 to 100");
  CHECK(ReadError("racks: 1e30\n") == "t.yaml:1:8: racks: '1e30' is out of range; expected an integer from 1 to 100");
  CHECK(ReadError("racks: [1]\n") == "t.yaml:1:8: racks: the value is a list; expected an integer from 1 to 100");
  CHECK(ReadError("ratio: .nan\n") == "t.yaml:1:8: ratio: '.nan' is not a number; expected a number");
  CHECK(ReadError("on: sometimes\n") == "t.yaml:1:5: on: 'sometimes' is not a boolean; expected true or false");
  CHECK(ReadError("on: yes\n") == "t.yaml:1:5: on: 'yes' is not a boolean; expected true or false");
  CHECK(ReadError("for: 20\n").rfind("t.yaml:1:6: for: '20' has no unit; accepted units: ", 0) == 0);
  CHECK(ReadError("share: 150%\n") == "t.yaml:1:8: share: '150%' is outside [0%, 100%]");
  CHECK(ReadError("seed: -1\n") ==
        "t.yaml:1:7: seed: '-1' is out of range; expected an integer from 0 to 18446744073709551615");
  CHECK(ReadError("items: [a, [b]]\n") == "t.yaml:1:12: items[1]: the value is a list; expected a string");
  CHECK(ReadError("items: {a: 1}\n") == "t.yaml:1:8: items: the value is a map; expected a list of values");
}

TEST_CASE("yaml reader: every visited node counts, so an alias bomb stops") {
  std::string bomb = "x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i < 6; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    bomb += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p + ", " + p + ", " + p + "]\n";
  }
  auto root = yaml::Parse(bomb, "t.yaml", kTestFormat);
  REQUIRE(root.ok());
  yaml::Reader r("t.yaml", kTestFormat);
  auto entries = r.Entries(*root, "", {}, true);
  REQUIRE(entries.ok());
  Status last;
  for (const yaml::Entry& e : *entries) {
    auto items = r.Items(e);
    if (!items.ok()) {
      last = items.status();
      break;
    }
    for (const YAML::Node& item : *items) {
      if (!item.IsSequence()) continue;
      auto inner = r.Items(yaml::Entry{"i", "i", e.key_node, item});
      if (!inner.ok()) last = inner.status();
    }
    if (!last.ok()) break;
  }
  REQUIRE_FALSE(last.ok());
  CHECK(last.message().find("the test file has more than 50 values (alias bomb?)") != std::string::npos);
}

TEST_CASE("yaml reader: Child never inserts and never throws") {
  auto root = yaml::Parse("a: {b: 1}\n", "t.yaml", kTestFormat);
  REQUIRE(root.ok());
  CHECK(yaml::Child(yaml::Child(*root, "a"), "b").Scalar() == "1");
  CHECK(yaml::Child(*root, "zz").IsNull());
  CHECK(yaml::Child(yaml::Child(*root, "zz"), "b").IsNull());
  CHECK(root->size() == 1);
}

TEST_CASE("embedded texts: one registry holds every shipped model, catalogue and policy") {
  CHECK(EmbeddedNames(kRackModelText) ==
        std::vector<std::string>{"gb200-nvl36x2", "gb200-nvl72", "gb300-nvl72", "helios", "hgx-b200", "vr-nvl72"});
  CHECK(EmbeddedNames(kFailureCatalogueText) == std::vector<std::string>{"burn-in", "llama3"});
  CHECK(EmbeddedNames(kHealerPolicyText) == std::vector<std::string>{"aggressive", "conservative", "default"});
  const EmbeddedText* t = FindEmbedded(kHealerPolicyText, "default");
  REQUIRE(t != nullptr);
  CHECK(t->file == "healer/policies/default.yaml");
  CHECK(t->text.rfind("# ", 0) == 0);
  CHECK(t->text.data()[t->text.size()] == '\0');
  CHECK(FindEmbedded(kRackModelText, "default") == nullptr);
  for (const EmbeddedText& e : EmbeddedTexts()) CHECK_MESSAGE(!e.text.empty(), e.file);
}
