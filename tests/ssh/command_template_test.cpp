// Unit tests for shell-quoted command templates; the injection cases run through a real /bin/sh.
#include "runner/ssh/command_template.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace rackchaos::ssh {
namespace {

// Runs `command` with /bin/sh -c and returns its stdout.
std::string Sh(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST_CASE("ShellQuote wraps in single quotes and escapes embedded quotes") {
  CHECK(ShellQuote("eth0") == "'eth0'");
  CHECK(ShellQuote("") == "''");
  CHECK(ShellQuote("it's") == "'it'\\''s'");
  CHECK(ShellQuote("'") == "''\\'''");
  CHECK(ShellQuote("a b$c`d\"e\\f*") == "'a b$c`d\"e\\f*'");
}

TEST_CASE("RenderTemplate substitutes quoted values") {
  auto r = RenderTemplate("ip link set dev {if} down", {{"if", "eth0"}});
  REQUIRE(r.ok());
  CHECK(*r == "ip link set dev 'eth0' down");

  r = RenderTemplate("nvidia-smi -i {gpu} -pl {W} && nv set interface acp{N}",
                     {{"gpu", "3"}, {"W", "600"}, {"N", "7"}, {"unused", "x"}});
  REQUIRE(r.ok());
  CHECK(*r == "nvidia-smi -i '3' -pl '600' && nv set interface acp'7'");

  r = RenderTemplate("curl -d '{{\"LinkState\":\"{state}\"}}' x", {{"state", "Disabled"}});
  REQUIRE(r.ok());
  CHECK(*r == "curl -d '{\"LinkState\":\"'Disabled'\"}' x");

  r = RenderTemplate("{a.b-c_1}{x}", {{"a.b-c_1", ""}, {"x", "y"}});
  REQUIRE(r.ok());
  CHECK(*r == "'''y'");
}

TEST_CASE("RenderTemplate reports template errors with the placeholder and column") {
  auto missing = RenderTemplate("ip link set dev {if} {state}", {{"if", "eth0"}});
  CHECK(missing.status().code() == StatusCode::kInvalidArgument);
  CHECK(missing.status().message().find("no value for placeholder {state}") != std::string::npos);
  CHECK(missing.status().message().find("column 22") != std::string::npos);

  auto open = RenderTemplate("echo {if", {{"if", "x"}});
  CHECK(open.status().message().find("unbalanced '{'") != std::string::npos);
  auto close = RenderTemplate("echo if}", {});
  CHECK(close.status().message().find("unbalanced '}'") != std::string::npos);
  auto empty = RenderTemplate("echo {}", {});
  CHECK(empty.status().message().find("empty placeholder") != std::string::npos);
  auto json = RenderTemplate("echo {\"a\":1}", {});
  CHECK(json.status().message().find("write {{ and }}") != std::string::npos);
  auto nested = RenderTemplate("echo {a{b}}", {{"a", "x"}, {"b", "y"}});
  CHECK_FALSE(nested.ok());
}

TEST_CASE("ValidateTemplateValue refuses NUL, newline and carriage return") {
  CHECK(ValidateTemplateValue("if", "eth0; rm -rf /").ok());
  const Status nl = ValidateTemplateValue("if", "eth0\nreboot");
  CHECK(nl.code() == StatusCode::kInvalidArgument);
  CHECK(nl.message().find("{if} contains a newline at offset 4") != std::string::npos);
  CHECK_FALSE(ValidateTemplateValue("if", std::string("a\0b", 3)).ok());
  CHECK_FALSE(ValidateTemplateValue("if", "a\rb").ok());
  auto rendered = RenderTemplate("echo {if}", {{"if", "eth0\nreboot"}});
  CHECK(rendered.status().message().find("newline") != std::string::npos);
}

TEST_CASE("rendered values reach /bin/sh as one literal word") {
  char tmpl[] = "/tmp/rackchaos-template-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string marker = dir + "/pwned";
  const std::string evils[] = {
      "eth0; touch " + marker,
      "$(touch " + marker + ")",
      "`touch " + marker + "`",
      "'; touch " + marker + "; echo '",
      "\"; touch " + marker + "; echo \"",
      "eth0 && touch " + marker + " || touch " + marker,
      "eth0 | tee " + marker,
      "> " + marker,
      "\\'; touch " + marker + " #",
      "*",
      "${IFS}x$((1+1))",
      "",
  };
  for (const std::string& evil : evils) {
    CAPTURE(evil);
    auto cmd = RenderTemplate("cd " + dir + " && printf '[%s]' {v} && printf '%s' \"$#\" {v} {v}",
                              {{"v", evil}});
    REQUIRE(cmd.ok());
    CHECK(Sh(*cmd) == "[" + evil + "]" + "0" + evil + evil);
    CHECK_FALSE(std::filesystem::exists(marker));
  }
  // Control: spliced without quoting, the first value does create the marker.
  Sh("echo eth0; touch " + marker);
  CHECK(std::filesystem::exists(marker));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rackchaos::ssh
