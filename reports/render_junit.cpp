// RenderJunit: the run as JUnit XML, so CI (Jenkins, GitLab) shows expectations and recoveries as
// test cases. Shape and attribute types follow the Jenkins junit-10 / windyroad JUnit schema
// (tests/reports/data/junit.xsd is our checked-in subset of it).
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "reports/escape.h"
#include "reports/render.h"

namespace rackchaos::reports {
namespace {

struct Case {
  Case(std::string cls, std::string case_name) : classname(std::move(cls)), name(std::move(case_name)) {}
  std::string classname, name;
  double time_s = 0;
  enum Outcome { kPass, kFailure, kError } outcome = kPass;
  std::string message, type, body;
};

// JUnit timestamps are ISO-8601 without a zone (UTC implied): "2025-01-02T03:04:05".
std::string Timestamp(const std::string& wall) {
  std::string t = wall.substr(0, 19);
  return t.size() == 19 ? t : "1970-01-01T00:00:00";
}

std::string Seconds(double s) { return Fixed(s, 3); }

Case GateCase(const std::string& suite, const GateRow& g) {
  Case c(suite + ".expectations", g.text);
  if (!g.passed) {
    c.outcome = Case::kFailure;
    c.message = g.message;
    c.type = "ExpectationFailed";
    c.body = "metric " + g.metric + " " + g.op + " " + Num(g.value) + "; actual " +
             (std::isfinite(g.actual) ? Num(g.actual) : "none (never happened)");
  }
  return c;
}

Case RecoveryCase(const std::string& suite, const FaultMetrics& f) {
  Case c(suite + ".recovery",
         "fault #" + std::to_string(f.fault) + " " + f.kind + " " + f.target + " recovered");
  if (f.time_to_recover) {
    c.time_s = f.time_to_recover->Seconds();
    return c;
  }
  c.outcome = Case::kFailure;
  c.type = "NotRecovered";
  c.message = "fault #" + std::to_string(f.fault) + " " + f.kind + " on " + f.target +
              " injected at " + FormatDuration(f.injected) + " never recovered (no time to recover)";
  c.body = "time to detect: " + (f.time_to_detect ? FormatDuration(*f.time_to_detect) : "-") +
           "\ntime to isolate: " + (f.time_to_isolate ? FormatDuration(*f.time_to_isolate) : "-") +
           "\njobs touched: " + std::to_string(f.jobs_touched) +
           "\nGPU-hours lost: " + Fixed(f.gpu_hours_lost, 2);
  return c;
}

// A run that did not finish normally is an error of the suite itself, not a failed expectation.
bool RunErrored(const RunRow& r) {
  return r.status == "error" || r.status == "interrupted" || r.status == "aborted" ||
         r.status == "running";
}

std::vector<Case> Cases(const RunReport& r, const std::string& suite) {
  std::vector<Case> cases;
  for (const GateRow& g : r.gates) cases.push_back(GateCase(suite, g));
  for (const FaultMetrics& f : r.metrics.faults) cases.push_back(RecoveryCase(suite, f));
  if (RunErrored(r.run)) {
    Case c(suite + ".run", "run completed");
    c.outcome = Case::kError;
    c.type = r.run.status;
    c.message = "run " + std::to_string(r.run.id) + " ended as '" + r.run.status + "'" +
                (r.run.failed_reason.empty() ? "" : ": " + r.run.failed_reason);
    cases.push_back(c);
  }
  return cases;
}

std::string CaseXml(const Case& c) {
  std::string out = "    <testcase classname=\"" + XmlEscape(c.classname) + "\" name=\"" +
                    XmlEscape(c.name) + "\" time=\"" + Seconds(c.time_s) + "\"";
  if (c.outcome == Case::kPass) return out + "/>\n";
  const char* tag = c.outcome == Case::kFailure ? "failure" : "error";
  out += ">\n      <" + std::string(tag) + " message=\"" + XmlEscape(c.message) + "\" type=\"" +
         XmlEscape(c.type) + "\">" + XmlEscape(c.body) + "</" + tag + ">\n    </testcase>\n";
  return out;
}

std::string Properties(const RunRow& r) {
  std::string out = "    <properties>\n";
  auto prop = [&](const char* name, const std::string& value) {
    out += "      <property name=\"" + std::string(name) + "\" value=\"" + XmlEscape(value) + "\"/>\n";
  };
  prop("run", std::to_string(r.id));
  prop("plan", r.info.plan_path.empty() ? r.info.plan_name : r.info.plan_path);
  prop("plan_hash", r.info.plan_hash);
  prop("seed", std::to_string(r.info.seed));
  prop("backend", r.info.backend);
  prop("version", r.info.version);
  prop("status", r.status);
  return out + "    </properties>\n";
}

}  // namespace

std::string RenderJunit(const RunReport& report) {
  const RunRow& r = report.run;
  std::string suite = "rackchaos." + r.info.plan_name;
  std::vector<Case> cases = Cases(report, suite);
  int failures = 0, errors = 0;
  double total = 0;
  for (const Case& c : cases) {
    failures += c.outcome == Case::kFailure;
    errors += c.outcome == Case::kError;
    total += c.time_s;
  }
  std::string counts = "tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
                       std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"rackchaos\" " + counts + " time=\"" + Seconds(total) + "\">\n";
  out += "  <testsuite name=\"" + XmlEscape(suite + ".run" + std::to_string(r.id)) + "\" " + counts +
         " skipped=\"0\" time=\"" + Seconds(total) + "\" timestamp=\"" +
         Timestamp(r.info.started_wall) + "\" hostname=\"" +
         XmlEscape(r.info.host.empty() ? "localhost" : r.info.host) + "\" id=\"0\" package=\"" +
         XmlEscape(suite) + "\">\n";
  out += Properties(r);
  for (const Case& c : cases) out += CaseXml(c);
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace rackchaos::reports
