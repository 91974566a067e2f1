#include <doctest/doctest.h>

#include "core/units.h"

using namespace rackchaos;

TEST_CASE("durations parse with units and sums") {
  CHECK(ParseDuration("90s")->us == 90'000'000);
  CHECK(ParseDuration("5m").value() == Duration::Minutes(5));
  CHECK(ParseDuration("2h").value() == Duration::Hours(2));
  CHECK(ParseDuration("30d").value() == Duration::Hours(720));
  CHECK(ParseDuration("1h30m").value() == Duration::Minutes(90));
  CHECK(ParseDuration("250ms").value() == Duration::Millis(250));
  CHECK(ParseDuration("1.5s").value() == Duration::Millis(1500));
  CHECK(ParseDuration(" 10s ").value() == Duration::Seconds(10));
}

TEST_CASE("bad durations say which units are accepted") {
  for (const char* bad : {"5 parsecs", "5", "", "abc", "-5s", "5x", "1e400s"}) {
    auto r = ParseDuration(bad);
    CAPTURE(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
  }
  CHECK(ParseDuration("5 parsecs").status().message().find("ms, s, m, h, d") != std::string::npos);
  CHECK(ParseDuration("1000000000d").status().message().find("too long") != std::string::npos);
}

TEST_CASE("durations format exactly and round-trip") {
  CHECK(FormatDuration(Duration{}) == "0s");
  CHECK(FormatDuration(Duration::Seconds(150)) == "2m30s");
  CHECK(FormatDuration(Duration::Millis(1500)) == "1.5s");
  CHECK(FormatDuration(Duration::Millis(250)) == "250ms");
  CHECK(FormatDuration(Duration::Hours(27)) == "1d3h");
  for (int64_t us : {1LL, 999LL, 1234567LL, 3600000001LL, 86400000000LL * 3 + 7}) {
    CAPTURE(us);
    CHECK(ParseDuration(FormatDuration(Duration{us})).value() == Duration{us});
  }
}

TEST_CASE("watts and fractions") {
  CHECK(ParseWatts("600W").value() == doctest::Approx(600));
  CHECK(ParseWatts("1.2kW").value() == doctest::Approx(1200));
  CHECK_FALSE(ParseWatts("600").ok());
  CHECK(ParseFraction("15%").value() == doctest::Approx(0.15));
  CHECK(ParseFraction("0.25").value() == doctest::Approx(0.25));
  CHECK_FALSE(ParseFraction("150%").ok());
  CHECK_FALSE(ParseFraction("x").ok());
}

TEST_CASE("FromSecondsF rounds and clamps") {
  CHECK(Duration::FromSecondsF(1.0000004).us == 1000000);
  CHECK(Duration::FromSecondsF(-3).us == 0);
  CHECK(Duration::FromSecondsF(1e300) == Duration::Max());
}
