// The line families sites have, each from a verbatim public sample (tests/data/kernel_logs/README.md
// and tests/runner/incident/samples/SOURCES.md say where each line comes from): what the importer
// makes of every one of them.
#include <doctest/doctest.h>

#include <string>

#include "runner/incident/importer.h"
#include "tests/runner/incident/import_util.h"

namespace ri = rackchaos::incident;
using ri::testing::Kind;

namespace {

ri::Incident FromFile(const std::string& relative, ri::ImportOptions options = {}) {
  return ri::testing::ImportSourceFile(relative, options);
}

}  // namespace

TEST_CASE("family mlx5, current wording: 'Port: N Link INIT|ACTIVE|DOWN' from the RDMA core (journal and dmesg)") {
  auto journal = FromFile("tests/data/kernel_logs/mlx5_port_state_journal.log", {2026, std::nullopt, {}, {}, {}});
  // INIT is the step before ACTIVE: understood, no event. ACTIVE is the link up.
  REQUIRE(journal.events.size() == 1);
  CHECK(Kind(journal.events[0]) == "nic_up");
  CHECK(journal.events[0].host == "000-000-00000-1-gpu-1");
  CHECK(journal.events[0].address == "0000:ab:00.0");
  CHECK(journal.events[0].iface == "mlx5_5");
  CHECK(journal.events[0].link == 1);
  CHECK(journal.not_understood == 7);  // systemd, workqueue and EXT4 lines; not the two mlx5 lines
  for (const auto& [pattern, count] : journal.patterns) CHECK(pattern.find("Port: # Link") == std::string::npos);

  auto patch = FromFile("tests/data/kernel_logs/mlx5_port_state_patch.log");
  REQUIRE(patch.events.size() == 2);
  CHECK(Kind(patch.events[0]) == "nic_down");
  CHECK(patch.events[0].iface == "mlx5_0");
  CHECK(patch.events[0].fatal());
  CHECK(Kind(patch.events[1]) == "nic_up");
  CHECK(patch.events[1].iface == "rdmap8s0f0");
  CHECK(patch.events[1].link == 2);
  CHECK(patch.not_understood == 0);
}

TEST_CASE("family mlx5, older wording: netdev 'Link up' and 'Port module event' (plugged, error behind a function prefix)") {
  auto up = FromFile("tests/data/kernel_logs/mlx5_link_journal.log", {2026, std::nullopt, {}, {}, {}});
  REQUIRE(up.events.size() == 2);
  CHECK(Kind(up.events[0]) == "nic_up");
  CHECK(up.events[0].host == "cc1");
  CHECK(up.events[0].iface == "eth1");
  auto module = FromFile("tests/data/kernel_logs/mlx5_module_dmesg.log");
  CHECK(module.events.empty());  // "Cable plugged" is understood (the link comes up on its own line)
  CHECK(module.not_understood == 7);
  // mlx5_core_err() lines carry "function:line:(pid N): " before the text; an [error] module event
  // disables the module: the link is down.
  auto error = [] {
    ri::IncidentImporter importer;
    importer.ImportText("[ 5.0] mlx5_core 0000:5c:00.0: mlx5_port_module_event:1131:(pid 0): Port module event[error]: "
                        "module 0, Cable error, High Temperature\n",
                        "t.log");
    return importer.Finish();
  }();
  REQUIRE(error.events.size() == 1);
  CHECK(Kind(error.events[0]) == "nic_down");
  CHECK(error.events[0].address == "0000:5c:00.0");
}

