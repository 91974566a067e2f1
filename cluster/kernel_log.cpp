#include "cluster/kernel_log.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace rackchaos::cluster {
namespace {

struct LogTime {
  int64_t uptime_us = 0;
  std::chrono::sys_seconds wall;
  int micros = 0;  // sub-second part of the wall time
};

LogTime MakeTime(double uptime_s) {
  LogTime t;
  if (std::isfinite(uptime_s) && uptime_s > 0) t.uptime_us = std::llround(uptime_s * 1e6);
  t.wall = std::chrono::sys_seconds(std::chrono::seconds(kSimulatedBootUnixSeconds + t.uptime_us / 1000000));
  t.micros = static_cast<int>(t.uptime_us % 1000000);
  return t;
}

const char* MonthName(unsigned month) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  return kMonths[(month - 1) % 12];
}

const char* WeekdayName(unsigned weekday) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  return kDays[weekday % 7];
}

struct Civil {
  int year;
  unsigned month, day, weekday, hour, minute, second;
};

Civil ToCivil(std::chrono::sys_seconds wall) {
  using namespace std::chrono;
  auto day_start = floor<days>(wall);
  year_month_day ymd{day_start};
  hh_mm_ss hms{wall - day_start};
  return {static_cast<int>(ymd.year()),
          static_cast<unsigned>(ymd.month()),
          static_cast<unsigned>(ymd.day()),
          weekday{day_start}.c_encoding(),
          static_cast<unsigned>(hms.hours().count()),
          static_cast<unsigned>(hms.minutes().count()),
          static_cast<unsigned>(hms.seconds().count())};
}

// "[ 1234.567890]": the kernel pads the seconds to five columns.
std::string DmesgTime(const LogTime& t) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "[%5lld.%06lld]", static_cast<long long>(t.uptime_us / 1000000),
                static_cast<long long>(t.uptime_us % 1000000));
  return buf;
}

// The prefix in front of the driver's text, including the separating space ("" for kBare).
std::string Prefix(LogStyle style, double uptime_s, const std::string& host) {
  LogTime t = MakeTime(uptime_s);
  Civil c = ToCivil(t.wall);
  char buf[96];
  switch (style) {
    case LogStyle::kDmesg: return DmesgTime(t) + " ";
    case LogStyle::kDmesgT:  // strftime "%a %b %e %H:%M:%S %Y"
      std::snprintf(buf, sizeof buf, "[%s %s %2u %02u:%02u:%02u %d] ", WeekdayName(c.weekday),
                    MonthName(c.month), c.day, c.hour, c.minute, c.second, c.year);
      return buf;
    case LogStyle::kJournal:  // journalctl's short format zero-pads the day
      std::snprintf(buf, sizeof buf, "%s %02u %02u:%02u:%02u ", MonthName(c.month), c.day, c.hour, c.minute,
                    c.second);
      return buf + host + " kernel: ";
    case LogStyle::kSyslog:  // rsyslog's high-precision RFC 3339 time, then the kernel's own time
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02u:%02u:%02u.%06d+00:00 ", c.year, c.month, c.day,
                    c.hour, c.minute, c.second, t.micros);
      return buf + host + " kernel: " + DmesgTime(t) + " ";
    case LogStyle::kBare: break;
  }
  return "";
}

// ", pid=..., name=..." or "" per the contract in the header.
std::string OwnerFields(const XidLine& line) {
  bool has_name = !line.process_name.empty();
  if (!line.pid && !has_name && !line.unknown_owner) return "";
  std::string pid = line.pid ? std::to_string(*line.pid) : "'<unknown>'";
  return ", pid=" + pid + ", name=" + (has_name ? line.process_name : "<unknown>");
}

}  // namespace

std::string FormatKernelLine(std::string_view text, LogStyle style, double uptime_s,
                             const std::string& host) {
  return Prefix(style, uptime_s, host).append(text);
}

