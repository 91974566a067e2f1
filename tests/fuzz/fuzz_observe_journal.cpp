// libFuzzer target: any bytes as journalctl -o export and -o json output, through the entry parsers
// and a reader in each of its states. Never a crash; a reader never reports more lines than entries.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "runner/site/observe/journal_entries.h"
#include "runner/site/observe/journal_reader.h"
#include "tests/fuzz/fuzz_observe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace ob = rackchaos::observe;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto format : {ob::JournalFormat::kExport, ob::JournalFormat::kJson}) {
    ob::JournalParse parsed = format == ob::JournalFormat::kExport ? ob::ParseJournalExport(text) : ob::ParseJournalJson(text);
    ob::JournalReader r("tray07", 7, format);
    (void)r.OnOutput("");  // an empty journal first: the next answer is read in full
    ob::fuzz::CheckErrors(r.OnOutput(text));
    if (r.lines_read() > static_cast<int64_t>(parsed.entries.size())) std::abort();
    ob::fuzz::CheckErrors(r.OnOutput(text));  // as a --cursor answer
    ob::fuzz::CheckErrors(r.OnFailure(1, text));
    ob::fuzz::CheckErrors(r.OnOutput(text));  // as a --since answer
  }
  return 0;
}
