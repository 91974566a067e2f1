#include "runner/site/prometheus_source.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <variant>

#include "core/strings.h"
#include "runner/site/host_maps.h"

namespace rackchaos::runner {
namespace {

bool Provides(const PrometheusConfig& c, std::string_view what) {
  return std::find(c.provides.begin(), c.provides.end(), what) != c.provides.end();
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A service's error body in one short line, for a message.
std::string Excerpt(const std::string& body) {
  std::string s = body.substr(0, 200);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < ' ' || c == 0x7f) c = ' ';
  return s + (body.size() > 200 ? "..." : "");
}

std::chrono::milliseconds Ms(Duration d) { return std::chrono::milliseconds(std::max<int64_t>(1, d.us / 1000)); }

}  // namespace

std::string PrometheusQueryText(const PrometheusConfig& c) {
  std::vector<std::string> names;
  if (Provides(c, "gpu_telemetry")) {
    for (const char* n : {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK",
                          "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"})
      names.emplace_back(n);
    if (c.max_sm_clock_mhz == 0) names.emplace_back("DCGM_FI_DEV_MAX_SM_CLOCK");
  }
  if (Provides(c, "xid")) names.emplace_back("DCGM_FI_DEV_XID_ERRORS");
  if (Provides(c, "nic_links")) names.emplace_back("node_network_carrier");
  names.emplace_back("up");
  // Whole seconds: Prometheus' range selector takes a duration with units.
  const int64_t window_s = std::max<int64_t>(1, (c.max_age.us * 2 + 999999) / 1000000);
  return "{__name__=~\"" + Join(names, "|") + "\"}[" + std::to_string(window_s) + "s]";
}

PrometheusSource::PrometheusSource(PrometheusConfig config, std::vector<observe::HostMap> hosts)
    : config_(std::move(config)), hosts_(std::move(hosts)), query_(PrometheusQueryText(config_)) {
  auto url = ParseHttpUrl(config_.url);
  url_ = url.ok() ? *url : HttpUrl{};  // the loader checked it; a bad one fails at connect, as an error
  if (!url.ok()) url_.host = "invalid.invalid";
  base_.server = config_.url;
  base_.max_age_s = config_.max_age.Seconds();
  const bool gpu = Provides(config_, "gpu_telemetry");
  base_.expect = {gpu, gpu, gpu, gpu, Provides(config_, "xid"), gpu && config_.max_sm_clock_mhz == 0};
  HttpClientOptions o;
  o.server = url_;
  o.connect_timeout = Ms(config_.connect_timeout);
  o.timeout = Ms(config_.timeout);
  client_ = std::make_unique<HttpClient>(o);
}

PrometheusSource::~PrometheusSource() { Stop(); }

std::string PrometheusSource::Name() const { return "prometheus " + config_.url; }

void PrometheusSource::Ask(Time) {
  {
    std::lock_guard lock(mu_);
    if (in_flight_ || stopped_) return;
    in_flight_ = true;
  }
  const double now_s = UnixNow();
  char when[32];
  std::snprintf(when, sizeof when, "%.3f", now_s);
  std::string target = "/api/v1/query?query=" + UrlEncode(query_) + "&time=" + when;
  client_->Get(std::move(target), [this, now_s](HttpAnswer answer) {
    Costs costs;
    observe::Observed o = Interpret(std::move(answer), now_s, costs);
    std::lock_guard lock(mu_);
    in_flight_ = false;
    if (stopped_) return;
    costs.answers = costs_.answers + 1;
    costs_ = costs;
    arrived_.push_back(std::move(o));
  });
}

std::vector<observe::Observed> PrometheusSource::Take() {
  std::lock_guard lock(mu_);
  std::vector<observe::Observed> out;
  out.swap(arrived_);
  return out;
}

void PrometheusSource::Stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  if (client_) client_->Stop();
}

PrometheusSource::Costs PrometheusSource::costs() const {
  std::lock_guard lock(mu_);
  return costs_;
}

observe::Observed PrometheusSource::Interpret(HttpAnswer a, double now_s, Costs& costs) const {
  const double cpu0 = ThreadCpuSeconds();
  costs.http_s = a.seconds;
  costs.bytes = a.body.size();
  observe::Observed out;
  auto site = [&](observe::Problem p, std::string what) {
    out.Error(config_.url, observe::Source::kPrometheus, p, kNoComponent, std::move(what));
  };
  if (a.outcome != HttpAnswer::Outcome::kAnswered) {
    site(observe::Problem::kUnavailable, std::string(OutcomeName(a.outcome)) + ": " + a.error);
  } else if (a.code >= 500) {
    site(observe::Problem::kUnavailable, "HTTP " + std::to_string(a.code) + ": " + Excerpt(a.body));
  } else if (a.code == 200 || a.code == 400 || a.code == 422) {
    // 400 and 422 carry Prometheus' {"status": "error", ...} body, which the parser reports.
    observe::PromQuery q = base_;
    q.now_s = now_s;
    out = observe::ParsePrometheusQuery(a.body, hosts_, q);
    if (a.code == 200 && Provides(config_, "nic_links")) AddMissingNics(out);
  } else {
    site(observe::Problem::kToolError, "HTTP " + std::to_string(a.code) + ": " + Excerpt(a.body));
  }
  costs.parse_cpu_s = ThreadCpuSeconds() - cpu0;
  return out;
}

// The parser reports the carrier of the NICs it has series for; one with none is missing data too.
void PrometheusSource::AddMissingNics(observe::Observed& out) const {
  for (const observe::ObservationError& e : out.errors)
    if (e.component == kNoComponent && (e.problem == observe::Problem::kUnreadable || e.problem == observe::Problem::kToolError))
      return;  // the whole answer is unusable: said once already
  std::set<ComponentId> seen;
  for (const cluster::ObservationBody& body : out.observations)
    if (const auto* link = std::get_if<cluster::LinkStateChange>(&body)) seen.insert(link->component);
  for (const observe::ObservationError& e : out.errors) seen.insert(e.component);
  for (const observe::HostMap& h : hosts_)
    for (const observe::NicAddress& n : h.nics)
      if (!seen.count(n.nic))
        out.Error(h.host, observe::Source::kPrometheus, observe::Problem::kMissing, n.nic,
                  "node_network_carrier of " + n.device + ": no series");
}

std::unique_ptr<ObservationSource> MakePrometheusSource(const Inventory& inventory, const cluster::Topology& topology) {
  if (!inventory.prometheus) return nullptr;
  const PrometheusConfig& c = *inventory.prometheus;
  std::vector<observe::HostMap> hosts = BuildHostMaps(inventory, topology);
  for (observe::HostMap& h : hosts)
    for (observe::GpuAddress& g : h.gpus) g.max_sm_mhz = c.max_sm_clock_mhz;
  return std::make_unique<PrometheusSource>(c, std::move(hosts));
}

}  // namespace rackchaos::runner
