// nvidia-smi nvlink -s / -e on verbatim output (samples/nvlink) and on bad input.
#include <doctest/doctest.h>

#include <algorithm>

#include "runner/site/observe/nvlink_status.h"
#include "tests/site/observe/samples.h"

namespace ob = rackchaos::observe;
using ob::Problem;
using ob::testing::Count;
using ob::testing::ErrorFor;
using ob::testing::Sample;
using rackchaos::cluster::LinkStateChange;

namespace {

ob::HostMap Host(int gpus, int ports) {
  ob::HostMap h;
  h.host = "tray07";
  h.node = 7;
  h.nvlink_ports = ports;
  for (int i = 0; i < gpus; ++i) {
    ob::GpuAddress a;
    a.gpu = static_cast<rackchaos::ComponentId>(100 + i);
    a.index = i;
    h.gpus.push_back(a);
  }
  return h;
}

std::vector<LinkStateChange> Links(const ob::Observed& o) {
  std::vector<LinkStateChange> out;
  for (const auto& b : o.observations)
    if (const auto* l = std::get_if<LinkStateChange>(&b)) out.push_back(*l);
  return out;
}

size_t Down(const ob::Observed& o) {
  auto l = Links(o);
  return static_cast<size_t>(std::count_if(l.begin(), l.end(), [](const LinkStateChange& c) { return !c.up; }));
}

}  // namespace

TEST_CASE("nvlink -s: every port of the H100 capture is up") {
  ob::Observed o = ob::ParseNvlinkStatus(Sample("nvlink/h100_590_status.txt"), Host(1, 18));
  INFO(ob::testing::AllErrors(o));
  CHECK(o.errors.empty());
  CHECK(Links(o).size() == 18);
  CHECK(Down(o) == 0);
}

TEST_CASE("nvlink -s: <inactive> ports are down, and the ports a block lacks are missing") {
  ob::HostMap h = Host(4, 6);
  ob::Observed o = ob::ParseNvlinkStatus(Sample("nvlink/v100_inactive.txt"), h);
  CHECK(Down(o) == 2);
  auto links = Links(o);
  CHECK(std::any_of(links.begin(), links.end(), [](auto& l) { return l.component == 103 && l.port == 3 && !l.up; }));
  CHECK(std::any_of(links.begin(), links.end(), [](auto& l) { return l.component == 103 && l.port == 5 && !l.up; }));
  // The issue shows GPU 3 only: GPUs 0-2 are missing, not up.
  CHECK(Count(o, Problem::kMissing) == 3);
  CHECK(o.errors.size() == 3);
}

TEST_CASE("nvlink -s: whole-GPU lines") {
  // All links inactive on a model with NVLink: every port down.
  ob::Observed all = ob::ParseNvlinkStatus(Sample("nvlink/rtx2080_all_inactive.txt"), Host(1, 18));
  CHECK(Down(all) == 18);
  CHECK(all.errors.empty());
  // The same line on a model without NVLink says nothing.
  CHECK(ob::ParseNvlinkStatus(Sample("nvlink/rtx2080_all_inactive.txt"), Host(1, 0)).observations.empty());
  ob::Observed none = ob::ParseNvlinkStatus(Sample("nvlink/l40s_no_nvlink.txt"), Host(1, 18));
  CHECK(ErrorFor(none, 100, Problem::kToolError));
  ob::Observed mig = ob::ParseNvlinkStatus(Sample("nvlink/h100_mig.txt"), Host(1, 18));
  REQUIRE(ErrorFor(mig, 100, Problem::kNotSupported));
  CHECK(ErrorFor(mig, 100, Problem::kNotSupported)->ToString() ==
        "tray07: nvidia-smi nvlink: not_supported: GPU 0: Nvlink queries are not supported for Devices in MIG mode");
}

TEST_CASE("nvlink -s: the GB200 sample cut short by its author") {
  ob::Observed o = ob::ParseNvlinkStatus(Sample("nvlink/gb200_status_elided.txt"), Host(2, 18));
  CHECK(Links(o).size() == 20);
  CHECK(Down(o) == 0);
  REQUIRE(ErrorFor(o, 101, Problem::kMissing));  // ports 2-17 of GPU 1
  CHECK(ErrorFor(o, 101, Problem::kMissing)->what.find("no state for port(s) 2,3,") != std::string::npos);
  CHECK(ErrorFor(o, 101, Problem::kUnreadable));  // the "..." line
}

TEST_CASE("nvlink -s: bad input") {
  ob::Observed o = ob::ParseNvlinkStatus("GPU 0: x (UUID: GPU-a)\n\t Link 0: fast\n\t Link 0: 26.562 GB/s\n"
                                         "\t Link 0: <inactive>\nGPU 9: y\n",
                                         Host(1, 2));
  CHECK(Count(o, Problem::kUnreadable) == 2);  // no state; a repeated port
  CHECK(Count(o, Problem::kUnmapped) == 1);    // GPU 9
  CHECK(Count(o, Problem::kMissing) == 1);     // port 1
  CHECK(o.errors.front().ToString().rfind("tray07: nvidia-smi nvlink: unreadable: line 2 has no state", 0) == 0);
}

TEST_CASE("nvlink -e: counters per port") {
  ob::NvlinkCounters c = ob::ParseNvlinkErrors(Sample("nvlink/h100_errors_elided.txt"), Host(1, 18));
  REQUIRE(c.ports.size() == 3);
  CHECK(c.ports[2].port == 17);
  CHECK(c.ports[2].replay == 0);
  CHECK(c.ports[2].crc == 0);
  CHECK(c.errors.size() == 1);  // the author's "[...]"
  ob::NvlinkCounters d = ob::ParseNvlinkErrors("GPU 0: x\n\t Link 3: Replay Errors: 2353\n\t Link 3: CRC Errors: 65535\n"
                                               "\t Link 4: Weird Errors: 1\n",
                                               Host(1, 18));
  REQUIRE(d.ports.size() == 1);
  CHECK(d.ports[0].replay == 2353);
  CHECK(d.ports[0].crc == 65535);
  CHECK(d.ports[0].recovery == -1);
  CHECK(d.errors.size() == 1);
}
