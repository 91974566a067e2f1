#include "reports/topology_store.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "reports/store_state.h"

namespace rackchaos::reports {
namespace {

// Rows per multi-row INSERT: a 1,778-rack cluster has 500,000 of them.
constexpr int kComponentsPerInsert = 64;

// Two independent 64-bit multiply-xorshift lanes over 8-byte words; each string ends with its length.
class TopologyHash {
 public:
  void Add(uint64_t word) {
    a_ = (a_ ^ word) * 0x9e3779b97f4a7c15ULL;
    a_ ^= a_ >> 32;
    b_ = (b_ ^ word) * 0xff51afd7ed558ccdULL;
    b_ ^= b_ >> 29;
  }
  void Add(std::string_view s) {
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      Add(w);
    }
    uint64_t tail = 0;
    // An empty view may have no data at all: memcpy must not see its null pointer, even for 0 bytes.
    if (s.size() > i) std::memcpy(&tail, s.data() + i, s.size() - i);
    Add(tail);
    Add(static_cast<uint64_t>(s.size()));
  }
  std::string Hex(size_t rows) const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%016llx%016llx-%zu", static_cast<unsigned long long>(a_),
                  static_cast<unsigned long long>(b_), rows);
    return buf;
  }

 private:
  uint64_t a_ = 0x243f6a8885a308d3ULL, b_ = 0x13198a2e03707344ULL;
};

// How a topology's serials are stored: `prefix` is what the first row's serial has before its name
// ("SIM-gb200-nvl72-"), or "" when it does not end with its name; a serial that is the prefix followed
// by the row's name is stored as NULL. Rows whose serial is derived (ComponentList::derived_prefix) are
// told apart without building their text.
class SerialRule {
 public:
  explicit SerialRule(const ComponentList& t) : SerialRule(t.rows.empty() ? nullptr : &t.rows.front(), t.derived_prefix) {}
  // `first`: the list's first row (null for an empty list).
  SerialRule(const ComponentRef* first, std::optional<std::string_view> given) : given_(given) {
    if (!first) return;
    const ComponentRef& c = *first;
    if (IsGiven(c)) prefix_ = *given_;
    else if (c.serial.ends_with(c.name)) prefix_ = c.serial.substr(0, c.serial.size() - c.name.size());
  }
  std::string_view prefix() const { return prefix_; }
  // The serial is the prefix followed by the name: stored as NULL.
  bool Derived(const ComponentRef& c) const {
    if (IsGiven(c)) return *given_ == prefix_;
    return c.serial.size() == prefix_.size() + c.name.size() && c.serial.starts_with(prefix_) &&
           c.serial.ends_with(c.name);
  }
  // The serial is derived from the prefix given with the rows: its text is built when needed.
  bool IsGiven(const ComponentRef& c) const { return given_ && c.serial.empty(); }
  std::string Built(const ComponentRef& c) const { return std::string(*given_) + std::string(c.name); }

 private:
  std::optional<std::string_view> given_;
  std::string_view prefix_;
};

std::string ComponentInsertSql(int rows) {
  std::string sql =
      "INSERT INTO topology_components(topology_id, id, name, kind, parent_id, serial) VALUES (?, ?, ?, ?, ?, ?)";
  for (int r = 1; r < rows; ++r) sql += ", (?, ?, ?, ?, ?, ?)";
  return sql;
}

// Text is bound without copying (the rows outlive the statement's step), except a serial built here.
void BindComponentRow(Stmt& stmt, int p, int64_t topology, const ComponentRef& c, const SerialRule& serials) {
  stmt.Bind(p, topology);
  BindId(stmt, p + 1, c.id, kNoComponent);
  stmt.BindStatic(p + 2, c.name);
  stmt.BindStatic(p + 3, c.kind);
  BindId(stmt, p + 4, c.parent, kNoComponent);
  if (serials.Derived(c))
    stmt.BindNull(p + 5);
  else if (serials.IsGiven(c))
    stmt.Bind(p + 5, std::string_view(serials.Built(c)));  // copied by SQLite
  else
    stmt.BindStatic(p + 5, c.serial);
}

