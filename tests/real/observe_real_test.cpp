// The `observe:` sources on the loopback lab (tests/real/lab.h), through `rackchaos run --inventory`:
// each lab host's PATH starts with stub nvidia-smi and journalctl scripts that print what the host's
// state files name (samples of tests/site/observe/samples, copied verbatim, or rows CONSTRUCTED here in
// the exact shape of `--format=csv,noheader,nounits` where no recording shows the case), and the test
// changes those files while the run goes on. Needs root (label ssh).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cluster/catalogue.h"
#include "cluster/topology.h"
#include "reports/store.h"
#include "tests/real/lab.h"
#include "tests/real/lab_checks.h"

namespace rackchaos::runner {
namespace {

namespace fs = std::filesystem;
using testing::Lab;
using testing::ReadText;
using testing::SpawnRackchaos;
using testing::WaitExit;
using testing::WaitFor;

// nvidia-smi: the observation queries print the file $RCLAB_STATE/nvsmi names (exit status in nvsmi.exit);
// `nvidia-smi nvlink` is not configured here. Anything else goes to the lab's fake (power limits), with
// the bus id of GPU 0 (the samples' 0000:3b:00) turned into its index, as the real tool takes either.
constexpr const char* kStubNvidiaSmi = R"SH(#!/bin/sh
state="${RCLAB_STATE:?}"
case "$1" in
  --query-gpu=index,*)
    [ -f "$state/nvsmi" ] || { echo "stub: no $state/nvsmi" >&2; exit 9; }
    [ -f "$state/nvsmi.hang" ] && sleep "$(cat "$state/nvsmi.hang")"
    cat "$(cat "$state/nvsmi")"
    exit "$(cat "$state/nvsmi.exit" 2>/dev/null || echo 0)";;
esac
lab="$(dirname "$0")/../bin/nvidia-smi"
if [ "$1" = -i ]; then
  case "$2" in *3B:00.0|*3b:00.0) g=0;; *) g=$2;; esac
  shift 2
  exec "$lab" -i "$g" "$@"
fi
exec "$lab" "$@"
)SH";

// journalctl: the first N entries ($RCLAB_STATE/journal) of the verbatim export sample, read as journald
// does: -n 1 prints the newest, --cursor=C prints C's entry and the newer ones, else everything.
constexpr const char* kStubJournalctl = R"SH(#!/bin/sh
state="${RCLAB_STATE:?}"
n=$(cat "$state/journal" 2>/dev/null || echo 0)
last=0; cursor=""
for a in "$@"; do
  case "$a" in -n) last=1;; --cursor=*) cursor=${a#--cursor=};; esac
done
awk -v n="$n" -v last="$last" -v cursor="$cursor" '
  BEGIN { RS = ""; ORS = "\n\n"; from = 1 }
  { e[NR] = $0; if (cursor != "" && index($0, "__CURSOR=" cursor "\n") == 1) from = NR }
  END {
    if (n > NR) n = NR
    if (last) { if (n > 0) print e[n]; exit }
    if (cursor != "" && from > n) exit
    for (i = from; i <= n; i++) print e[i]
  }' "$(dirname "$0")/kernel_export.txt"
)SH";

// curl (observe.bmc's GET): the body the file $RCLAB_STATE/redfish names, then the HTTP status of
// $RCLAB_STATE/redfish.code on a line of its own, as `curl -w '\n%{http_code}'` prints them.
constexpr const char* kStubCurl = R"SH(#!/bin/sh
state="${RCLAB_STATE:?}"
cat "$(cat "$state/redfish")"
printf '\n%s' "$(cat "$state/redfish.code")"
)SH";

using testing::StartLab;
void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// GPU 0 of each host at `temp` C with clock event reasons `reasons` (0x40: HW thermal slowdown), the
// others cool: nvidia-smi's row shape for observe::kNvsmiQueryFields. CONSTRUCTED (no recording of a hot GPU).
std::string Rows(int temp, const std::string& reasons) {
  return "0, 00000000:3B:00.0, " + std::to_string(temp) + ", 612.50, 1200.00, 1980, 1980, " + reasons + "\n" +
         "1, 00000000:3C:00.0, 46, 598.10, 1200.00, 1980, 1980, 0x0000000000000000\n"
         "2, 00000000:3D:00.0, 47, 601.33, 1200.00, 1980, 1980, 0x0000000000000000\n"
         "3, 00000000:3E:00.0, 45, 588.02, 1200.00, 1980, 1980, 0x0000000000000000\n";
}

