#include "core/huge_pages.h"

#include <gnu/libc-version.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace rackchaos {
namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb";
// Set only for the executed program: "=" followed by GLIBC_TUNABLES as it was given, or "-" when unset.
constexpr const char* kGiven = "RACKCHAOS_GIVEN_GLIBC_TUNABLES";

constexpr bool kSanitizerAllocator =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#else
    false;
#endif

bool GlibcHasTunable() {  // glibc.malloc.hugetlb came with 2.35
  int major = 0, minor = 0;
  return std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 && (major > 2 || (major == 2 && minor >= 35));
}

bool KernelHasHugePages() {  // "always [madvise] never": anything but never
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  const std::string modes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return !modes.empty() && modes.find("[never]") == std::string::npos;
}

bool UnderValgrind() {  // valgrind preloads its vgpreload_*.so into the program
  const char* preload = std::getenv("LD_PRELOAD");
  return preload && std::string(preload).find("vgpreload") != std::string::npos;
}

bool executed = false;

}  // namespace

bool HeapOnHugePages() { return executed; }

void UseHugePagesForHeap(char** argv) {
  if (const char* given = std::getenv(kGiven)) {  // the executed program: the environment as given
    const std::string was = given;
    if (was.starts_with("=")) setenv("GLIBC_TUNABLES", was.c_str() + 1, 1);
    else unsetenv("GLIBC_TUNABLES");
    unsetenv(kGiven);
    executed = true;
    return;
  }
  const char* opt = std::getenv("RACKCHAOS_HUGE_PAGES");
  std::string want = opt ? opt : "";
  if (want == "0") return;
  if (!want.empty() && want != "1") {
    if (want.size() > 40) want = want.substr(0, 40) + "...";
    for (char& c : want) c = c < 0x20 || c == 0x7f ? '?' : c;  // an environment can hold anything
    std::fprintf(stderr, "rackchaos: RACKCHAOS_HUGE_PAGES='%s' ignored: 0 turns huge pages for the heap off, 1 or unset leaves them on\n",
                 want.c_str());
  }
  if (kSanitizerAllocator || UnderValgrind() || !GlibcHasTunable() ||
      !KernelHasHugePages())
    return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string was = tunables ? tunables : "";
  if (was.find(kTunable) != std::string::npos) return;
  setenv(kGiven, tunables ? ("=" + was).c_str() : "-", 1);
  setenv("GLIBC_TUNABLES", ((was.empty() ? "" : was + ":") + kTunable + "=1").c_str(), 1);
  execv("/proc/self/exe", argv);
  // The exec failed (no /proc, say): go on with the heap as it is and the environment as given.
  if (tunables) setenv("GLIBC_TUNABLES", was.c_str(), 1);
  else unsetenv("GLIBC_TUNABLES");
  unsetenv(kGiven);
}

}  // namespace rackchaos
