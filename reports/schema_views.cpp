// Schema version 12: the views that name a run's components read the topology tables by key.
#include "reports/schema.h"

namespace rackchaos::reports {
namespace {

// The cost rule of every view over a run's rows: it reaches a component through run_topologies
// (by run_id), topologies (by id) and topology_components (by its primary key (topology_id, id) or its
// index (name, topology_id)), never through the `components` view. SQLite cannot flatten a join view
// on the right of a LEFT JOIN: since version 8 made `components` such a view, fault_timeline and
// fault_summary built all of it (573,421 rows on a 1,778-rack file, 1.5 s) for any query, even one
// run's count. Here each row of the view costs a few index lookups, so a run's rows take time in
// proportion to that run's faults or events, whatever the size of the cluster.
//
// Rows and columns are those of versions 1 and 3: a component matches only when its run has a
// topology and that topology its `topologies` row (the inner joins of `components`), hence the LEFT
// JOINs in that order; a serial stored as NULL is the topology's serial_prefix followed by the name,
// as in `components`. fault_summary keeps a LEFT JOIN by name (not a scalar subquery): two components
// of one topology with the same name still give two rows, as before.
constexpr const char* kViewsV12 = R"sql(
DROP VIEW event_log;
CREATE VIEW event_log AS
  SELECT e.run_id, e.seq, e.t_us, e.t_us / 1e6 AS t_s, e.type,
         (SELECT c.name FROM run_topologies r JOIN topologies t ON t.id = r.topology_id
            JOIN topology_components c ON c.topology_id = t.id AND c.id = e.component_id
          WHERE r.run_id = e.run_id) AS component,
         (SELECT j.name FROM jobs j WHERE j.run_id = e.run_id AND j.id = e.job_id) AS job,
         e.fault_id, e.detail
  FROM events e;

DROP VIEW fault_timeline;
CREATE VIEW fault_timeline AS
  SELECT f.run_id, f.fault_id, f.kind, c.name AS target, f.port, f.selector,
         f.injected_us / 1e6 AS injected_s, f.reverted_us / 1e6 AS reverted_s, f.detail
  FROM faults f
  LEFT JOIN run_topologies r ON r.run_id = f.run_id
  LEFT JOIN topologies t ON t.id = r.topology_id
  LEFT JOIN topology_components c ON c.topology_id = t.id AND c.id = f.target_id;

DROP VIEW fault_summary;
CREATE VIEW fault_summary AS
  SELECT m.run_id, m.fault_id, m.kind, m.target, c.kind AS target_kind,
         coalesce(c.serial, t.serial_prefix || c.name) AS target_serial,
         m.injected_us / 1e6 AS injected_s, m.ttd_us / 1e6 AS ttd_s, m.tti_us / 1e6 AS tti_s,
         m.ttr_us / 1e6 AS ttr_s, m.gpus_direct, m.gpus_collateral,
         m.gpus_direct + m.gpus_collateral AS gpus_total, m.jobs_touched, m.jobs_interrupted,
         m.gpu_hours_lost, m.rework_us / 1e6 AS rework_s, m.isolated
  FROM fault_metrics m
  LEFT JOIN run_topologies r ON r.run_id = m.run_id
  LEFT JOIN topologies t ON t.id = r.topology_id
  LEFT JOIN topology_components c ON c.topology_id = t.id AND c.name = m.target;
)sql";

}  // namespace

Status ViewsByTopologyKeys(Db& db) {
  return db.Exec(kViewsV12, "recreating event_log, fault_timeline and fault_summary over the topology tables");
}

}  // namespace rackchaos::reports
