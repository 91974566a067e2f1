// nvidia-smi --query-gpu and dcgmi dmon on verbatim captures (samples/nvsmi, samples/dcgmi) and on
// bad input: every missing value is an observation error naming the host and the source.
#include <doctest/doctest.h>

#include "runner/site/observe/dcgmi_dmon.h"
#include "runner/site/observe/gpu_reading.h"
#include "runner/site/observe/nvsmi_query.h"
#include "tests/site/observe/samples.h"

namespace ob = rackchaos::observe;
using ob::Problem;
using ob::testing::Count;
using ob::testing::ErrorFor;
using ob::testing::Sample;
using ob::testing::SampleOf;
using rackchaos::cluster::Metric;

namespace {

ob::GpuAddress G(rackchaos::ComponentId gpu, int index, std::string pci, double max_sm_mhz = 0) {
  ob::GpuAddress a;
  a.gpu = gpu;
  a.index = index;
  a.pci = std::move(pci);
  a.max_sm_mhz = max_sm_mhz;
  return a;
}

ob::HostMap Tray(std::vector<ob::GpuAddress> gpus) {
  ob::HostMap h;
  h.host = "tray07";
  h.node = 7;
  h.gpus = std::move(gpus);
  return h;
}

// Four GPUs on the buses of the standard query lines below.
ob::HostMap FourGpus() {
  return Tray({G(100, 0, "0000:3b:00"), G(101, 1, "0000:5e:00"), G(102, 2, "0000:86:00"), G(103, 3, "0000:af:00")});
}

}  // namespace

TEST_CASE("nvidia-smi: the H100 captures with header and units give every sample and no error") {
  ob::HostMap h = Tray({G(100, 0, "0000:00:09")});
  ob::Observed idle = ob::ParseNvidiaSmiQuery(Sample("nvsmi/h100_590_idle_full.csv"), h);
  INFO(ob::testing::AllErrors(idle));
  CHECK(idle.errors.empty());
  CHECK(SampleOf(idle, 100, Metric::kGpuTemperature) == 41);
  CHECK(SampleOf(idle, 100, Metric::kGpuPower) == doctest::Approx(69.85));
  CHECK(SampleOf(idle, 100, Metric::kGpuClockFraction) == doctest::Approx(345.0 / 1980));
  CHECK(SampleOf(idle, 100, Metric::kThermalThrottle) == 0);  // 0x1: idle, not heat
  ob::Observed load = ob::ParseNvidiaSmiQuery(Sample("nvsmi/h100_590_load_full.csv"), h);
  CHECK(load.errors.empty());
  CHECK(SampleOf(load, 100, Metric::kGpuTemperature) == 59);
  CHECK(SampleOf(load, 100, Metric::kGpuPower) == doctest::Approx(631.95));
  CHECK(SampleOf(load, 100, Metric::kGpuClockFraction) == doctest::Approx(1.0));
}

TEST_CASE("nvidia-smi: the standard query, the older throttle-reasons name and the tool's own words") {
  ob::HostMap h = FourGpus();
  std::string out =
      "0, 00000000:3B:00.0, 41, 612.50, 1000.00, 1965, 1965, 0x0000000000000000\n"
      "1, 00000000:5E:00.0, [N/A], 598.10, 1000.00, 1965, 1965, 0x0000000000000004\n"
      "2, 00000000:86:00.0, 88, [Not Supported], 1000.00, 1110, 1965, 0x0000000000000048\n"
      "3, 00000000:AF:00.0, 40, 300.00, 1000.00, [Unknown Error], 1965, 0x0000000000000000\n";
  ob::Observed o = ob::ParseNvidiaSmiQuery(out, h);
  CHECK(SampleOf(o, 100, Metric::kGpuPower) == 612.5);
  CHECK(SampleOf(o, 101, Metric::kGpuTemperature) == -1);
  REQUIRE(ErrorFor(o, 101, Problem::kMissing));
  CHECK(ErrorFor(o, 101, Problem::kMissing)->ToString() == "tray07: nvidia-smi: missing: GPU 1 (0000:5e:00) temperature.gpu: [N/A]");
  CHECK(SampleOf(o, 101, Metric::kThermalThrottle) == 0);  // a power cap is not heat
  CHECK(SampleOf(o, 101, Metric::kPowerCapped) == 1);      // 0x4 SW power cap
  CHECK(SampleOf(o, 100, Metric::kPowerCapped) == 0);
  REQUIRE(ErrorFor(o, 102, Problem::kNotSupported));
  CHECK(SampleOf(o, 102, Metric::kThermalThrottle) == 1);  // 0x40 HW thermal slowdown
  CHECK(SampleOf(o, 102, Metric::kPowerCapped) == 0);      // 0x8 HW slowdown is not the power cap
  CHECK(SampleOf(o, 102, Metric::kGpuClockFraction) == doctest::Approx(1110.0 / 1965));
  REQUIRE(ErrorFor(o, 103, Problem::kToolError));
  CHECK(ErrorFor(o, 103, Problem::kToolError)->what == "GPU 3 (0000:af:00) clocks.sm: [Unknown Error]");
  CHECK(o.errors.size() == 3);

  // The pre-535 name, with a header and units.
  std::string old = "index, pci.bus_id, temperature.gpu, power.draw [W], clocks_throttle_reasons.active\n"
                    "0, 00000000:3B:00.0, 70, 650.00 W, 0x0000000000000020\n";
  ob::Observed o2 = ob::ParseNvidiaSmiQuery(old, Tray({G(100, 0, "0000:3b:00", 1980)}));
  CHECK(SampleOf(o2, 100, Metric::kThermalThrottle) == 1);  // SW thermal slowdown
  CHECK(SampleOf(o2, 100, Metric::kGpuPower) == 650);
  CHECK(Count(o2, Problem::kUnreadable) == 1);  // clocks.sm is not a column of this output
}

