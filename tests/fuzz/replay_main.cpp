// Replays saved inputs through the fuzz targets without libFuzzer: `fuzz_replay TARGET PATH...` calls the
// target's LLVMFuzzerTestOneInput once per file (a directory stands for its regular files, in name order).
// This is how the default test run (label unit, in the normal build and under ASan+UBSan in build-asan)
// keeps every seed-corpus file and every saved crash input passing, with GCC and no clang build.
//
// Each tests/fuzz/fuzz_<target>.cpp is compiled into this one program with LLVMFuzzerTestOneInput renamed
// to RackchaosFuzz_<target> (tests/fuzz/CMakeLists.txt), and fuzz_targets.inc, generated there, lists them.
// A target's contract violation is std::abort() or a sanitizer report, so a failing input fails the test;
// the input's path is printed before it runs, so the log names it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define RACKCHAOS_FUZZ_TARGET(name) extern "C" int RackchaosFuzz_##name(const uint8_t* data, size_t size);
#include "fuzz_targets.inc"
#undef RACKCHAOS_FUZZ_TARGET

namespace {

namespace fs = std::filesystem;
using FuzzFn = int (*)(const uint8_t*, size_t);

struct Target {
  const char* name;
  FuzzFn fn;
};

const Target kTargets[] = {
#define RACKCHAOS_FUZZ_TARGET(name) {#name, &RackchaosFuzz_##name},
#include "fuzz_targets.inc"
#undef RACKCHAOS_FUZZ_TARGET
};

// The files a command-line path stands for; false (with a message) when it is neither a file nor a directory,
// so a mistyped corpus path fails instead of replaying nothing.
bool Collect(const fs::path& path, std::vector<fs::path>& files) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
    return true;
  }
  if (!fs::is_directory(path, ec)) {
    std::fprintf(stderr, "fuzz_replay: %s: no such file or directory\n", path.c_str());
    return false;
  }
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.is_regular_file(ec)) found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  files.insert(files.end(), found.begin(), found.end());
  return !ec;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET FILE_OR_DIR...\ntargets:");
    for (const Target& t : kTargets) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  const Target* target = nullptr;
  for (const Target& t : kTargets)
    if (std::strcmp(t.name, argv[1]) == 0) target = &t;
  if (target == nullptr) {
    std::fprintf(stderr, "fuzz_replay: unknown target '%s'\n", argv[1]);
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i)
    if (!Collect(argv[i], files)) return 2;
  // A replay of nothing would pass whatever the target does.
  if (files.empty()) {
    std::fprintf(stderr, "fuzz_replay: no input files for %s\n", target->name);
    return 2;
  }
  for (const fs::path& file : files) {
    std::printf("%s: %s\n", target->name, file.c_str());
    std::fflush(stdout);
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "fuzz_replay: cannot read %s\n", file.c_str());
      return 2;
    }
    // libFuzzer never passes a null pointer; a copy in its own allocation lets ASan catch reads past the end.
    std::vector<uint8_t> data(bytes.begin(), bytes.end());
    target->fn(data.data(), data.size());
  }
  std::printf("%s: %zu inputs replayed\n", target->name, files.size());
  return 0;
}
