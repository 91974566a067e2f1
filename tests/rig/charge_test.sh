#!/bin/bash
# Real-mode blame through the runner's own monitor (label rig, in the rig fixture): a slowdown that no
# fault made is nobody's (Suspect and JobCharge, runner/site/ssh_monitor.h), as in the simulator. The plan
# pulls one tray of a running job; AT seconds after the run starts this script caps the CPU of other trays
# to RIG_CHARGE_SHARE of a CPU (default 0.03) for 8 s (`rig cpu`: the ranks compute slower, about 0.4 of
# their speed here, while their GPUs look healthy, so no detector fires):
#   - without JOB (plans/charge_after_revert.yaml, AT 26): every tray but the pulled one, well after the
#     pull was reverted (run time about 24 s): the job it slows is the pulled job, no longer the pull's;
#   - with JOB (plans/charge_other_job.yaml, AT 13): JOB's trays, while the pull holds: JOB never ran on
#     the pulled tray, so the pull cannot be what slows it.
# Then the run must pass its plan's expectations (ttr.max <= 15s, or blast.jobs.max == 1: the checks that
# fail when the slowdown is charged to the pull), the report's job events must show the slowdown (a running
# event at speed < 1 after the cap, of JOB if given), so those checks did see one, and no job event after
# the cap (of JOB) may name a fault.
# Lifts the caps whatever happens.   charge_test.sh RACKCHAOS PLAN AT [JOB]
set -uo pipefail
. "$(dirname "$0")/timeline_lib.sh"
rackchaos=$1 plan=$2 at=$3 job=${4:-}
RIG_DIR=${RIG_DIR:-/tmp/rcrig}; rig=$RIG_DIR/bin/rig
db=rig-charge${job:+-$job}.db hold=8 share=${RIG_CHARGE_SHARE:-0.03}
trays=
pid=
lift() { for t in $trays; do "$rig" cpu "$t" max; done; }
trap 'lift; [ -n "$pid" ] && kill "$pid" 2>/dev/null' EXIT
fail() { echo "charge_test: FAIL: $*"; exit 1; }
[[ "$at" =~ ^[0-9]{1,3}$ ]] || fail "AT is whole seconds after the run's start (0-999), got '$at'"
[[ "$job" =~ ^[a-z0-9_-]*$ ]] || fail "JOB is a job name of the plan, got '$job'"
# The plan's pulled tray (its target r01.trayNN is the rig's trayN).
pulled=$(sed -n 's/^ *target: *r01\.tray0*\([0-9][0-9]*\) *$/tray\1/p' "$plan")
[ "$(wc -w <<<"$pulled")" = 1 ] || fail "$plan: expected one target r01.trayNN, found '$pulled'"
grep -qx "$pulled" "$RIG_DIR/trays" 2>/dev/null || fail "the rig in $RIG_DIR has no $pulled (is it up?)"
# The share tried on the pulled tray before the run (and lifted): `rig cpu` checks it.
"$rig" cpu "$pulled" "$share" && "$rig" cpu "$pulled" max ||
  fail "rig cpu $pulled '$share' failed: RIG_CHARGE_SHARE is a share of one CPU (0 < SHARE <= 1)"
rm -f "$db" "$db".ledger*

"$rackchaos" run "$plan" --inventory "$RIG_DIR/inventory.yaml" --db "$db" &
pid=$!
sleep "$at"
kill -0 "$pid" 2>/dev/null || fail "the run ended before the cap"
if [ -n "$job" ]; then  # JOB's trays now, as the scheduler has them ("NAME STATE CKPT HOSTS")
  trays=$("$rig" job status | awk -v j="$job" '$1 == j && $2 == "RUNNING" {gsub(",", " ", $4); print $4}')
  [ -n "$trays" ] || fail "job $job is not running at the cap: $("$rig" job status | tr '\n' ';')"
  grep -qw "$pulled" <<<"$trays" && fail "job $job runs on the pulled $pulled ($trays): the test needs it elsewhere"
else
  trays=$(grep -vx "$pulled" "$RIG_DIR/trays" | tr '\n' ' ')
fi
echo "charge_test: capping $trays to $share of a CPU for ${hold} s"
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
echo "charge_test: capped at run time ${cap_s} s or up to a second later"
timeline "$db"
[ "$rc" = 0 ] || fail "rackchaos run exited $rc (the expectations above are the blame checks)"
# From the report's job events (their state, speed and cause), not from their rendered text.
after="FROM job_events WHERE run_id = (SELECT min(id) FROM runs) AND t_us >= $cap_s * 1e6"
[ -n "$job" ] && after="$after AND job_id = (SELECT id FROM jobs WHERE run_id = (SELECT min(id) FROM runs) AND name = '$job')"
slowed=$(sqlite3 "$db" "SELECT count(*) $after AND state = 'running' AND speed < 1") || fail "cannot read $db"
[ "$slowed" -ge 1 ] || fail "no slowed job event${job:+ of $job} after the cap at ${cap_s} s: the test made no slowdown"
charged=$(sqlite3 "$db" "SELECT count(*) $after AND cause_fault_id IS NOT NULL") || fail "cannot read $db"
[ "$charged" = 0 ] || fail "$charged job event(s)${job:+ of $job} after the cap at ${cap_s} s name a fault"
echo "charge_test: ok: $slowed slowed job event(s)${job:+ of $job} after the cap, none charged to a fault"