TEST_CASE("nvidia-smi: bad input is an observation error naming host and source, never a crash") {
  ob::HostMap h = FourGpus();
  SUBCASE("a garbled line and a missing column") {
    ob::Observed o = ob::ParseNvidiaSmiQuery("0, 00000000:3B:00.0, 41, 612.5\n\x01\x02 garbage\n", h);
    CHECK(Count(o, Problem::kUnreadable) == 2);
    CHECK(o.errors.front().ToString().rfind("tray07: nvidia-smi: unreadable: line 1 has 4 cells, expected 8", 0) == 0);
    CHECK(Count(o, Problem::kMissing) == 4);  // and no GPU is read as healthy
    CHECK(o.observations.empty());
  }
  SUBCASE("an unknown clock event bit") {
    ob::Observed o = ob::ParseNvidiaSmiQuery("0, 00000000:3B:00.0, 41, 612.50, 1000.00, 1965, 1965, 0x0000000000000244\n", h);
    const ob::ObservationError* e = ErrorFor(o, 100, Problem::kUnknownBits);
    REQUIRE(e);
    CHECK(e->ToString() ==
          "tray07: nvidia-smi: unknown_bits: GPU 0 (0000:3b:00) clocks_event_reasons.active: 0x0000000000000244 has "
          "unknown bits 0x200");
    CHECK(SampleOf(o, 100, Metric::kThermalThrottle) == 1);  // the known 0x40 still counts
  }
  SUBCASE("a row for a GPU the inventory does not know, and an unreadable number") {
    ob::Observed o = ob::ParseNvidiaSmiQuery("7, 00000000:D8:00.0, 41, 612.50, 1000.00, 1965, 1965, 0x0\n"
                                             "0, 00000000:3B:00.0, 4x1, 612.50, 1000.00, 1965, 1965, 0x0\n", h);
    CHECK(Count(o, Problem::kUnmapped) == 1);
    REQUIRE(ErrorFor(o, 100, Problem::kUnreadable));
    CHECK(ErrorFor(o, 100, Problem::kUnreadable)->what == "GPU 0 (0000:3b:00) temperature.gpu: unreadable \"4x1\"");
  }
}

TEST_CASE("nvidia-smi: a GPU off the bus and a silent driver are observations, not parse failures") {
  ob::HostMap h = Tray({G(100, 0, "0000:01:00"), G(101, 1, "0000:02:00")});
  // After GPU 1 (bus 02) fell off, nvidia-smi renumbers: the row of bus 01 still maps by its bus.
  ob::Observed o = ob::ParseNvidiaSmiQuery(
      "0, 00000000:01:00.0, 41, 612.50, 1000.00, 1965, 1965, 0x0000000000000000\n" + Sample("nvsmi/gpu_lost.txt"), h);
  REQUIRE(o.devices.size() == 1);
  CHECK(o.devices[0].state == ob::DeviceState::kGpuLost);
  CHECK(o.devices[0].component == 101);
  CHECK(o.errors.empty());
  CHECK(SampleOf(o, 100, Metric::kGpuTemperature) == 41);

  for (const char* sample : {"nvsmi/driver_down.txt", "nvsmi/nvml_version_mismatch.txt"}) {
    ob::Observed d = ob::ParseNvidiaSmiQuery(Sample(sample), h);
    REQUIRE(d.devices.size() == 1);
    CHECK(d.devices[0].state == ob::DeviceState::kDriverDown);
    CHECK(d.devices[0].component == 7);
    CHECK(Count(d, Problem::kUnavailable) == 2);  // each GPU: no reading, not "healthy"
    CHECK(d.observations.empty());
  }
}