// The lab with the stubs first on each host's PATH, the samples beside them, and an inventory that
// observes GPU telemetry and the kernel log every 500 ms and runs the healer (heartbeats only).
struct ObsLab {
  std::unique_ptr<Lab> lab = StartLab();
  std::string bin = lab->dir() + "/obsbin";
  std::string inventory;

  explicit ObsLab(const std::string& gpu = "{}") {
    fs::create_directories(bin);
    WriteFile(bin + "/nvidia-smi", kStubNvidiaSmi);
    WriteFile(bin + "/journalctl", kStubJournalctl);
    WriteFile(bin + "/curl", kStubCurl);
    ::chmod((bin + "/curl").c_str(), 0755);
    ::chmod((bin + "/nvidia-smi").c_str(), 0755);
    ::chmod((bin + "/journalctl").c_str(), 0755);
    const std::string samples = std::string(RACKCHAOS_SOURCE_DIR) + "/tests/site/observe/samples";
    fs::copy_file(samples + "/journal/kernel_export.txt", bin + "/kernel_export.txt");
    fs::copy_file(samples + "/nvsmi/rtx3080_na_noheader.csv", bin + "/garbage.csv");
    fs::copy_file(samples + "/redfish/error_500_internal.json", bin + "/bmc_500.json");
    // A PSU in Warning still delivers (psu_ok 1); no recording shows a failed one: the same body in Critical.
    std::string critical = ReadText(samples + "/redfish/psu_bay1_warning.json");
    critical.replace(critical.find("\"Warning\""), 9, "\"Critical\"");
    WriteFile(bin + "/psu_critical.json", critical);
    WriteFile(bin + "/cool.csv", Rows(45, "0x0000000000000000"));
    WriteFile(bin + "/hot.csv", Rows(93, "0x0000000000000040"));
    for (const char* host : {"host00", "host01"}) {
      const std::string state = lab->dir() + "/state/" + host;
      fs::create_directories(state);
      SetNvsmi(host, "cool.csv");
      WriteFile(state + "/journal", "2\n");  // the kernel's first two lines: history before the run
      SetRedfish(host, "bmc_500.json", 500);
    }
    // Everything the stubs and the rcssh user read must be readable by it.
    RunChmod(lab->dir());
    const std::string path = "PATH: \"@LAB@/bin:";
    inventory = lab->WriteInventory("obs.yaml", "30s", "",
                                    {{path, "PATH: \"@LAB@/obsbin:@LAB@/bin:"},
                                     {"gpus: [0, 1, 2, 3], nics: [rc@TAG@a0", "gpus: [\"00000000:3B:00.0\", 1, 2, 3], nics: [rc@TAG@a0"}});
    std::ofstream(inventory, std::ios::app) << "healer:\n  observe_period: 500ms\n  observe_tray: {apply: 'true'}\n"
                                               "observe:\n  gpu: " << gpu << "\n  kernel_log: {}\n";
  }
  static void RunChmod(const std::string& dir) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_symlink()) continue;
      ::chmod(e.path().c_str(), e.is_directory() ? 0777 : (e.status().permissions() & fs::perms::owner_exec) != fs::perms::none ? 0755 : 0666);
    }
  }
  void SetRedfish(const std::string& host, const std::string& file, int code) {
    const std::string state = lab->dir() + "/state/" + host;
    WriteFile(state + "/redfish.code", std::to_string(code) + "\n");
    WriteFile(state + "/redfish", bin + "/" + file + "\n");
  }
  // Adds the BMC source: host00 reads PSU 1 of shelf 1 over Redfish (the sample's Bay1).
  void AddBmc() {
    std::ofstream(inventory, std::ios::app)
        << "  bmc:\n    run_on: host00\n    points:\n"
           "      - {url: 'https://bmc.lab/redfish/v1/Chassis/1U/PowerSubsystem/PowerSupplies/Bay1', "
           "component: r01.shelf1.psu1, metric: psu_ok}\n";
  }
  void SetNvsmi(const std::string& host, const std::string& file, int exit = 0) {
    const std::string state = lab->dir() + "/state/" + host;
    WriteFile(state + "/nvsmi.exit", std::to_string(exit) + "\n");
    WriteFile(state + "/nvsmi", bin + "/" + file + "\n");
  }
  std::string Plan(const std::string& name, const std::string& extra) const {
    return lab->WritePlan(name, inventory,
                          "  - {at: 1s, kind: gpu_throttle, target: r01.tray01.gpu0, params: {power_cap: 600W}, for: 10s}\n"
                          "duration: 12s\n" + extra);
  }
};