Status InsertTopologyRows(Db& db, int64_t topology, std::span<const ComponentRef> rows, const SerialRule& serials,
                          const std::string& what) {
  RC_ASSIGN_OR_RETURN(Stmt one, db.Prepare(ComponentInsertSql(1), what));
  // One row alone; a failure names the row: "<what> (<name>) in report ...".
  auto insert_one = [&](const ComponentRef& c) -> Status {
    BindComponentRow(one, 1, topology, c, serials);
    Status s = one.Run(what);
    return s.ok() ? s : Status(s.code(), what + " (" + std::string(c.name) + ")" + s.message().substr(what.size()));
  };
  size_t done = 0;
  if (rows.size() >= kComponentsPerInsert) {
    RC_ASSIGN_OR_RETURN(Stmt many, db.Prepare(ComponentInsertSql(kComponentsPerInsert), what));
    for (; rows.size() - done >= kComponentsPerInsert; done += kComponentsPerInsert) {
      for (int r = 0; r < kComponentsPerInsert; ++r) BindComponentRow(many, 1 + 6 * r, topology, rows[done + r], serials);
      // A statement that broke a constraint left none of its rows: insert them one by one to name the
      // row at fault. Other errors (I/O, full disk) may have ended the transaction: report them as they are.
      Status s = many.Run(what);
      if (!s.ok() && s.code() != StatusCode::kInternal) return s;
      if (!s.ok())
        for (int r = 0; r < kComponentsPerInsert; ++r) RC_RETURN_IF_ERROR(insert_one(rows[done + r]));
    }
  }
  for (; done < rows.size(); ++done) RC_RETURN_IF_ERROR(insert_one(rows[done]));
  return Status::Ok();
}

// The first topology of a file (topology_components empty), whatever its size: its secondary indexes
// (by name, by serial) are dropped and their CREATE statements returned, to be run after the rows in the
// caller's transaction. SQLite then builds each index from sorted keys instead of inserting 573,421 keys
// at random places; one path for every file, so small tests take the one a 1,778-rack run takes. A kill
// before the commit rolls the drop back with the rows. With `serials_stored` false (every serial derived,
// stored as NULL) the partial index by serial stays: no row goes into it, and building it again would
// read every row for none (0.25 s at 13,889 racks).
Result<std::vector<std::string>> DropIndexesIfFirst(Db& db, bool serials_stored, const std::string& what) {
  std::vector<std::string> create;
  RC_ASSIGN_OR_RETURN(int64_t any, db.QueryInt("SELECT EXISTS (SELECT 1 FROM topology_components)", what));
  if (any) return create;
  RC_ASSIGN_OR_RETURN(Stmt list, db.Prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND "
                                            "tbl_name = 'topology_components' AND sql IS NOT NULL ORDER BY name",
                                            what));
  std::vector<std::string> names;
  for (;;) {
    RC_ASSIGN_OR_RETURN(bool row, list.Step(what));
    if (!row) break;
    if (!serials_stored && list.Text(0) == "topology_components_by_serial") continue;
    names.push_back(list.Text(0));
    create.push_back(list.Text(1));
  }
  list.Reset();
  for (const std::string& name : names) RC_RETURN_IF_ERROR(db.Exec("DROP INDEX \"" + name + "\"", what));
  return create;
}

}  // namespace

std::string ComponentsDigest(size_t size, const std::function<ComponentRef(size_t)>& row,
                             std::optional<std::string_view> derived_prefix) {
  TopologyHash d;
  const ComponentRef first = size > 0 ? row(0) : ComponentRef{};
  const SerialRule serials(size > 0 ? &first : nullptr, derived_prefix);
  d.Add(serials.prefix());
  for (size_t i = 0; i < size; ++i) {
    const ComponentRef c = row(i);
    d.Add((static_cast<uint64_t>(c.id) << 32) | c.parent);
    d.Add(c.name);
    d.Add(c.kind);
    if (serials.Derived(c))
      d.Add(uint64_t{0x5e71a1});  // the serial is the prefix and the name
    else if (serials.IsGiven(c))
      d.Add(serials.Built(c));
    else
      d.Add(c.serial);
  }
  return d.Hex(size);
}

std::vector<ComponentRef> RefsTo(const std::vector<ComponentRow>& rows) {
  std::vector<ComponentRef> refs;
  refs.reserve(rows.size());
  for (const ComponentRow& c : rows) refs.push_back({c.id, c.name, c.kind, c.parent, c.serial});
  return refs;
}

std::string TopologyDigest(const ComponentList& t) {
  return ComponentsDigest(t.rows.size(), [&](size_t i) { return t.rows[i]; }, t.derived_prefix);
}

std::string TopologyDigest(const std::vector<ComponentRow>& rows) {
  const std::vector<ComponentRef> refs = RefsTo(rows);
  return TopologyDigest(ComponentList{refs, std::nullopt});
}

