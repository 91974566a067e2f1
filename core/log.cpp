#include "core/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <atomic>

namespace rackchaos {
namespace {

// Per thread: a sweep runs several simulated runs at once, each with its own clock.
thread_local const Clock* g_clock = nullptr;

class RunTimeFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    const Clock* clock = g_clock;
    std::string text = clock ? FormatDuration(clock->Now()) : "-";
    if (text.size() < 10) text.insert(0, 10 - text.size(), ' ');
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<RunTimeFlag>(); }
};

}  // namespace

void InitLogging(spdlog::level::level_enum level) {
  static bool installed = false;
  if (!installed) {
    auto logger = spdlog::stderr_color_mt("rackchaos");
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<RunTimeFlag>('*').set_pattern("[%*] %^%-5l%$ %v");
    logger->set_formatter(std::move(formatter));
    spdlog::set_default_logger(logger);
    installed = true;
  }
  spdlog::set_level(level);
}

void SetLogClock(const Clock* clock) { g_clock = clock; }
const Clock* LogClock() { return g_clock; }

}  // namespace rackchaos
