#include "core/huge_pages.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

namespace rackchaos {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string("=") + v : "-";
}

// The executed program (its marker set) puts GLIBC_TUNABLES back as given and drops the marker: the
// programs it starts see the user's environment. It never executes anything again.
TEST_CASE("the executed program puts GLIBC_TUNABLES back as it was given") {
  const std::string keep_tunables = Env("GLIBC_TUNABLES");
  char* argv[] = {nullptr};
  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
  setenv("RACKCHAOS_GIVEN_GLIBC_TUNABLES", "=glibc.malloc.tcache_count=7", 1);
  UseHugePagesForHeap(argv);
  CHECK(Env("GLIBC_TUNABLES") == "=glibc.malloc.tcache_count=7");
  CHECK(Env("RACKCHAOS_GIVEN_GLIBC_TUNABLES") == "-");
  CHECK(HeapOnHugePages());  // what `run -v` logs (cli:huge-pages-on)

  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
  setenv("RACKCHAOS_GIVEN_GLIBC_TUNABLES", "-", 1);
  UseHugePagesForHeap(argv);
  CHECK(Env("GLIBC_TUNABLES") == "-");
  CHECK(Env("RACKCHAOS_GIVEN_GLIBC_TUNABLES") == "-");
  if (keep_tunables != "-") setenv("GLIBC_TUNABLES", keep_tunables.c_str() + 1, 1);
}

// Turned off, or already asked for: it returns (an exec would end this test) and changes nothing.
TEST_CASE("RACKCHAOS_HUGE_PAGES=0 or a tunable already given: no exec, the environment unchanged") {
  const std::string keep_tunables = Env("GLIBC_TUNABLES");
  char* argv[] = {nullptr};
  setenv("RACKCHAOS_HUGE_PAGES", "0", 1);
  UseHugePagesForHeap(argv);
  CHECK(Env("GLIBC_TUNABLES") == keep_tunables);
  CHECK(Env("RACKCHAOS_GIVEN_GLIBC_TUNABLES") == "-");
  unsetenv("RACKCHAOS_HUGE_PAGES");

  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0", 1);
  // A value that is neither 0 nor 1 is said to be ignored (it would be on); here the tunable given stops it.
  for (const char* v : {"yes", "01", "1 ", "on\tplease"}) {
    setenv("RACKCHAOS_HUGE_PAGES", v, 1);
    UseHugePagesForHeap(argv);
    CHECK(Env("GLIBC_TUNABLES") == "=glibc.malloc.hugetlb=0");
    CHECK(Env("RACKCHAOS_GIVEN_GLIBC_TUNABLES") == "-");
  }
  unsetenv("RACKCHAOS_HUGE_PAGES");
  UseHugePagesForHeap(argv);
  CHECK(Env("GLIBC_TUNABLES") == "=glibc.malloc.hugetlb=0");
  CHECK(Env("RACKCHAOS_GIVEN_GLIBC_TUNABLES") == "-");
  if (keep_tunables != "-") setenv("GLIBC_TUNABLES", keep_tunables.c_str() + 1, 1);
  else unsetenv("GLIBC_TUNABLES");
}

}  // namespace
}  // namespace rackchaos
