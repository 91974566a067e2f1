// Site inventories: the shipped examples load, mistakes name file:line:col, and target values reach a
// command only as quoted words.
#include "runner/site/inventory.h"

#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster/catalogue.h"
#include "runner/plan/plan_loader.h"
#include "runner/cli/real_run.h"
#include "injectors/real_actions.h"
#include "runner/ssh/command_template.h"
#include "runner/site/ssh_backend.h"
#include "runner/site/host_maps.h"
#include "healer/xid.h"
#include "tests/real/gb200.h"

namespace rackchaos::runner {
namespace {

using testing::Gb200;

cluster::Target T(const cluster::Topology& topo, const std::string& name) {
  auto t = topo.ResolveTarget(name);
  REQUIRE(t.ok());
  return *t;
}

const char* kSmall = R"(site: t
model: gb200-nvl72
defaults: {user: root, identity_file: /k}
hosts:
  - {name: h1, address: 10.0.0.1}
trays:
  r01.tray01: {host: h1, gpus: [0, 1, 2, 3], nics: [eth0, "e;touch${IFS}x", "it's"]}
injectors:
  link_down:
    apply: ip link set dev {iface} down
    revert: ip link set dev {iface} up
  gpu_throttle:
    baseline: nvidia-smi -i {gpu} --query-gpu=power.limit --format=csv,noheader,nounits
    apply: nvidia-smi -i {gpu} -pl {watts}
    revert: nvidia-smi -i {gpu} -pl {baseline}
)";

std::string Error(const std::string& text) {
  auto inv = ParseInventory(text, "site.yaml");
  REQUIRE_FALSE(inv.ok());
  return inv.status().message();
}

void Replace(std::string& s, const std::string& from, const std::string& to) {
  size_t p = s.find(from);
  REQUIRE(p != std::string::npos);
  s.replace(p, from.size(), to);
}

TEST_CASE("inventory: the shipped GB200 example loads with the documented commands") {
  auto inv = LoadInventory(std::string(RACKCHAOS_SOURCE_DIR) + "/sites/gb200-example.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  CHECK(inv->model == "gb200-nvl72");
  CHECK(inv->hosts.size() == 5);
  CHECK(inv->trays.size() == 4);
  CHECK(inv->actions.at("link_down").apply == "ip link set dev {iface} down");
  CHECK(inv->actions.at("gpu_throttle").revert == "nvidia-smi -i {gpu} -pl {baseline}");
  CHECK(inv->actions.at("tray_pull").run_on == "mgmt01");
  CHECK_FALSE(inv->actions.count("nvlink_down"));
  // Relative and ~ paths are resolved; known_hosts is strict by default (a file, not "accept").
  CHECK(inv->hosts.at("gb200-r01-t01").spec.identity_file.find("/.ssh/rackchaos_ed25519") != std::string::npos);
}

// Template rendering only: no Kubernetes runs here, so whether a cluster accepts these commands is untested.
TEST_CASE("inventory: the Kubernetes example renders kubectl cordon, drain and uncordon for a tray") {
  auto inv = LoadInventory(std::string(RACKCHAOS_SOURCE_DIR) + "/sites/k8s-example.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  cluster::Topology topo = Gb200();
  auto drain = BindTarget(*inv, topo, "drain", T(topo, "r01.tray02"));
  REQUIRE_MESSAGE(drain.ok(), drain.status().ToString());
  CHECK(drain->host == "k8s-admin");
  drain->values["reason"] = "rackchaos: r01.tray02.gpu1: Xid 79 (GPU has fallen off the bus)";
  auto cmd = ssh::RenderTemplate(inv->actions.at("drain").apply, drain->values);
  REQUIRE(cmd.ok());
  CHECK(*cmd ==
        "kubectl cordon 'gb200-r01-t02' && kubectl annotate --overwrite node 'gb200-r01-t02' "
        "rackchaos.io/reason='rackchaos: r01.tray02.gpu1: Xid 79 (GPU has fallen off the bus)' && kubectl drain "
        "'gb200-r01-t02' --ignore-daemonsets --delete-emptydir-data --timeout=300s");
  auto resume = BindTarget(*inv, topo, "resume", T(topo, "r01.tray02"));
  REQUIRE(resume.ok());
  CHECK(*ssh::RenderTemplate(inv->actions.at("resume").apply, resume->values) ==
        "kubectl uncordon 'gb200-r01-t02' && kubectl annotate node 'gb200-r01-t02' rackchaos.io/reason-");
  auto requeue = BindSite(*inv, "requeue_job");
  REQUIRE(requeue.ok());
  requeue->values["job"] = "pretrain-64";
  CHECK(*ssh::RenderTemplate(inv->actions.at("requeue_job").apply, requeue->values) ==
        "kubectl -n 'training' delete pods -l training.kubeflow.org/job-name='pretrain-64' --wait=false");
}

TEST_CASE("inventory: a hostile interface name is one quoted word in the rendered command") {
  auto inv = ParseInventory(kSmall, "site.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  cluster::Topology topo = Gb200();
  auto b = BindTarget(*inv, topo, "link_down", T(topo, "r01.tray01.nic1"));
  REQUIRE(b.ok());
  CHECK(b->host == "h1");
  auto cmd = ssh::RenderTemplate(inv->actions.at("link_down").apply, b->values);
  REQUIRE(cmd.ok());
  CHECK(*cmd == "ip link set dev 'e;touch${IFS}x' down");
  auto quote = BindTarget(*inv, topo, "link_down", T(topo, "r01.tray01.nic2"));
  REQUIRE(quote.ok());
  CHECK(*ssh::RenderTemplate("ip link set dev {iface} up", quote->values) == "ip link set dev 'it'\\''s' up");
  // A newline can never reach a command line: refused where it is written.
  std::string text = kSmall;
  Replace(text, "\"it's\"", "\"a\\nb\"");
  CHECK(Error(text) == "site.yaml:7:77: nics[2] spans lines; values reach command lines and must be one line of text");
  // Names the kernel would refuse are refused where they are written.
  text = kSmall;
  Replace(text, "\"it's\"", "\"eth0; rm -rf /\"");
  CHECK(Error(text) == "site.yaml:7:77: nics[2] 'eth0; rm -rf /' is not a Linux interface name (no '/', ':' or whitespace)");
  text = kSmall;
  Replace(text, "gpus: [0, 1, 2, 3]", "gpus: [0, \"1 -pl 1\"]");
  CHECK_MESSAGE(Error(text).find("site.yaml:7:36: gpus[1] '1 -pl 1' is not a GPU index or PCI bus id") == 0, Error(text));
}

TEST_CASE("inventory: targets the site does not map are refused with what is missing") {
  auto inv = ParseInventory(kSmall, "site.yaml");
  REQUIRE(inv.ok());
  cluster::Topology topo = Gb200();
  auto nic = BindTarget(*inv, topo, "link_down", T(topo, "r01.tray01.nic3"));
  CHECK(nic.status().code() == StatusCode::kNotFound);
  CHECK(nic.status().message() == "site inventory site.yaml maps no interface for r01.tray01.nic3 (trays.r01.tray01.nics has 3)");
  auto tray = BindTarget(*inv, topo, "link_down", T(topo, "r01.tray02.nic0"));
  CHECK(tray.status().message().find("maps no host for tray r01.tray02") != std::string::npos);
  auto verb = BindTarget(*inv, topo, "tray_pull", T(topo, "r01.tray01"));
  CHECK(verb.status().code() == StatusCode::kNotSupported);
  auto gpu = BindTarget(*inv, topo, "gpu_throttle", T(topo, "r01.tray01.gpu3"));
  REQUIRE(gpu.ok());
  CHECK(gpu->values.at("gpu") == "3");
}

TEST_CASE("inventory: mistakes name file, line and column") {
  std::string text = kSmall;
  Replace(text, "address: 10.0.0.1", "adress: 10.0.0.1");
  CHECK(Error(text) == "site.yaml:5:16: unknown key 'adress' in hosts[0]; expected one of: name, address, port, user, "
                       "identity_file, agent, known_hosts, env, vars (did you mean 'address'?)");
  text = kSmall;
  Replace(text, "dev {iface} down", "dev {ifce} down");
  CHECK(Error(text) == "site.yaml:10:12: injectors.link_down.apply: command template \"ip link set dev {ifce} down\", "
                       "column 17: no value for placeholder {ifce}; link_down provides {host}, {address}, {tray}, "
                       "{bmc}, {serial}, {iface}, {nic} and the site's vars");
  text = kSmall;
  Replace(text, "{host: h1,", "{host: h2,");
  CHECK(Error(text) == "site.yaml:7:3: tray r01.tray01 maps to host 'h2', which hosts does not list");
  text = kSmall;
  Replace(text, "    apply: nvidia-smi", "    verify: true\n    apply: nvidia-smi");
  CHECK_MESSAGE(Error(text).find("site.yaml:14:13: injectors.gpu_throttle is verified by reading its baseline") == 0, Error(text));
  text = kSmall;
  Replace(text, "link_down:", "link_dwn:");
  CHECK(Error(text).find("site.yaml:9:3: unknown injector action 'link_dwn'; expected one of: link_down") == 0);
  CHECK(Error("hosts: [").find("site.yaml:1:") == 0);
  CHECK(Error("site: x\n").find("needs the rack model") != std::string::npos);
}

TEST_CASE("inventory: validation checks every fault of a plan against the site once, before anything runs") {
  char tmpl[] = "/tmp/rc-inv-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  std::ofstream(dir + "/site.yaml") << kSmall;
  auto check = [&](const std::string& faults) -> Result<RealSpec> {
    const std::string text = "name: p\ncluster: {model: gb200-nvl72, racks: 1, inventory: site.yaml}\nfaults:\n" + faults;
    auto plan = ParsePlan(text, dir + "/plan.yaml");
    REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
    auto spec = ValidatePlan(*plan, {});
    REQUIRE_MESSAGE(spec.ok(), spec.status().ToString());
    return ValidateRealPlan(*plan, *spec);
  };
  auto ok = check("  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 5s}\n"
                  "  - {at: 1m, kind: gpu_throttle, target: r01.tray01.gpu2, params: {power_cap: 600W}}\n");
  REQUIRE_MESSAGE(ok.ok(), ok.status().ToString());
  CHECK(ok->hosts == std::vector<std::string>{"h1"});
  CHECK(ok->horizon == Duration::Minutes(1));  // the end of the last timed fault; no simulated hour after it
  auto verb = check("  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 5s}\n"
                    "  - {at: 0s, kind: tray_pull, target: r01.tray01, for: 5s}\n");
  CHECK(verb.status().message() == dir + "/plan.yaml:5:5: tray_pull on r01.tray01 cannot run on this site: site inventory " +
                                       dir + "/site.yaml defines no 'tray_pull' templates (injectors.tray_pull: apply, revert)");
  auto port = check("  - {at: 0s, kind: link_down, target: r01.tray01.gpu0.nvlink2}\n");
  CHECK(port.status().message().find("defines no 'nvlink_down' templates") != std::string::npos);
  // Live aborts must be observable on this site (it has no healer: section, so no observations).
  const std::string fault = "  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 5s}\n";
  CHECK(check(fault + "safety: {abort: {faults_at_once: 1}}\n").ok());
  auto temperature = check(fault + "safety: {abort: {gpu_temperature: 90}}\n");
  CHECK_MESSAGE(temperature.status().message() ==
                    dir + "/plan.yaml:5:17: safety.abort.gpu_temperature needs GPU temperatures: site inventory " + dir +
                        "/site.yaml configures no source of them; add `observe: {gpu: {tool: nvidia-smi}}` (or dcgmi, "
                        "a bmc point with metric gpu_temperature, or prometheus providing gpu_telemetry), remove "
                        "the limit, or run on the simulator",
                temperature.status().message());
  // ... and accepted once the inventory configures a source of GPU temperatures.
  std::ofstream(dir + "/site.yaml") << kSmall << "observe: {gpu: {tool: dcgmi}}\n";
  auto observed = check(fault + "safety: {abort: {gpu_temperature: 90}}\n");
  CHECK_MESSAGE(observed.ok(), observed.status().ToString());
  std::ofstream(dir + "/site.yaml") << kSmall << "prometheus: {url: 'http://127.0.0.1:9090'}\n";
  auto prom = check(fault + "safety: {abort: {gpu_temperature: 90}}\n");
  CHECK_MESSAGE(prom.ok(), prom.status().ToString());
  std::ofstream(dir + "/site.yaml") << kSmall << "prometheus: {url: 'http://127.0.0.1:9090', provides: [nic_links]}\n";
  CHECK_FALSE(check(fault + "safety: {abort: {gpu_temperature: 90}}\n").ok());
  std::ofstream(dir + "/site.yaml") << kSmall;
  auto offline = check(fault + "safety: {abort: {gpus_offline: 4}}\n");
  CHECK(offline.status().message().find("safety.abort.gpus_offline needs heartbeats") != std::string::npos);
  auto jobs = check(fault + "safety: {abort: {jobs_down: 0}}\n");
  CHECK(jobs.status().message().find("safety.abort.jobs_down needs the scheduler's job list") != std::string::npos);
  // A policy that reboots (the default: remediation.reboot and gpu_reset on) on a site with a healer but
  // no reboot or gpu_reset action: accepted, with a warning for each before anything runs.
  const char* healer = "healer:\n  observe_tray: {apply: cat /run/rank.status}\n";
  std::ofstream(dir + "/site.yaml") << kSmall << healer;
  auto cannot = check(fault);
  REQUIRE_MESSAGE(cannot.ok(), cannot.status().ToString());
  REQUIRE(cannot->warnings.size() == 2);
  CHECK(cannot->warnings[0] == "healer policy default has remediation.reboot on but site inventory " + dir +
                                   "/site.yaml defines no healer.reboot command: the healer will not reboot a node "
                                   "whose Xid asks for it (Xid 79 ...) on this site (it diagnoses the tray without "
                                   "it); define one, or turn the key off");
  CHECK(cannot->warnings[1].find("remediation.gpu_reset on but site inventory") != std::string::npos);
  std::ofstream(dir + "/site.yaml") << kSmall << healer << "  reboot: {apply: 'systemctl reboot'}\n"
                                    << "  gpu_reset: {apply: 'nvidia-smi -r -i {gpu}'}\n";
  auto can = check(fault);
  REQUIRE_MESSAGE(can.ok(), can.status().ToString());
  CHECK(can->warnings.empty());
  // Without a healer section nothing heals, so there is nothing to warn about.
  std::ofstream(dir + "/site.yaml") << kSmall;
  CHECK(check(fault)->warnings.empty());
  // Faults that share an `at` are armed together, one SSH session slot each, and one slot stays free.
  std::ofstream(dir + "/site.yaml") << kSmall << "ssh: {max_concurrent: 2}\n";
  const std::string second = "  - {at: 0s, kind: link_down, target: r01.tray01.nic1, for: 5s}\n";
  auto crowded = check(fault + second);
  CHECK_MESSAGE(crowded.status().message() == dir + "/plan.yaml:5:5: more than 1 fault commands at 0s: faults that share "
                                                   "an `at` are armed together, each holding an SSH session slot until "
                                                   "it lands, and ssh.max_concurrent is 2 (raise it, or spread the faults)",
                crowded.status().message());
  CHECK(check(fault + "  - {at: 1s, kind: link_down, target: r01.tray01.nic1, for: 5s}\n").ok());
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_CASE("inventory: the model must agree with the plan") {
  auto inv = ParseInventory(kSmall, "site.yaml");
  REQUIRE(inv.ok());
  ClusterSpec c;
  c.model = "gb300-nvl72";
  c.pos = {"plan.yaml", 3, 10};
  CHECK(CheckModel(*inv, c).message() ==
        "plan.yaml:3:10: the plan's cluster is gb300-nvl72 x1 but site inventory site.yaml maps gb200-nvl72 x1; make them agree");
}

TEST_CASE("inventory: ssh.arm_lead and ssh.fire_lead are read and checked against each other") {
  auto defaults = ParseInventory(kSmall, "site.yaml");
  REQUIRE(defaults.ok());
  CHECK(defaults->arm_lead == Duration::Seconds(3));
  CHECK(defaults->fire_lead == Duration::Millis(250));
  auto set = ParseInventory(std::string(kSmall) + "ssh: {arm_lead: 5s, fire_lead: 400ms}\n", "site.yaml");
  REQUIRE_MESSAGE(set.ok(), set.status().ToString());
  CHECK(set->arm_lead == Duration::Seconds(5));
  CHECK(set->fire_lead == Duration::Millis(400));
  CHECK(Error(std::string(kSmall) + "ssh: {fire_lead: 5ms}\n") ==
        "site.yaml:16:18: ssh.fire_lead '5ms' is out of range; expected a duration from 10ms to 1m");
  CHECK(Error(std::string(kSmall) + "ssh: {arm_lead: 200ms}\n") ==
        "site.yaml:16:17: ssh.arm_lead 200ms must be longer than ssh.fire_lead 250ms");
  CHECK(Error(std::string(kSmall) + "ssh: {command_timeout: 3s}\n") ==
        "site.yaml:16:24: ssh.arm_lead 3s must be at least 1s shorter than ssh.command_timeout 3s (an armed fault "
        "waits within it)");
  CHECK(Error(std::string(kSmall) + "ssh: {arm_lead: soon}\n").find("site.yaml:16:17: ssh.arm_lead: ") == 0);
}

TEST_CASE("inventory: numbers are read from command output") {
  CHECK(*ParseFirstNumber("1200.00\n") == 1200.0);
  CHECK(*ParseFirstNumber("\"SetPoint\": 45") == 45.0);
  CHECK(*ParseFirstNumber(" -3.5 W") == -3.5);
  CHECK_FALSE(ParseFirstNumber("[N/A]").ok());
}

TEST_CASE("inventory: the host-side expiry removes its token before reverting") {
  const std::string cmd = ExpiryCommand(Duration::Seconds(90), "ip link set dev 'eth0' up", ExpiryTag(77, 2, 5));
  CHECK(cmd.find("mktemp \"${TMPDIR:-/tmp}/rackchaos-expiry.77-2-5.XXXXXX\"") != std::string::npos);
  CHECK(cmd.find("nohup sh -c 'sleep 90; rm -- \"$1\" 2>/dev/null || exit 0; ip link set dev '\\''eth0'\\'' up'") !=
        std::string::npos);
  CHECK(CancelExpiryCommand("/tmp/rackchaos-expiry.ab'c", 42) == "rm -f -- '/tmp/rackchaos-expiry.ab'\\''c'; kill 42 2>/dev/null; true");
}

// Whether process `pid` runs (a zombie does not: this machine's init may reap orphans late).
bool Running(int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

// Runs `command` in sh with TMPDIR=`tmp` (as a host's login shell would run it) and returns its stdout.
std::string RunLocally(const std::string& tmp, const std::string& command) {
  const std::string line = "TMPDIR=" + ssh::ShellQuote(tmp) + " sh -c " + ssh::ShellQuote(command);
  FILE* p = ::popen(line.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  CHECK(::pclose(p) == 0);
  return out;
}

TEST_CASE("inventory: an expiry armed without its answer is found by its tag, disarmed and its timer killed") {
  char tmpl[] = "/tmp/rc-sweep-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string reverted = dir + "/reverted";
  // Two timers armed as a run arms them; the runner learned neither token (the host died on the way).
  const std::string tag = ExpiryTag(4242, 3, 17);
  std::istringstream first(RunLocally(dir, ExpiryCommand(Duration::Seconds(60), "touch " + reverted, tag)));
  std::string token;
  int64_t pid = 0;
  REQUIRE((first >> token >> pid));
  CHECK(token.rfind(dir + "/rackchaos-expiry.4242-3-17.", 0) == 0);
  // Another entry's timer (tag 4242-3-170) must survive the sweep of 4242-3-17.
  std::istringstream other(RunLocally(dir, ExpiryCommand(Duration::Seconds(60), "touch " + reverted, ExpiryTag(4242, 3, 170))));
  std::string other_token;
  int64_t other_pid = 0;
  REQUIRE((other >> other_token >> other_pid));
  CHECK(Running(pid));

  CHECK(RunLocally(dir, SweepExpiryCommand(tag)) == token + "\n");
  CHECK_FALSE(std::filesystem::exists(token));
  for (int i = 0; i < 50 && Running(pid); ++i) ::usleep(20000);
  CHECK_FALSE(Running(pid));  // the timer is gone (killed by pkill)
  CHECK(std::filesystem::exists(other_token));
  CHECK(Running(other_pid));
  CHECK(RunLocally(dir, SweepExpiryCommand(tag)).empty());  // idempotent: nothing left to find

  (void)RunLocally(dir, CancelExpiryCommand(other_token, other_pid));
  CHECK_FALSE(std::filesystem::exists(reverted));  // neither timer reverted anything
  std::filesystem::remove_all(dir);
}

const char* kHealer = R"(healer:
  observe_period: 2s
  observe_tray: {apply: cat /run/rank.status}
  observe_jobs: {run_on: h1, apply: squeue -h -o '%j %T'}
  drain: {run_on: h1, apply: "scontrol update nodename={host} state=drain reason={reason}"}
  requeue_job: {run_on: h1, apply: "launch {job}"}
)";

TEST_CASE("inventory: the healer section reads observe and healer actions and binds them") {
  auto inv = ParseInventory(std::string(kSmall) + kHealer, "site.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  CHECK(inv->observe_period == Duration::Seconds(2));
  CHECK(inv->actions.count("observe_tray") == 1);
  cluster::Topology topo = Gb200();
  auto drain = BindTarget(*inv, topo, "drain", T(topo, "r01.tray01"));
  REQUIRE(drain.ok());
  CHECK(drain->host == "h1");
  CHECK(drain->values.at("host") == "h1");
  auto requeue = BindSite(*inv, "requeue_job");
  REQUIRE(requeue.ok());
  CHECK(requeue->host == "h1");
  CHECK(BindSite(*inv, "start_job").status().code() == StatusCode::kNotSupported);
  // observe_tray runs on each tray's host (no run_on): binding it site-wide is refused, not an exception
  CHECK(BindSite(*inv, "observe_tray").status().code() == StatusCode::kNotSupported);
  CHECK(ActionFor(cluster::Verb::kDrain) == "drain");
  CHECK(ActionFor(cluster::Verb::kRequeueJob) == "requeue_job");
}

TEST_CASE("inventory: gpu_reset is a healer action on a GPU: {gpu} on the GPU's tray host") {
  auto inv = ParseInventory(std::string(kSmall) + kHealer + "  gpu_reset: {apply: 'nvidia-smi -r -i {gpu}'}\n", "site.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  cluster::Topology topo = Gb200();
  auto b = BindTarget(*inv, topo, "gpu_reset", T(topo, "r01.tray01.gpu3"));
  REQUIRE_MESSAGE(b.ok(), b.status().ToString());
  CHECK(b->host == "h1");
  CHECK(*ssh::RenderTemplate(inv->actions.at("gpu_reset").apply, b->values) == "nvidia-smi -r -i '3'");
  CHECK(ActionFor(cluster::Verb::kGpuReset) == "gpu_reset");
  // It takes a GPU, not a tray; and {watts} is not among its placeholders.
  CHECK(BindTarget(*inv, topo, "gpu_reset", T(topo, "r01.tray01")).status().code() == StatusCode::kNotSupported);
  CHECK(Error(std::string(kSmall) + kHealer + "  gpu_reset: {apply: 'nvidia-smi -r -i {gpu} -pl {watts}'}\n")
            .find("gpu_reset.apply: command template \"nvidia-smi -r -i {gpu} -pl {watts}\", column 28: no value for "
                  "placeholder {watts}; gpu_reset provides {host}, {address}, {tray}, {bmc}, {serial}, {gpu} and the "
                  "site's vars") != std::string::npos);
}

TEST_CASE("inventory: reboot is a healer action on a tray: on the tray host, or run_on a management host") {
  cluster::Topology topo = Gb200();
  // On the tray host itself (systemctl reboot), with the common placeholders.
  auto inv = ParseInventory(std::string(kSmall) + kHealer + "  reboot: {apply: 'systemctl reboot # {tray}'}\n", "site.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  CHECK(ActionFor(cluster::Verb::kReboot) == "reboot");
  auto b = BindTarget(*inv, topo, "reboot", T(topo, "r01.tray01"));
  REQUIRE_MESSAGE(b.ok(), b.status().ToString());
  CHECK(b->host == "h1");
  CHECK(*ssh::RenderTemplate(inv->actions.at("reboot").apply, b->values) == "systemctl reboot # 'r01.tray01'");
  // Through the tray's BMC from a management host: {bmc} is the tray's.
  auto bmc = ParseInventory(std::string(kSmall) + kHealer +
                                "  reboot: {run_on: h1, apply: 'ipmitool -I lanplus -H {bmc} -E chassis power cycle'}\n",
                            "site.yaml");
  REQUIRE_MESSAGE(bmc.ok(), bmc.status().ToString());
  CHECK(bmc->actions.at("reboot").run_on == "h1");
  // ... on a tray whose BMC the site maps; this one maps none, and binding says so.
  CHECK(BindTarget(*bmc, topo, "reboot", T(topo, "r01.tray01")).status().message() ==
        "site inventory site.yaml maps no bmc for r01.tray01");
  // It takes a tray, not a GPU; it has no {gpu}; and one command only.
  CHECK(BindTarget(*inv, topo, "reboot", T(topo, "r01.tray01.gpu0")).status().code() == StatusCode::kNotSupported);
  CHECK(Error(std::string(kSmall) + kHealer + "  reboot: {apply: 'nvidia-smi -r -i {gpu}'}\n")
            .find("reboot.apply: command template \"nvidia-smi -r -i {gpu}\", column 18: no value for placeholder "
                  "{gpu}; reboot provides {host}, {address}, {tray}, {bmc}, {serial} and the site's vars") !=
        std::string::npos);
  CHECK(Error(std::string(kSmall) + kHealer + "  reboot: {apply: 'systemctl reboot', revert: 'true'}\n")
            .find("healer.reboot takes one command") != std::string::npos);
}

TEST_CASE("inventory: each verb a real-mode action carries out maps to that action and back") {
  int verbs = 0;
  for (const injectors::RealAction& a : injectors::RealActions()) {
    if (!a.verb) continue;
    ++verbs;
    CHECK_MESSAGE(ActionFor(*a.verb) == a.name, a.name);
    CHECK(IsValueAction(a.name) == (a.check == injectors::RealCheck::kBaseline));
  }
  CHECK(verbs == 13);
  cluster::Topology topo = Gb200();
  CHECK(VerbsForTarget("link_down", topo, T(topo, "r01.tray01.nic0")) == std::vector<cluster::Verb>{cluster::Verb::kNicLink});
  CHECK(VerbsForTarget("link_down", topo, T(topo, "r01.tray01.gpu0.nvlink2")) ==
        std::vector<cluster::Verb>{cluster::Verb::kNvlinkPort});
  // link_degrade has no action for a port: the NIC's, so that binding it says what it takes.
  CHECK(VerbsForTarget("link_degrade", topo, T(topo, "r01.tray01.gpu0.nvlink2")) ==
        std::vector<cluster::Verb>{cluster::Verb::kLinkBandwidth});
  CHECK(VerbsForTarget("gpu_fail", topo, T(topo, "r01.tray01.gpu0")) == std::vector<cluster::Verb>{cluster::Verb::kGpuFailure});
}

TEST_CASE("inventory: healer actions take one command and site-wide ones need run_on") {
  std::string text = std::string(kSmall) + kHealer;
  std::string t1 = text;
  Replace(t1, "requeue_job: {run_on: h1, apply: \"launch {job}\"}", "requeue_job: {apply: \"launch {job}\"}");
  CHECK(Error(t1).find("healer.requeue_job concerns no single tray and needs run_on") != std::string::npos);
  std::string t2 = text;
  Replace(t2, "observe_tray: {apply: cat /run/rank.status}", "observe_tray: {apply: x, revert: y}");
  CHECK(Error(t2).find("healer.observe_tray takes one command") != std::string::npos);
  std::string t3 = text;
  Replace(t3, "launch {job}", "launch {watts}");
  CHECK(Error(t3).find("site.yaml:") == 0);
  std::string t4 = text;
  Replace(t4, "observe_period: 2s", "observe_period: 10ms");
  CHECK(Error(t4).find("healer.observe_period '10ms' is out of range; expected a duration from 100ms to 1h") != std::string::npos);
  std::string t5 = text;
  Replace(t5, "  drain:", "  link_down:");
  CHECK(Error(t5).find("unknown healer action 'link_down'") != std::string::npos);
}

TEST_CASE("inventory: the rig's inventory template loads once its blanks are filled") {
  std::ifstream in(std::string(RACKCHAOS_SOURCE_DIR) + "/tests/rig/inventory.yaml.in");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(text.empty());
  for (size_t p; (p = text.find("@RIG@")) != std::string::npos;) text.replace(p, 5, "/tmp/rig");
  text += "  - {name: head, address: 10.77.0.254}\n  - {name: tray1, address: 10.77.0.1}\n"
          "trays:\n  r01.tray01: {host: tray1, gpus: [0, 1, 2, 3], nics: [eth0]}\n";
  auto inv = ParseInventory(text, "rig.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  // Every healer action but gpu_reset: the rig's GPUs are CPU quotas, there is nothing to reset (its
  // reboot clears the tray's GPU state: `rig reboot`).
  for (const std::string& action : HealerActionNames())
    if (action != "gpu_reset") CHECK_MESSAGE(inv->actions.count(action) == 1, action);
  CHECK(inv->actions.at("link_down").run_on == "head");
}

}  // namespace
}  // namespace rackchaos::runner

namespace rackchaos::runner {
namespace {

TEST_CASE("inventory: link_degrade binds NICs with {rate} and {bandwidth}, refuses NVLink ports") {
  std::string text = kSmall;
  Replace(text, "injectors:\n", "injectors:\n  link_degrade:\n    apply: tc qdisc add dev {iface} root tbf rate {rate} "
                                "burst 4kb latency 10ms # {bandwidth}%\n    verify: tc qdisc show dev {iface} | grep -q tbf\n"
                                "    revert: tc qdisc del dev {iface} root\n");
  auto inv = ParseInventory(text, "site.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  cluster::Topology topo = Gb200();
  auto nic = BindTarget(*inv, topo, "link_degrade", T(topo, "r01.tray01.nic0"));
  REQUIRE(nic.ok());
  CHECK(nic->values.at("iface") == "eth0");
  auto port = BindTarget(*inv, topo, "link_degrade", T(topo, "r01.tray01.gpu0.nvlink3"));
  CHECK(port.status().code() == StatusCode::kNotSupported);
  CHECK(ActionFor(cluster::Verb::kLinkBandwidth) == "link_degrade");
  // A value action's placeholder is not link_degrade's.
  Replace(text, "# {bandwidth}%", "{watts}");
  CHECK(Error(text).find("injectors.link_degrade.apply") != std::string::npos);
}

TEST_CASE("inventory: line rates as tc writes them") {
  CHECK(*ParseBitRate("100mbit") == 1e8);
  CHECK(*ParseBitRate("400gbit") == 4e11);
  CHECK(*ParseBitRate("2500kbit") == 2.5e6);
  CHECK(*ParseBitRate("9600bit") == 9600);
  for (const char* bad : {"", "fast", "100", "100mb", "-1mbit", "0gbit"})
    CHECK_MESSAGE(ParseBitRate(bad).status().code() == StatusCode::kInvalidArgument, bad);
}

// Every number key of the inventory table (issue 26 item 2): bounds with min < max, and a value just
// outside them refused at its file:line:column with the range the reference prints.
TEST_CASE("inventory: every number key is bounded and refused outside its range, naming it") {
  int numbers = 0;
  for (const InventoryKey& k : InventoryKeys()) {
    if (k.number == InventoryKey::Number::kNone) continue;
    ++numbers;
    CAPTURE(k.section);
    CAPTURE(k.key);
    REQUIRE(k.min >= 0);
    REQUIRE(k.min < k.max);
    const bool dur = k.number == InventoryKey::Number::kDuration;
    // Durations as whole milliseconds: every bound of the table is one.
    REQUIRE((!dur || (k.min % 1000 == 0 && k.max % 1000 == 0)));
    std::vector<std::string> outside = {dur ? std::to_string(k.max / 1000 + 1) + "ms" : std::to_string(k.max + 1)};
    if (k.min > 0) outside.push_back(dur ? std::to_string(k.min / 1000 - 1) + "ms" : std::to_string(k.min - 1));
    for (const std::string& value : outside) {
      CAPTURE(value);
      std::string text = kSmall;
      const std::string set = k.key + ": " + value;
      if (k.section == "defaults") Replace(text, "identity_file: /k}", "identity_file: /k, " + set + "}");
      else if (k.section == "host") Replace(text, "address: 10.0.0.1}", "address: 10.0.0.1, " + set + "}");
      else if (k.section.empty()) text += set + "\n";
      else if (k.section == "source") text += "observe: {gpu: {" + set + "}}\n";
      else text += k.section + ": {" + set + "}\n";
      // The line and column of the value, as the message must name them.
      const size_t at = text.find(set) + k.key.size() + 2;
      const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
      const int col = static_cast<int>(at - text.rfind('\n', at - 1));
      const std::string message = Error(text);
      CHECK_MESSAGE(message.starts_with("site.yaml:" + std::to_string(line) + ":" + std::to_string(col) + ": "), message);
      CHECK_MESSAGE(message.find("'" + value + "'") != std::string::npos, message);
      CHECK_MESSAGE(message.find(DescribeRange(k)) != std::string::npos, message);
    }
  }
  CHECK(numbers == 17);  // racks, expiry_grace, observe_period, five under ssh, two ports, five under prometheus,
                        // an observe source's period and timeout
}

}  // namespace
}  // namespace rackchaos::runner

namespace rackchaos::runner {
namespace {

const char* kObserve = R"(observe:
  gpu: {period: 2s}
  nvlink: {}
  kernel_log: {command: sudo -n journalctl, timeout: 5s}
  bmc:
    run_on: h1
    points:
      - {url: "https://bmc1/redfish/v1/Chassis/1/PowerSubsystem/PowerSupplies/Bay1", component: r01.tray01, metric: psu_ok}
)";

TEST_CASE("inventory: the observe section reads each source, its period (default observe_period) and points") {
  auto inv = ParseInventory(std::string(kSmall) + "healer: {observe_period: 3s}\n" + kObserve, "site.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  REQUIRE(inv->observe.size() == 4);
  CHECK(inv->observe.at("gpu").tool == "nvidia-smi");
  CHECK(inv->observe.at("gpu").period == Duration::Seconds(2));
  CHECK(inv->observe.at("nvlink").period == Duration::Seconds(3));  // healer.observe_period, read after it
  CHECK(inv->observe.at("kernel_log").command == "sudo -n journalctl");
  CHECK(inv->observe.at("kernel_log").timeout == Duration::Seconds(5));
  REQUIRE(inv->observe.at("bmc").points.size() == 1);
  CHECK(inv->observe.at("bmc").points[0].metric == "psu_ok");
  CHECK(InventoryObserves(*inv, cluster::Metric::kGpuTemperature));
  CHECK(InventoryObserves(*inv, cluster::Metric::kPsuOk));
  CHECK_FALSE(InventoryObserves(*inv, cluster::Metric::kCoolantFlow));
  cluster::Topology topo = Gb200();
  CHECK(CheckObserve(*inv, topo).ok());
  // Bad input names the file, line and column and what would be valid.
  std::string text = std::string(kSmall) + kObserve;
  Replace(text, "gpu: {period: 2s}", "gpu: {tool: rocm-smi}");
  CHECK_MESSAGE(Error(text) == "site.yaml:17:15: observe.gpu.tool 'rocm-smi' is not a GPU telemetry tool; expected "
                               "nvidia-smi or dcgmi", Error(text));
  text = std::string(kSmall) + kObserve;
  Replace(text, "gpu: {period: 2s}", "gpus: {}");
  CHECK_MESSAGE(Error(text).find("site.yaml:17:3: unknown key 'gpus' in observe") == 0, Error(text));
  text = std::string(kSmall) + kObserve;
  Replace(text, "metric: psu_ok", "metric: psu");
  CHECK_MESSAGE(Error(text).find("observe.bmc.points[0].metric 'psu' is not a Redfish reading; expected one of: "
                                 "gpu_temperature, switch_temperature, coolant_flow, leak, psu_ok, part_ok") != std::string::npos,
                Error(text));
  text = std::string(kSmall) + kObserve;
  Replace(text, "    run_on: h1\n", "");
  CHECK(Error(text).find("observe.bmc needs run_on") != std::string::npos);
  text = std::string(kSmall) + kObserve;
  Replace(text, "nvlink: {}", "nvlink: {period: 10ms}");
  CHECK(Error(text).find("observe.nvlink.period '10ms' is out of range; expected a duration from 100ms to 1h") !=
        std::string::npos);
  text = std::string(kSmall) + kObserve;
  Replace(text, "sudo -n journalctl", "\"journalctl {nope}\"");
  CHECK(Error(text).find("observe.kernel_log.command: ") != std::string::npos);
  auto bad = ParseInventory(std::string(kSmall) + kObserve, "site.yaml");
  REQUIRE(bad.ok());
  bad->observe.at("bmc").points[0].component = "r01.tray99";
  CHECK(CheckObserve(*bad, topo).message().find("component 'r01.tray99' is not in the model") != std::string::npos);
}

TEST_CASE("inventory: a tray's gpus give each GPU's PCI address or index; the host maps carry them") {
  std::string text = kSmall;
  Replace(text, "gpus: [0, 1, 2, 3]", "gpus: [\"00000008:01:00.0\", 5]");
  auto inv = ParseInventory(text, "site.yaml");
  REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  cluster::Topology topo = Gb200();
  auto maps = BuildHostMaps(*inv, topo);
  REQUIRE(maps.size() == 1);
  const observe::HostMap& m = maps[0];
  CHECK(m.host == "h1");
  CHECK(m.node == *topo.Find("r01.tray01"));
  REQUIRE(m.gpus.size() == 4);
  CHECK(m.gpus[0].pci == "0008:01:00");
  CHECK(m.gpus[0].index == 0);  // the fallback of a row without a bus id
  CHECK(m.gpus[1].pci.empty());
  CHECK(m.gpus[1].index == 5);
  CHECK(m.gpus[3].index == 3);  // not listed: GPU i is index i
  CHECK(m.gpus[2].gpu == *topo.Find("r01.tray01.gpu2"));
  CHECK(m.nvlink_ports == 18);
  REQUIRE(m.nics.size() == 3);
  CHECK(m.nics[0].nic == *topo.Find("r01.tray01.nic0"));
  // A site's Xid line names the model's address of the same GPU (the xid detector's GpuByPci).
  const std::string site = "NVRM: Xid (PCI:0008:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
  const std::string model = ToModelAddress(site, m, topo);
  CHECK(model.find("(PCI:" + topo.PciOf(m.gpus[0].gpu) + "): 79,") != std::string::npos);
  CHECK(topo.GpuByPci(m.node, healer::ParseXidLine(model)->pci) == m.gpus[0].gpu);
  CHECK(ToModelAddress("NVRM: Xid (PCI:0000:99:00): 13, x", m, topo) == "NVRM: Xid (PCI:0000:99:00): 13, x");
}

}  // namespace
}  // namespace rackchaos::runner