struct Ran {
  reports::RunRow run;
  std::vector<reports::DetectionRow> detections;
  std::vector<reports::ActionRow> observe_errors;
  RunMetrics metrics;
};

Ran Read(const std::string& db) {
  auto store = reports::ReportStore::Open(db);
  REQUIRE_MESSAGE(store.ok(), store.status().ToString());
  auto runs = store->ListRuns();
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 1);
  Ran r;
  r.run = runs->back();
  auto d = store->ReadDetections(r.run.id);
  REQUIRE(d.ok());
  r.detections = *d;
  auto a = store->ReadActions(r.run.id, "observe");
  REQUIRE(a.ok());
  r.observe_errors = *a;
  auto m = store->ReadMetrics(r.run.id);
  REQUIRE(m.ok());
  r.metrics = *m;
  return r;
}

int Count(const std::vector<reports::DetectionRow>& ds, const std::string& detector) {
  return static_cast<int>(std::count_if(ds.begin(), ds.end(), [&](const auto& d) { return d.detector == detector; }));
}

TEST_CASE("observe on real hosts: nvidia-smi's hot GPU is detected by the thermal detector; garbage is an error") {
  ObsLab o;
  o.SetNvsmi("host01", "garbage.csv");  // a 27-column row of [N/A] where 8 columns were asked for
  const std::string plan = o.Plan("thermal", "");
  const std::string db = o.lab->dir() + "/t.db", log = o.lab->dir() + "/t.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  // Once the power cap landed (the lab's fake holds it), GPU 0 of host00 runs hot.
  REQUIRE_MESSAGE(WaitFor([&] { return o.lab->PowerLimit(0, 0) == "600.00"; }, 15), ReadText(log));
  o.SetNvsmi("host00", "hot.csv");
  CHECK_MESSAGE(WaitExit(pid, 40) == 0, ReadText(log));
  const Ran r = Read(db);
  CHECK(r.run.status == "passed");
  REQUIRE_MESSAGE(Count(r.detections, "thermal") >= 1, ReadText(log));
  CHECK(r.detections.front().detector == "thermal");
  CHECK(r.detections.front().symptom.find("93") != std::string::npos);
  REQUIRE(r.metrics.faults.size() == 1);
  REQUIRE(r.metrics.faults[0].time_to_detect);
  CHECK(*r.metrics.faults[0].time_to_detect > Duration{});
  CHECK(*r.metrics.faults[0].time_to_detect < Duration::Seconds(10));
  // host01's garbage: observation errors on the record naming the host and the source, and the run went on.
  REQUIRE_MESSAGE(!r.observe_errors.empty(), ReadText(log));
  bool unreadable = false;
  for (const auto& a : r.observe_errors) unreadable = unreadable || a.detail.find("host01: nvidia-smi: unreadable: ") == 0;
  CHECK_MESSAGE(unreadable, r.observe_errors.front().detail);
  CHECK(ReadText(log).find("observation error: host01: nvidia-smi: unreadable") != std::string::npos);
}

