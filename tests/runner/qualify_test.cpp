// Qualification: stages run in order, a stage runs only when the ones before passed, one record per
// rack with every plan's verdict in the database and as JUnit.
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runner/campaign/qualify.h"
#include "runner/cli/qualify_cmd.h"

using namespace rackchaos;
namespace fs = std::filesystem;

namespace {

// A tray pulled under an 8-GPU job; `gate` decides whether it passes.
std::string Plan(const std::string& name, const std::string& gate) {
  return "name: " + name + "\nseed: 3\nduration: 1h\ncluster: {model: gb200-nvl72, racks: 1, spare_trays: 2}\n"
         "workload:\n  jobs:\n    - {name: small, gpus: 8, step_time: 5s}\n"
         "faults:\n  - {at: 5m, kind: tray_pull, target: r01.tray01, for: 20m}\nexpect:\n  - \"" + gate + "\"\n";
}
const char* kPasses = "healer.false_isolations <= 1";
const char* kFails = "tti.max < 1s";  // no healer isolates a pulled tray within a second (its correlation window)

struct Dir {
  fs::path path = fs::temp_directory_path() / ("rackchaos-qualify-test-" + std::to_string(::getpid()));
  Dir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  void Write(const std::string& rel, const std::string& text) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text;
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(path / rel);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

runner::QualifyArgs Args(const Dir& d) {
  runner::QualifyArgs a;
  a.suite = (d.path / "suite").string();
  a.rack = "SIM-gb200-nvl72-r01";  // a rack of the plans' cluster: qualify refuses any other
  a.db = (d.path / "q.db").string();
  a.junit = (d.path / "q.xml").string();
  a.quiet = true;
  return a;
}

std::string Rows(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE_MESSAGE(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK, sql);
  std::string out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const unsigned char* text = sqlite3_column_text(st, i);
      out += (text ? reinterpret_cast<const char*>(text) : "") + std::string("|");
    }
    out += "\n";
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

}  // namespace

TEST_CASE("qualify: a failed stage skips the stages after it and the record says so") {
  Dir d;
  d.Write("suite/1-tray/a.yaml", Plan("a", kPasses));
  d.Write("suite/1-tray/b.yaml", Plan("b", kPasses));
  d.Write("suite/2-rack/c.yaml", Plan("c", kFails));
  d.Write("suite/2-rack/d.yaml", Plan("d", kPasses));
  d.Write("suite/3-multi-rack/e.yaml", Plan("e", kPasses));
  d.Write("suite/3-multi-rack/notes.txt", "not a plan");
  CHECK(runner::CmdQualify(Args(d)) == 1);
  const std::string db = (d.path / "q.db").string();
  CHECK(Rows(db, "SELECT id, rack, suite, verdict, exit_code FROM qualifications") == "1|SIM-gb200-nvl72-r01|suite|failed|1|\n");
  CHECK(Rows(db, "SELECT reason FROM qualifications").find("c.yaml failed: tti.max < 1s") == 0);
  // Stage 2 runs whole (d runs although c failed), stage 3 does not.
  CHECK(Rows(db, "SELECT seq, stage, run_id, verdict FROM qualification_plans ORDER BY seq") ==
        "1|1-tray|1|passed|\n2|1-tray|2|passed|\n3|2-rack|3|failed|\n4|2-rack|4|passed|\n5|3-multi-rack||skipped|\n");
  CHECK(Rows(db, "SELECT count(*) FROM runs") == "4|\n");
  std::string xml = d.Read("q.xml");
  CHECK(xml.find("<testsuites name=\"qualify suite rack SIM-gb200-nvl72-r01\" tests=\"5\" failures=\"1\" errors=\"0\" skipped=\"1\">") != std::string::npos);
  CHECK(xml.find("<testsuite name=\"2-rack\" tests=\"2\" failures=\"1\"") != std::string::npos);
  CHECK(xml.find("<testcase classname=\"2-rack\" name=\"c.yaml\">\n      <failure message=\"failed: tti.max &lt; 1s") != std::string::npos);
  CHECK(xml.find("<testcase classname=\"3-multi-rack\" name=\"e.yaml\">\n      <skipped message=\"skipped: an earlier stage did not pass\"/>") != std::string::npos);
}

TEST_CASE("qualify: every stage passing gives exit 0 and a passed record per run of the suite") {
  Dir d;
  d.Write("suite/1-tray/a.yaml", Plan("a", kPasses));
  d.Write("suite/2-rack/b.yaml", Plan("b", kPasses));
  CHECK(runner::CmdQualify(Args(d)) == 0);
  CHECK(runner::CmdQualify(Args(d)) == 0);
  const std::string db = (d.path / "q.db").string();
  CHECK(Rows(db, "SELECT id, verdict, exit_code, reason FROM qualifications") == "1|passed|0||\n2|passed|0||\n");
  CHECK(Rows(db, "SELECT qualification_id, count(*) FROM qualification_plans WHERE verdict = 'passed' GROUP BY 1") == "1|2|\n2|2|\n");
  CHECK(d.Read("q.xml").find("tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"0\"") != std::string::npos);
}

TEST_CASE("qualify: a bad plan anywhere in the suite stops it before anything runs") {
  Dir d;
  d.Write("suite/1-tray/a.yaml", Plan("a", kPasses));
  d.Write("suite/2-rack/b.yaml", Plan("b", "ttr.mux < 1m"));
  CHECK(runner::CmdQualify(Args(d)) == 2);
  CHECK_FALSE(fs::exists(d.path / "q.db"));
  runner::QualifyArgs empty = Args(d);
  empty.suite = (d.path / "nothing").string();
  CHECK(runner::CmdQualify(empty) == 2);
  fs::create_directories(d.path / "nothing" / "1-tray");
  auto suite = runner::LoadSuite(empty.suite);
  REQUIRE_FALSE(suite.ok());
  CHECK(suite.status().message().find("no stage with a plan") != std::string::npos);
}
