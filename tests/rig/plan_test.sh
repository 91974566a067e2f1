#!/bin/bash
# One rig plan through the rackchaos binary: plan_test.sh RACKCHAOS PLAN INVENTORY DB
# Exit status is rackchaos run's. When the run does not pass, what the runner and the rig saw is printed
# (the run's timeline of jobs, detections and healer actions, the controller's log, the job's output), so a
# rare failure in CI can be understood from its log alone.
set -uo pipefail
. "$(dirname "$0")/timeline_lib.sh"
rackchaos=$1 plan=$2 inventory=$3 db=$4
rm -f "$db" "$db".ledger*
"$rackchaos" run "$plan" --inventory "$inventory" --db "$db"
rc=$?
if [ "$rc" != 0 ]; then
  timeline "$db"
  rig=${RIG_DIR:-/tmp/rcrig}
  echo "--- plan_test: $rig/log/slurmctld-file.log (last 40 lines)"
  tail -n 40 "$rig/log/slurmctld-file.log" 2>&1
  for out in $(ls -t "$rig"/jobs/*/slurm-*.out 2>/dev/null | head -4); do
    echo "--- plan_test: $out"
    tail -n 15 "$out"
  done
fi
exit "$rc"
