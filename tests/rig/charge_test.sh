#!/bin/bash
# Real-mode blame through the runner's own monitor (label rig, in the rig fixture): a slowdown that comes
# after a fault is over, and that no fault made, is nobody's (JobCharge, runner/site/ssh_monitor.h), as in
# the simulator. plans/charge_after_revert.yaml pulls tray4 of the running job from 5 s to 15 s; once the
# run is well past the revert (RIG_CHARGE_AT s after its start, default 26: run time about 24 s) this
# script caps the CPU of the other trays to RIG_CHARGE_SHARE of a CPU (default 0.03) for 8 s (`rig cpu`:
# the ranks compute slower, about 0.6 of their speed here, while their GPUs look healthy). Then:
#   - the run passes its plan's expectations, among them ttr.max <= 15s (charged to the pull, the
#     slowdown would make its time to recover about 30 s);
#   - the report shows the slowdown (a job event at speed < 1 after the cap), so the check above did see
#     one, and no job event after the cap names a fault.
# Lifts the caps whatever happens.   charge_test.sh RACKCHAOS PLAN
set -uo pipefail
rackchaos=$1 plan=$2
RIG_DIR=${RIG_DIR:-/tmp/rcrig}; rig=$RIG_DIR/bin/rig
db=rig-charge.db at=${RIG_CHARGE_AT:-26} hold=8 share=${RIG_CHARGE_SHARE:-0.03}
trays="tray1 tray2 tray3 tray5 tray6"
lift() { for t in $trays; do "$rig" cpu "$t" max; done; }
pid=
trap 'lift; [ -n "$pid" ] && kill "$pid" 2>/dev/null' EXIT
fail() { echo "charge_test: FAIL: $*"; exit 1; }
rm -f "$db" "$db".ledger*

"$rackchaos" run "$plan" --inventory "$RIG_DIR/inventory.yaml" --db "$db" &
pid=$!
sleep "$at"
kill -0 "$pid" 2>/dev/null || fail "the run ended before the cap"
for t in $trays; do "$rig" cpu "$t" "$share" || fail "rig cpu $t $share"; done
capped=$(date +%s.%N)
sleep "$hold"
lift
wait "$pid"; rc=$?
pid=
# The cap's start in run time: the run's clock starts at its started_wall (whole seconds), a little after
# the process (its preflight); from the second it names, the cap came at most a second later than this.
wall=$(sqlite3 "$db" "SELECT started_wall FROM runs ORDER BY id LIMIT 1" 2>/dev/null)
t0=$(date -d "$wall" +%s 2>/dev/null) || fail "no run in $db"
cap_s=$(awk -v c="$capped" -v s="$t0" 'BEGIN{printf "%.3f", c - s - 1}')
echo "charge_test: capped the trays at run time ${cap_s} s or up to a second later, for ${hold} s"
echo "--- charge_test: the run's timeline (seconds from its start)"
sqlite3 "$db" "SELECT printf('%8.3f', t_s), type, coalesce(component, ''), coalesce(job, ''), coalesce(fault_id, '-'),
                      substr(detail, 1, 160)
               FROM event_log WHERE type IN ('job', 'detected', 'isolated', 'fault_injected', 'fault_reverted')
               ORDER BY seq"
[ "$rc" = 0 ] || fail "rackchaos run exited $rc (the expectations above; ttr.max <= 15s is the blame check)"
slowed=$(sqlite3 "$db" "SELECT count(*) FROM event_log WHERE type = 'job' AND t_s >= $cap_s
                        AND detail LIKE 'running %' AND detail NOT LIKE '% speed=1 %'")
[ "${slowed:-0}" -ge 1 ] || fail "no slowed job event after the cap at ${cap_s} s: the test made no slowdown"
charged=$(sqlite3 "$db" "SELECT count(*) FROM event_log WHERE type = 'job' AND t_s >= $cap_s AND fault_id IS NOT NULL")
[ "${charged:-1}" = 0 ] || fail "$charged job event(s) after the cap at ${cap_s} s name a fault"
echo "charge_test: ok: $slowed slowed job event(s) after the cap, none charged to a fault"
