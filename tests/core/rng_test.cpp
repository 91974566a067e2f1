#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/rng.h"

using namespace rackchaos;

TEST_CASE("same seed gives the same stream, a different seed another") {
  Rng a(42), b(42), c(43);
  std::vector<uint64_t> va, vb, vc;
  for (int i = 0; i < 100; ++i) { va.push_back(a.Next()); vb.push_back(b.Next()); vc.push_back(c.Next()); }
  CHECK(va == vb);
  CHECK(va != vc);
}

TEST_CASE("the stream is pinned: a change of generator would change every report") {
  // These values were produced by this generator; if they change, seeds no longer replay old runs.
  // xoshiro256** seeded through splitmix64 from seed 1.
  Rng r(1);
  CHECK(r.Next() == 12966619160104079557ULL);
  CHECK(r.Next() == 9600361134598540522ULL);
}

TEST_CASE("forks are independent of position and of each other") {
  Rng a(7);
  Rng fa = a.Fork("chaos.gpu");
  a.Next();
  a.Next();
  Rng fb = a.Fork("chaos.gpu");
  CHECK(fa.Next() == fb.Next());
  CHECK(a.Fork("x").Next() != a.Fork("y").Next());
}

TEST_CASE("distributions have the right means") {
  Rng r(3);
  const int n = 200000;
  double su = 0, se = 0, sn = 0, sn2 = 0, sw = 0;
  for (int i = 0; i < n; ++i) {
    su += r.Uniform();
    se += r.Exponential(2.0);
    double x = r.Normal(5, 2);
    sn += x;
    sn2 += x * x;
    sw += r.Weibull(1.0, 3.0);  // shape 1 = exponential with mean 3
  }
  CHECK(su / n == doctest::Approx(0.5).epsilon(0.01));
  CHECK(se / n == doctest::Approx(0.5).epsilon(0.02));
  CHECK(sn / n == doctest::Approx(5).epsilon(0.01));
  CHECK(std::sqrt(sn2 / n - (sn / n) * (sn / n)) == doctest::Approx(2).epsilon(0.02));
  CHECK(sw / n == doctest::Approx(3).epsilon(0.02));
}

TEST_CASE("Below stays in range and covers it") {
  Rng r(9);
  std::vector<int> seen(7, 0);
  for (int i = 0; i < 7000; ++i) {
    uint64_t v = r.Below(7);
    REQUIRE(v < 7);
    ++seen[v];
  }
  for (int s : seen) CHECK(s > 800);
}