Result<int64_t> StoreTopology(Db& db, const ComponentList& t, const std::string& what) {
  const std::string digest = TopologyDigest(t);
  RC_ASSIGN_OR_RETURN(Stmt find, db.Prepare("SELECT id FROM topologies WHERE digest = ?", what));
  find.Bind(1, digest);
  RC_ASSIGN_OR_RETURN(bool found, find.Step(what));
  if (found) return find.Int(0);
  const SerialRule serials(t);
  RC_ASSIGN_OR_RETURN(Stmt add,
                      db.Prepare("INSERT INTO topologies(digest, serial_prefix, components) VALUES (?, ?, ?)", what));
  add.Bind(1, digest);
  add.Bind(2, serials.prefix());
  add.Bind(3, static_cast<int64_t>(t.rows.size()));
  RC_RETURN_IF_ERROR(add.Run(what));
  int64_t id = db.LastInsertRowid();
  const bool serials_stored =
      std::any_of(t.rows.begin(), t.rows.end(), [&](const ComponentRef& c) { return !serials.Derived(c); });
  RC_ASSIGN_OR_RETURN(std::vector<std::string> deferred, DropIndexesIfFirst(db, serials_stored, what));
  RC_RETURN_IF_ERROR(InsertTopologyRows(db, id, t.rows, serials, what));
  for (const std::string& sql : deferred) RC_RETURN_IF_ERROR(db.Exec(sql, what));
  return id;
}

Result<int64_t> StoreTopology(Db& db, const std::vector<ComponentRow>& rows, const std::string& what) {
  const std::vector<ComponentRef> refs = RefsTo(rows);
  return StoreTopology(db, ComponentList{refs, std::nullopt}, what);
}

Status StoreTopologiesOnce(Db& db) {
  const std::string what = "storing each topology once (schema version 8)";
  RC_RETURN_IF_ERROR(db.Exec(R"sql(
CREATE TABLE topologies(
  id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE, serial_prefix TEXT NOT NULL,
  components INTEGER NOT NULL);
-- serial NULL: the topology's serial_prefix followed by the name. A rowid table: WITHOUT ROWID, its
-- primary key covers every column and SQLite's planner (no statistics) then prefers a scan of the
-- topology's rows on (topology_id) to a lookup on (topology_id, name).
CREATE TABLE topology_components(
  topology_id INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
  parent_id INTEGER, serial TEXT, PRIMARY KEY(topology_id, id));
CREATE INDEX topology_components_by_name ON topology_components(topology_id, name);
CREATE INDEX topology_components_by_serial ON topology_components(serial) WHERE serial IS NOT NULL;
CREATE TABLE run_topologies(run_id INTEGER PRIMARY KEY, topology_id INTEGER NOT NULL);
CREATE INDEX run_topologies_by_topology ON run_topologies(topology_id);
)sql",
                             what));
  // The run ids are read first: StoreTopology drops indexes for the file's first topology, which SQLite
  // refuses while a statement of the connection is still reading.
  std::vector<int64_t> run_ids;
  {
    RC_ASSIGN_OR_RETURN(Stmt runs, db.Prepare("SELECT DISTINCT run_id FROM components ORDER BY run_id", what));
    for (;;) {
      RC_ASSIGN_OR_RETURN(bool more, runs.Step(what));
      if (!more) break;
      run_ids.push_back(runs.Int(0));
    }
  }
  RC_ASSIGN_OR_RETURN(
      Stmt read,
      db.Prepare("SELECT id, name, kind, parent_id, serial FROM components WHERE run_id = ? ORDER BY id", what));
  RC_ASSIGN_OR_RETURN(Stmt link, db.Prepare("INSERT INTO run_topologies(run_id, topology_id) VALUES (?, ?)", what));
  for (int64_t run : run_ids) {
    std::vector<ComponentRow> rows;
    read.Bind(1, run);
    for (;;) {
      RC_ASSIGN_OR_RETURN(bool row, read.Step(what));
      if (!row) break;
      rows.push_back(
          {IdOr(read, 0, kNoComponent), read.Text(1), read.Text(2), IdOr(read, 3, kNoComponent), read.Text(4)});
    }
    read.Reset();
    RC_ASSIGN_OR_RETURN(int64_t topology, StoreTopology(db, rows, what));
    link.Bind(1, run);
    link.Bind(2, topology);
    RC_RETURN_IF_ERROR(link.Run(what));
  }
  // Until version 12 (reports/schema_views.cpp), event_log, fault_timeline and fault_summary read the view.
  return db.Exec(R"sql(
DROP TABLE components;
CREATE VIEW components AS
  SELECT r.run_id, c.id, c.name, c.kind, c.parent_id, coalesce(c.serial, t.serial_prefix || c.name) AS serial
  FROM run_topologies r JOIN topology_components c ON c.topology_id = r.topology_id
  JOIN topologies t ON t.id = r.topology_id;
)sql",
                 what);
}

}  // namespace rackchaos::reports