TEST_CASE("observe on real hosts: an Xid in the kernel log is detected by the xid detector; a hung tool times out") {
  ObsLab o("{timeout: 1s}");
  WriteFile(o.lab->dir() + "/state/host01/nvsmi.hang", "5\n");  // host01's nvidia-smi never answers in time
  const std::string plan = o.Plan("xid", "");
  const std::string db = o.lab->dir() + "/x.db", log = o.lab->dir() + "/x.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  REQUIRE_MESSAGE(WaitFor([&] { return o.lab->PowerLimit(0, 0) == "600.00"; }, 15), ReadText(log));
  // The journal grows by the sample's last three entries, the first of them "Xid (PCI:0000:3b:00): 79".
  WriteFile(o.lab->dir() + "/state/host00/journal", "5\n");
  CHECK_MESSAGE(WaitExit(pid, 40) == 0, ReadText(log));
  const Ran r = Read(db);
  REQUIRE_MESSAGE(Count(r.detections, "xid") == 1, ReadText(log));  // read once, not again on later polls
  const auto xid = *std::find_if(r.detections.begin(), r.detections.end(), [](const auto& d) { return d.detector == "xid"; });
  CHECK(xid.symptom.find("Xid 79") == 0);
  // The journal names the site's bus id; the inventory maps it to GPU 0, which the detection names.
  auto model = cluster::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cluster::Topology::Build(*model, 1, 0);
  REQUIRE(topo.ok());
  CHECK(xid.component == *topo->Find("r01.tray01.gpu0"));
  REQUIRE(r.metrics.faults.size() == 1);
  REQUIRE(r.metrics.faults[0].time_to_detect);
  CHECK(*r.metrics.faults[0].time_to_detect < Duration::Seconds(10));
  // The hung host: an unavailable error naming it and the source; nothing else went wrong.
  REQUIRE_MESSAGE(!r.observe_errors.empty(), ReadText(log));
  for (const auto& a : r.observe_errors)
    CHECK_MESSAGE(a.detail.find("host01: nvidia-smi: unavailable: no answer within 1s") == 0, a.detail);
}

TEST_CASE("observe on real hosts: a Redfish 500 is an observation error; a failed PSU is the power detector's") {
  ObsLab o;
  o.AddBmc();
  const std::string plan = o.Plan("bmc", "");
  const std::string db = o.lab->dir() + "/b.db", log = o.lab->dir() + "/b.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  REQUIRE_MESSAGE(WaitFor([&] { return ReadText(log).find("host00: redfish: unavailable: ") != std::string::npos; }, 15),
                  ReadText(log));
  o.SetRedfish("host00", "psu_critical.json", 200);
  CHECK_MESSAGE(WaitExit(pid, 40) == 0, ReadText(log));
  const Ran r = Read(db);
  REQUIRE_MESSAGE(Count(r.detections, "power") == 1, ReadText(log));
  auto model = cluster::LoadRackModel("gb200-nvl72");
  REQUIRE(model.ok());
  auto topo = cluster::Topology::Build(*model, 1, 0);
  REQUIRE(topo.ok());
  const auto power = *std::find_if(r.detections.begin(), r.detections.end(), [](const auto& d) { return d.detector == "power"; });
  CHECK(power.component == *topo->Find("r01.shelf1.psu1"));
  bool http500 = false;
  for (const auto& a : r.observe_errors) http500 = http500 || a.detail.find("host00: redfish: unavailable: ") == 0;
  CHECK(http500);
}

TEST_CASE("observe on real hosts: safety.abort.gpu_temperature stops the run on nvidia-smi's temperature") {
  ObsLab o;
  const std::string plan = o.Plan("abort", "safety: {abort: {gpu_temperature: 85}}\n");
  const std::string db = o.lab->dir() + "/a.db", log = o.lab->dir() + "/a.log";
  const pid_t pid = SpawnRackchaos({"run", plan, "--db", db}, log);
  REQUIRE(pid > 0);
  REQUIRE_MESSAGE(WaitFor([&] { return o.lab->PowerLimit(0, 0) == "600.00"; }, 15), ReadText(log));
  o.SetNvsmi("host00", "hot.csv");
  const int rc = WaitExit(pid, 40);
  CHECK_MESSAGE(rc != 0, ReadText(log));
  const Ran r = Read(db);
  CHECK(r.run.status == "aborted");
  CHECK_MESSAGE(ReadText(log).find("r01.tray01.gpu0 at 93 C, above safety.abort.gpu_temperature 85") != std::string::npos,
                ReadText(log));
  CHECK(o.lab->PowerLimit(0, 0) == "1200.00");  // the abort reverted the fault
}

}  // namespace
}  // namespace rackchaos::runner
