// The `observe:` sources that run a tool on real hosts over SSH (docs/real-mode.md):
//   gpu         nvidia-smi --query-gpu=<observe::kNvsmiQueryFields> --format=csv,noheader,nounits, or
//               dcgmi dmon -e 150,155,160,100,113,112,230 -c 1, on every tray host
//   nvlink      nvidia-smi nvlink -s on every tray host
//   kernel_log  journalctl _TRANSPORT=kernel -o export ... with a cursor per host (observe::JournalReader)
//   bmc         one GET per distinct Redfish URL, run on observe.bmc.run_on
// The site may replace the program (observe.<source>.command); rackchaos appends its own arguments and
// parses the output itself (runner/site/observe).
//
// SshCommandSource polls asynchronously through SshPool::Run, at most one poll per host in flight: a
// host that does not answer holds up only itself. Each command runs under the host's `timeout` for the
// source's timeout; a poll past it (or one the host or SSH failed) arrives as a kUnavailable observation
// error naming the host and the source, and the host is asked again on a later period.
//
// Threading: the run's thread; the pool's callbacks run there too (it shares the run's io_context).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runner/site/observation_sources.h"
#include "runner/ssh/command_result.h"

namespace rackchaos::runner {

class SshCommandSource : public ObservationSource {
 public:
  // What the source does on one host: the command of the next poll, and what an answer says.
  struct HostPoll {
    std::string host;      // the inventory host it runs on
    ComponentId node = kNoComponent;  // the tray errors name (kNoComponent for the management host)
    std::function<Result<std::string>()> command;
    std::function<observe::Observed(const ssh::CommandResult&)> parse;
  };

  SshCommandSource(std::string name, observe::Source source, Duration period, Duration timeout, ssh::SshPool& pool,
                   Clock& clock, std::vector<HostPoll> polls);
  ~SshCommandSource() override;

  std::string Name() const override { return name_; }
  Duration Period() const override { return period_; }
  void Ask(Time now) override;
  std::vector<observe::Observed> Take() override;
  void Stop() override;

 private:
  struct Host {
    HostPoll poll;
    bool in_flight = false;
    bool late_reported = false;  // the poll in flight was already reported as timed out
    Time asked_at{};
  };

  std::string name_;
  observe::Source source_;
  Duration period_, timeout_;
  ssh::SshPool& pool_;
  Clock& clock_;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<observe::Observed> answers_;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// The SSH sources `ctx.inv.observe` configures (none when it has no `observe:` section).
SourceList MakeSshSources(const SourceContext& ctx);

}  // namespace rackchaos::runner
