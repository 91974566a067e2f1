# The run's timeline from a report, for a rig test's log (plan_test.sh on failure, charge_test.sh always):
# jobs, detections, isolations, faults and healer actions (not the SSH transport's), seconds from the run's
# start. Sourced.   timeline DB
timeline() {
  echo "--- the run's timeline in $1 (t_s, type, component, job, fault, detail)"
  sqlite3 "$1" "SELECT printf('%8.3f', t_s), type, coalesce(component, ''), coalesce(job, ''), coalesce(fault_id, '-'),
                       substr(detail, 1, 200)
                FROM event_log WHERE type IN ('job', 'detected', 'isolated', 'fault_injected', 'fault_reverted')
                   OR (type = 'action' AND detail NOT LIKE 'ssh.%') ORDER BY seq" 2>&1
}