TEST_CASE("family NVRM Xid: dmesg --ctime, the 590 driver's 'caused by previous Xid', NVLink5 words, MIG instances") {
  auto ctime = FromFile("tests/data/kernel_logs/xid_dmesg_ctime.log");
  REQUIRE(ctime.events.size() == 4);
  CHECK(ctime.events[3].code == 109);
  CHECK(ctime.events[3].fatal());               // reset_gpu in the catalogue
  CHECK_FALSE(ctime.events[0].fatal());         // 13: restart the application
  CHECK(ctime.events[0].severity == ri::Severity::kNonFatal);

  auto caused = FromFile("tests/data/kernel_logs/xid_caused_by_590.log");
  REQUIRE(caused.events.size() == 8);
  for (const auto& e : caused.events) CHECK(e.code == 45);
  // The log holds no 149 or 145 line, so the named causes are not linked, and the 45s stay non-fatal.
  for (const auto& e : caused.events) CHECK(e.caused_by == -1);
  auto linked = [] {
    ri::IncidentImporter importer;
    importer.ImportText(
        "[ 10.0] NVRM: Xid (PCI:0000:dc:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 14 (0x0004c5a2 0x0)\n"
        "[ 99.0] NVRM: Xid (PCI:0000:ed:00): 79, GPU has fallen off the bus.\n"
        "[900.0] NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149\n",
        "t.log");
    return importer.Finish();
  }();
  REQUIRE(linked.events.size() == 3);
  CHECK(linked.events[2].caused_by == 0);  // named by the driver: any distance, the same GPU

  auto nvlink = FromFile("tests/data/kernel_logs/xid_nvlink5_kmsg.log");
  REQUIRE(nvlink.events.size() == 4);
  CHECK(nvlink.events[0].severity == ri::Severity::kNonFatal);  // "SAW_MVB Nonfatal"
  CHECK(nvlink.events[1].fatal());                               // "NETIR_LINK_EVT Fatal"
  CHECK(nvlink.events[1].link == 0);
  CHECK(nvlink.events[2].fatal());
  CHECK_FALSE(nvlink.events[2].link.has_value());  // "Link -1": no one link
  CHECK(nvlink.events[3].severity == ri::Severity::kNonFatal);

  auto mig = FromFile("tests/data/kernel_logs/xid_mig_instance.log");
  REQUIRE(mig.events.size() == 3);
  CHECK(mig.events[0].address == "0000:01:00");
  CHECK(mig.events[0].code == 94);
  CHECK(mig.events[0].detail.find("GPU-I:05") != std::string::npos);
  CHECK(mig.events[2].code == 95);
  CHECK(mig.events[2].fatal());
  CHECK(mig.not_understood == 0);
}

TEST_CASE("family NVRM without an Xid line: a GPU off the bus over three lines, and dmesg -x with ISO stamps") {
  auto off = FromFile("tests/data/kernel_logs/nvrm_fallen_off_multiline.log");
  REQUIRE(off.events.size() == 1);
  CHECK(off.events[0].code == 79);
  CHECK(off.events[0].address == "0000:b3:00");
  CHECK(off.events[0].action == "reboot_node");
  CHECK(off.events[0].time.seconds == doctest::Approx(1843.308145));
  CHECK(off.not_understood == 2);  // the probe failure and the module load lines

  auto iso = FromFile("tests/data/kernel_logs/dmesg_iso_decode.log");
  REQUIRE(iso.events.size() == 1);
  CHECK(iso.events[0].code == 79);
  CHECK(iso.events[0].time.axis == ri::TimeAxis::kWall);
  CHECK(iso.events[0].host.empty());  // dmesg prints no host
  CHECK(iso.patterns.count("hello") == 1);  // the decode prefix and the stamp are not part of the pattern
}

TEST_CASE("a host-less line takes --host; FILE=NODE wins for its file") {
  ri::ImportOptions options;
  options.host = "node07";
  options.host_by_file["b.log"] = "node09";
  ri::IncidentImporter importer(options);
  importer.ImportText("[Mon Nov 30 06:02:21 2026] NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n", "a.log");
  importer.ImportText("[Mon Nov 30 06:02:22 2026] NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n", "b.log");
  importer.ImportText("[2026-11-30T06:03:00] update_node: node n3 state set to DRAIN\n", "c.log");
  auto inc = importer.Finish();
  REQUIRE(inc.events.size() == 3);
  CHECK(inc.events[0].host == "node07");
  CHECK(inc.events[1].host == "node09");
  CHECK(inc.events[2].host == "n3");  // Slurm names its node
}
