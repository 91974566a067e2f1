// serve_fleet_db OUT.db RUNS [hostile]: writes the serve tests' fleet database (tests/serve/serve_fixture.h)
// for the tests that drive serve from outside (Chromium, the crawler).
// The fixture shares tests/reports/test_util.h, which includes doctest: its implementation, unused, links here.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/serve/serve_fixture.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: serve_fleet_db OUT.db RUNS [hostile]\n");
    return 2;
  }
  try {
    rackchaos::serve::testing::WriteFleet(argv[1], std::atoi(argv[2]), argc > 3 && std::string(argv[3]) == "hostile");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "serve_fleet_db: %s\n", e.what());
    return 1;
  }
  return 0;
}
