#include "runner/site/ssh_sources.h"

#include <cctype>
#include <cstdio>
#include <optional>
#include <map>
#include <set>

#include "core/strings.h"
#include "runner/site/observe/dcgmi_dmon.h"
#include "runner/site/observe/journal_reader.h"
#include "runner/site/observe/nvlink_status.h"
#include "runner/site/observe/nvsmi_query.h"
#include "runner/site/observe/redfish_sensors.h"
#include "runner/ssh/command_template.h"

namespace rackchaos::runner {
namespace {

using observe::Observed;
using observe::Problem;
using observe::Source;

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// coreutils' `timeout` exits 124 when it killed the command.
constexpr int kTimedOut = 124;

std::string Secs(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", d.Seconds());
  return buf;
}

// The program and rackchaos's own arguments, each one shell word.
std::string WithArgs(std::string program, const std::vector<std::string>& args) {
  for (const std::string& a : args) program += " " + ssh::ShellQuote(a);
  return program;
}

// A poll that did not run to a clean end: the transport's failure or the host's timeout. Empty when the
// command ended by itself (the tool's exit status is then the parser's to read).
std::optional<std::string> Unanswered(const ssh::CommandResult& r, Duration timeout) {
  if (!r.status.ok()) return "ssh: " + r.status.ToString();
  if (r.exit_status == kTimedOut) return "no answer within " + FormatDuration(timeout) + " (killed by timeout)";
  if (r.exit_status < 0) return "killed" + (r.exit_signal.empty() ? std::string() : " by SIG" + r.exit_signal);
  return std::nullopt;
}

// A GPU tool's answer (nvidia-smi prints its notices on stdout or stderr, and exits non-zero with them).
Observed GpuToolAnswer(const ssh::CommandResult& r, const observe::HostMap& map, Source source, Duration timeout,
                       Observed (*parse)(std::string_view, const observe::HostMap&)) {
  Observed out;
  if (auto why = Unanswered(r, timeout)) {
    out.Error(map.host, source, Problem::kUnavailable, map.node, *why);
    return out;
  }
  std::string text = r.out;
  if (r.exit_status != 0) text += "\n" + r.err;
  out = parse(text, map);
  if (r.exit_status != 0 && out.devices.empty() && out.observations.empty())
    out.Error(map.host, source, Problem::kToolError, map.node,
              "exited " + std::to_string(r.exit_status) + (r.err.empty() ? "" : ": " + FirstLine(r.err)));
  return out;
}

Observed NvsmiParse(std::string_view text, const observe::HostMap& map) { return observe::ParseNvidiaSmiQuery(text, map); }

// The program of a source: the site's template rendered for the host, or the tool's own name.
Result<std::string> Program(const CommandRenderer& render, const ObserveSpec& spec, const std::string& tool,
                            const std::string& host, const std::map<std::string, std::string>& values) {
  return render(spec.command.empty() ? tool : spec.command, host, values);
}

// The values a source's template may use on a tray host: {host}, {address}, the tray's, the site's vars.
std::map<std::string, std::string> TrayValues(const SourceContext& ctx, const observe::HostMap& map) {
  std::map<std::string, std::string> v;
  const InventoryHost& h = ctx.inv.hosts.at(map.host);
  for (const auto& [k, val] : h.vars) v[k] = val;
  for (const auto& [name, t] : ctx.inv.trays) {
    if (t.host != map.host) continue;
    v["tray"] = name;
    v["bmc"] = t.bmc;
    v["serial"] = t.serial;
    for (const auto& [k, val] : t.vars) v[k] = val;
    break;
  }
  v["host"] = map.host;
  v["address"] = h.spec.address;
  return v;
}

// Wraps a rendered command in the host's `timeout` (a hung tool must not hold its SSH slot forever).
std::string Bounded(const std::string& command, Duration timeout) {
  return "timeout -k 1 " + Secs(timeout) + " sh -c " + ssh::ShellQuote(command);
}

std::unique_ptr<ObservationSource> TraySource(const SourceContext& ctx, const std::string& name, Source source,
                                              const ObserveSpec& spec, const std::string& tool,
                                              const std::vector<std::string>& args,
                                              Observed (*parse)(std::string_view, const observe::HostMap&)) {
  std::vector<SshCommandSource::HostPoll> polls;
  for (const observe::HostMap& map : ctx.hosts) {
    SshCommandSource::HostPoll p;
    p.host = map.host;
    p.node = map.node;
    const Duration timeout = spec.timeout;
    // The context is the caller's temporary: the commands keep copies (the spec is the inventory's).
    p.command = [render = ctx.render, &spec, tool, args, host = map.host, values = TrayValues(ctx, map),
                 timeout]() -> Result<std::string> {
      RC_ASSIGN_OR_RETURN(std::string program, Program(render, spec, tool, host, values));
      return Bounded(WithArgs(program, args), timeout);
    };
    p.parse = [&map, source, timeout, parse](const ssh::CommandResult& r) {
      return GpuToolAnswer(r, map, source, timeout, parse);
    };
    polls.push_back(std::move(p));
  }
  return std::make_unique<SshCommandSource>(name, source, spec.period, spec.timeout, ctx.pool, ctx.clock, std::move(polls));
}

std::unique_ptr<ObservationSource> JournalSource(const SourceContext& ctx, const ObserveSpec& spec) {
  std::vector<SshCommandSource::HostPoll> polls;
  for (const observe::HostMap& map : ctx.hosts) {
    auto reader = std::make_shared<observe::JournalReader>(map.host, map.node);
    SshCommandSource::HostPoll p;
    p.host = map.host;
    p.node = map.node;
    const Duration timeout = spec.timeout;
    p.command = [render = ctx.render, &spec, reader, host = map.host, values = TrayValues(ctx, map),
                 timeout]() -> Result<std::string> {
      RC_ASSIGN_OR_RETURN(std::string program, Program(render, spec, "journalctl", host, values));
      return Bounded(WithArgs(program, reader->NextArgs()), timeout);
    };
    p.parse = [reader, host = map.host, node = map.node, timeout](const ssh::CommandResult& r) {
      if (auto why = Unanswered(r, timeout)) {
        // The reader keeps its position: the next poll asks from the same cursor.
        Observed out;
        out.Error(host, Source::kJournal, Problem::kUnavailable, node, *why + "; the next poll asks again from the same position");
        return out;
      }
      return r.exit_status == 0 ? reader->OnOutput(r.out) : reader->OnFailure(r.exit_status, r.err);
    };
    polls.push_back(std::move(p));
  }
  return std::make_unique<SshCommandSource>("journald", Source::kJournal, spec.period, spec.timeout, ctx.pool,
                                            ctx.clock, std::move(polls));
}

cluster::Metric MetricNamed(const std::string& name) {
  for (cluster::Metric m : {cluster::Metric::kGpuTemperature, cluster::Metric::kSwitchTemperature,
                            cluster::Metric::kCoolantFlow, cluster::Metric::kLeak, cluster::Metric::kPsuOk,
                            cluster::Metric::kPartOk})
    if (name == cluster::MetricName(m)) return m;
  return cluster::Metric::kGpuTemperature;  // the loader accepts only the names above
}

// One poll per distinct URL on the management host; the answer is the body, then the HTTP status on
// the last line (curl -w '\n%{http_code}').
std::unique_ptr<ObservationSource> BmcSource(const SourceContext& ctx, const ObserveSpec& spec) {
  std::map<std::string, std::vector<observe::RedfishPoint>> by_url;
  for (const RedfishPointSpec& p : spec.points)
    if (auto id = ctx.topo.Find(p.component)) by_url[p.url].push_back({p.url, *id, MetricNamed(p.metric)});
  const std::string tmpl =
      spec.command.empty() ? "curl -sS -k --max-time " + Secs(spec.timeout) + " -w '\\n%{{http_code}}' {url}" : spec.command;
  std::vector<SshCommandSource::HostPoll> polls;
  for (auto& [url, points] : by_url) {
    SshCommandSource::HostPoll p;
    p.host = spec.run_on;
    std::map<std::string, std::string> values;
    const InventoryHost& h = ctx.inv.hosts.at(spec.run_on);
    values["host"] = spec.run_on;
    values["address"] = h.spec.address;
    for (const auto& [k, v] : h.vars) values[k] = v;
    for (const char* blank : {"tray", "bmc", "serial"}) values[blank] = "";
    values["url"] = url;
    const Duration timeout = spec.timeout;
    p.command = [render = ctx.render, tmpl, host = spec.run_on, values, timeout]() -> Result<std::string> {
      RC_ASSIGN_OR_RETURN(std::string cmd, render(tmpl, host, values));
      return Bounded(cmd, timeout);
    };
    // For the parser, the points' URIs are the paths their bodies' @odata.id name.
    std::vector<observe::RedfishPoint> pts = points;
    for (observe::RedfishPoint& rp : pts) {
      const size_t scheme = rp.uri.find("://");
      const size_t path = scheme == std::string::npos ? 0 : rp.uri.find('/', scheme + 3);
      rp.uri = path == std::string::npos ? "/" : rp.uri.substr(path);
      if (const size_t q = rp.uri.find('?'); q != std::string::npos) rp.uri.resize(q);
    }
    p.parse = [host = spec.run_on, url, pts, timeout](const ssh::CommandResult& r) {
      Observed out;
      if (auto why = Unanswered(r, timeout)) {
        out.Error(host, Source::kRedfish, Problem::kUnavailable, kNoComponent, "GET " + url + ": " + *why);
        return out;
      }
      std::string_view text = TrimRight(r.out);
      const size_t nl = text.rfind('\n');
      const std::string_view last = Trim(nl == std::string_view::npos ? text : text.substr(nl + 1));
      int status = 0;
      for (char c : last) status = std::isdigit(static_cast<unsigned char>(c)) && status < 1000 ? status * 10 + (c - '0') : 1000;
      if (r.exit_status != 0 || last.size() != 3 || status >= 1000) {
        out.Error(host, Source::kRedfish, status == 0 || r.exit_status != 0 ? Problem::kUnavailable : Problem::kUnreadable,
                  kNoComponent,
                  "GET " + url + ": exited " + std::to_string(r.exit_status) +
                      (r.err.empty() ? "" : ": " + FirstLine(r.err)) + " (no HTTP status on the last line)");
        return out;
      }
      return observe::ParseRedfish(status, nl == std::string_view::npos ? std::string_view() : text.substr(0, nl), host, pts);
    };
    polls.push_back(std::move(p));
  }
  return std::make_unique<SshCommandSource>("redfish", Source::kRedfish, spec.period, spec.timeout, ctx.pool, ctx.clock,
                                            std::move(polls));
}

}  // namespace

SshCommandSource::SshCommandSource(std::string name, observe::Source source, Duration period, Duration timeout,
                                   ssh::SshPool& pool, Clock& clock, std::vector<HostPoll> polls)
    : name_(std::move(name)), source_(source), period_(period), timeout_(timeout), pool_(pool), clock_(clock) {
  for (HostPoll& p : polls) hosts_.push_back(std::make_unique<Host>(Host{std::move(p)}));
}

SshCommandSource::~SshCommandSource() { *alive_ = false; }

void SshCommandSource::Ask(Time now) {
  if (stopped_) return;
  for (auto& hp : hosts_) {
    Host& h = *hp;
    if (h.in_flight) {
      // Still waiting: one poll per host at most. Past the timeout (SSH itself hangs) it is reported once.
      if (!h.late_reported && now - h.asked_at > timeout_ + Duration::Seconds(2)) {
        h.late_reported = true;
        Observed out;
        out.Error(h.poll.host, source_, Problem::kUnavailable, h.poll.node,
                  "no answer within " + FormatDuration(timeout_) + "; not asked again until it answers");
        answers_.push_back(std::move(out));
      }
      continue;
    }
    auto cmd = h.poll.command();
    if (!cmd.ok()) {
      Observed out;
      out.Error(h.poll.host, source_, Problem::kToolError, h.poll.node, "command: " + cmd.status().message());
      answers_.push_back(std::move(out));
      continue;
    }
    h.in_flight = true;
    h.late_reported = false;
    h.asked_at = now;
    pool_.Run({h.poll.host}, *cmd, [this, alive = alive_, &h](ssh::CommandResult r) {
      if (!*alive) return;
      h.in_flight = false;
      if (stopped_) return;
      answers_.push_back(h.poll.parse(r));
    });
  }
}

std::vector<observe::Observed> SshCommandSource::Take() {
  std::vector<observe::Observed> out;
  out.swap(answers_);
  return out;
}

void SshCommandSource::Stop() {
  stopped_ = true;
  answers_.clear();
}

SourceList MakeSshSources(const SourceContext& ctx) {
  SourceList out;
  const auto& o = ctx.inv.observe;
  if (auto gpu = o.find("gpu"); gpu != o.end()) {
    if (gpu->second.tool == "dcgmi")
      out.push_back(TraySource(ctx, "dcgmi dmon", Source::kDcgmi, gpu->second, "dcgmi",
                               {"dmon", "-e", "150,155,160,100,113,112,230", "-c", "1"}, observe::ParseDcgmiDmon));
    else
      out.push_back(TraySource(ctx, "nvidia-smi", Source::kNvidiaSmi, gpu->second, "nvidia-smi",
                               {"--query-gpu=" + std::string(observe::kNvsmiQueryFields), "--format=csv,noheader,nounits"},
                               NvsmiParse));
  }
  if (auto nvlink = o.find("nvlink"); nvlink != o.end())
    out.push_back(TraySource(ctx, "nvidia-smi nvlink", Source::kNvlink, nvlink->second, "nvidia-smi", {"nvlink", "-s"},
                             observe::ParseNvlinkStatus));
  if (auto journal = o.find("kernel_log"); journal != o.end()) out.push_back(JournalSource(ctx, journal->second));
  if (auto bmc = o.find("bmc"); bmc != o.end()) out.push_back(BmcSource(ctx, bmc->second));
  return out;
}

}  // namespace rackchaos::runner