TEST_CASE("nvidia-smi: public samples with other columns name what they lack") {
  // [Unknown Error] in a consumer card's output without index or bus id: rows cannot be mapped.
  ob::Observed o = ob::ParseNvidiaSmiQuery(Sample("nvsmi/rtx2080ti_unknown_error.csv"), Tray({G(100, 0, "")}));
  CHECK(Count(o, Problem::kUnreadable) == 1);
  CHECK(o.errors.front().what.find("no readable index or pci.bus_id") != std::string::npos);
  CHECK(Count(o, Problem::kMissing) == 1);
  // 27 cells of another query against the 8 asked for.
  ob::Observed n = ob::ParseNvidiaSmiQuery(Sample("nvsmi/rtx3080_na_noheader.csv"), Tray({G(100, 0, "")}));
  CHECK(Count(n, Problem::kUnreadable) == 1);
  // A header with the bus id only, and an author's "[...]" between the rows.
  ob::Observed v = ob::ParseNvidiaSmiQuery(Sample("nvsmi/h100_vbios_elided.csv"),
                                           Tray({G(100, 0, "0000:04:00"), G(101, 7, "0000:8b:00")}));
  CHECK(ErrorFor(v, 100, Problem::kUnreadable));  // its rows exist, the telemetry columns do not
  CHECK(ErrorFor(v, 101, Problem::kUnreadable));
  CHECK(ErrorFor(v, rackchaos::kNoComponent, Problem::kUnreadable));  // the "[...]" line
}

TEST_CASE("clock event reasons decode by NVML's bits") {
  ob::ClockEventReasons r = ob::DecodeClockEventReasons(0x1ec);
  CHECK(r.sw_power_cap);
  CHECK(r.hw_slowdown);
  CHECK(r.thermal());
  CHECK(r.hw_power_brake);
  CHECK(r.display_clocks);
  CHECK_FALSE(r.gpu_idle);
  CHECK(r.unknown == 0);
  CHECK(ob::DescribeClockEventReasons(0x244) == "sw_power_cap,hw_thermal,0x200");
  CHECK(ob::DescribeClockEventReasons(0) == "none");
}

TEST_CASE("dcgmi dmon: columns by the header's positions, N/A and blank fields missing, the last Xid") {
  ob::HostMap h = Tray({G(100, 0, "0000:3b:00"), G(101, 1, ""), G(102, 2, ""), G(103, 3, "0000:af:00")});
  ob::Observed o = ob::ParseDcgmiDmon(Sample("dcgmi/dmon_gb200_constructed.txt"), h);
  CHECK(SampleOf(o, 100, Metric::kGpuPower) == doctest::Approx(612.516));
  CHECK(SampleOf(o, 102, Metric::kThermalThrottle) == 1);  // 104 = HW slowdown + SW + HW thermal
  CHECK(SampleOf(o, 102, Metric::kGpuClockFraction) == doctest::Approx(1110.0 / 1965));
  REQUIRE(ErrorFor(o, 103, Problem::kMissing));
  CHECK(ErrorFor(o, 103, Problem::kMissing)->ToString() == "tray07: dcgmi dmon: missing: GPU 3 (0000:af:00) POWER (155): N/A");
  CHECK(o.errors.size() == 1);
  REQUIRE(o.xid_gauges.size() == 4);
  CHECK(o.xid_gauges[3].code == 79);

  ob::Observed blank = ob::ParseDcgmiDmon(Sample("dcgmi/dmon_blank_field_constructed.txt"), Tray({G(100, 0, "")}));
  REQUIRE(ErrorFor(blank, 100, Problem::kMissing));
  CHECK(SampleOf(blank, 100, Metric::kGpuTemperature) == 41);

  ob::Observed down = ob::ParseDcgmiDmon(Sample("dcgmi/host_engine_down.txt"), h);
  CHECK(ErrorFor(down, 7, Problem::kUnavailable));
  CHECK(Count(down, Problem::kUnavailable) == 5);  // the node, and each GPU without a reading
  CHECK(ob::ParseDcgmiDmon("GPU 0   41\nrandom noise\n", h).errors.size() >= 2);
}