std::string FormatXidLine(const XidLine& line, LogStyle style, double uptime_s, const std::string& host) {
  std::string text = "NVRM: Xid (PCI:" + line.pci + "): " + std::to_string(line.code);
  text += OwnerFields(line);
  std::string message = line.message.empty() ? DefaultXidMessage(line.code) : line.message;
  if (!message.empty()) text += ", " + message;
  return FormatKernelLine(text, style, uptime_s, host);
}

std::string FormatSxidLine(const SxidLine& line, LogStyle style, double uptime_s, const std::string& host) {
  std::string text = "nvidia-nvswitch" + std::to_string(line.nvswitch) + ": SXid (PCI:" + line.pci +
                     "): " + std::to_string(line.code) + (line.fatal ? ", Fatal" : ", Non-fatal");
  if (!line.message.empty()) text += ", " + line.message;
  return FormatKernelLine(text, style, uptime_s, host);
}

const char* DefaultXidMessage(int code) {
  switch (code) {
    case 13: return "Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Illegal Instruction Parameter";
    case 31:
      return "Ch 00000010, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ "
             "0x7f2c_4a000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ";
    case 43: return "Ch 00000008";
    case 45: return "Ch 00000008";
    case 46: return "GPU stopped processing";
    case 48:
      return "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer "
             "at partition 6, subpartition 0.";
    case 62: return "Internal micro-controller halt";
    case 63: return "Row Remapper: New row marked for remapping, reset gpu to activate.";
    case 64: return "Row Remapper: Failed to record a row remapping.";
    case 74: return "NVLink: fatal error detected on link 0(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)";
    case 79: return "GPU has fallen off the bus.";
    case 94: return "Contained: CE User Channel (0x9). RST: No, D-RST: No";
    case 95: return "Uncontained: FBHUB. RST: Yes, D-RST: No";
    case 109: return "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005";
    case 119:
      return "Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 "
             "(GSP_RM_CONTROL) (0x20801702 0x4).";
    case 120: return "GSP Error: Task 1 raised error code 0x5 for reason 0x0";
    case 136: return "GPU error, reset required";
    case 140: return "An unrecoverable ECC error escaped containment";
    case 143: return "GPU initialization failure";
    case 144:
    case 145:
    case 146:
    case 147:
    case 148:
    case 150: return "NVLink: Link 0 error (0x00000000)";
    case 149:
      return "NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x000625c6 0x00000000 0x00000000 0x00000000 "
             "0x00000000 0x00000000)";
    case 154: return "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)";
    default: return "";
  }
}

std::string NvlinkXidMessage(int code, int link) {
  char buf[160];
  if (code == 74) {
    std::snprintf(buf, sizeof buf,
                  "NVLink: fatal error detected on link %d(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)", link);
  } else if (code == 149) {
    std::snprintf(buf, sizeof buf,
                  "NETIR_LINK_EVT Fatal XC0 i0 Link %02d (0x000625c6 0x00000000 0x00000000 "
                  "0x00000000 0x00000000 0x00000000)",
                  link);
  } else {
    std::snprintf(buf, sizeof buf, "NVLink: Link %d error (0x00000000)", link);
  }
  return buf;
}

std::string RecoveryActionMessage(int from, int to) {
  static constexpr const char* kNames[] = {"None",      "GPU Reset Required", "Node Reboot Required",
                                           "Drain P2P", "Drain and Reset",    "Recover IMEX Domain",
                                           "Bus Reset", "System Reboot"};
  auto name = [](int a) { return (a >= 0 && a < 8) ? kNames[a] : "Unknown"; };
  char buf[160];
  std::snprintf(buf, sizeof buf, "GPU recovery action changed from 0x%x (%s) to 0x%x (%s)",
                static_cast<unsigned>(from), name(from), static_cast<unsigned>(to), name(to));
  return buf;
}

}  // namespace rackchaos::cluster
