// A qualification as JUnit XML, for CI systems: stages are test suites, plans are test cases.
#include <filesystem>
#include <map>

#include "reports/escape.h"
#include "runner/campaign/qualify.h"

namespace rackchaos::runner {
namespace {

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  void Add(const std::string& verdict) {
    ++tests;
    failures += verdict == "failed" || verdict == "aborted";
    errors += verdict == "error" || verdict == "interrupted";
    skipped += verdict == "skipped";
  }
  std::string Attributes() const {
    return " tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
           std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) + "\"";
  }
};

std::string TestCase(const QualifiedPlan& p) {
  using reports::XmlEscape;
  std::string name = std::filesystem::path(p.plan.path).filename().string();
  std::string out = "    <testcase classname=\"" + XmlEscape(p.plan.stage) + "\" name=\"" + XmlEscape(name) + "\"";
  if (p.verdict == "passed") return out + "/>\n";
  const std::string msg = XmlEscape(p.verdict + (p.reason.empty() ? "" : ": " + p.reason));
  const char* tag = p.verdict == "skipped" ? "skipped" : p.verdict == "failed" || p.verdict == "aborted" ? "failure" : "error";
  out += ">\n      <" + std::string(tag) + " message=\"" + msg + "\"/>\n";
  if (p.run_id) out += "      <system-out>run " + std::to_string(*p.run_id) + "</system-out>\n";
  return out + "    </testcase>\n";
}

}  // namespace

std::string QualificationJUnit(const Qualification& q) {
  using reports::XmlEscape;
  Counts all;
  std::map<std::string, Counts> per_stage;
  std::vector<std::string> order;
  for (const QualifiedPlan& p : q.plans) {
    all.Add(p.verdict);
    if (!per_stage.count(p.plan.stage)) order.push_back(p.plan.stage);
    per_stage[p.plan.stage].Add(p.verdict);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"qualify " + XmlEscape(q.suite) +
                    " rack " + XmlEscape(q.rack) + "\"" + all.Attributes() + ">\n";
  for (const std::string& stage : order) {
    out += "  <testsuite name=\"" + XmlEscape(stage) + "\"" + per_stage[stage].Attributes() + ">\n";
    for (const QualifiedPlan& p : q.plans)
      if (p.plan.stage == stage) out += TestCase(p);
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

}  // namespace rackchaos::runner
