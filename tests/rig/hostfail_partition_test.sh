#!/usr/bin/env bash
# A partition between the runner and a host (issue 25; label rig, in the rig fixture, ~45 s): tray2's
# port on the switch goes down around tray2's fault (the switch drops what the runner sends, so the
# runner's sessions stall as in a real partition; taking the uplink down instead would send the rig's
# packets to the machine's default route)
# (tests/rig/plans/hostfail_degrade.yaml: a token bucket on tray2's link, planned from 2 s to 6 s).
# The run uses the rig's inventory with ssh.command_timeout 4s and connect_timeout 2s, so the runner
# gives up on a host within the partition. The fault is armed on tray2 at once (arm_lead 3 s), its go
# line sent at 1.75 s.
#   armed:  down from 0.8 s (armed) to 1.5 s (before the go line): the fault lands as planned.
#   apply:  down from 1.0 s to 7 s: the go line cannot arrive before the armed command times out
#           (arming + 4 s); once the partition heals, TCP still delivers it, and the host must not
#           apply the fault then (the runner gave up on it): the limit may never be seen on tray2.
#   revert: down from 5 s to 9 s: the planned revert at 6 s cannot reach tray2.
# Each time, a few seconds after the run (for late packets), nothing may be applied on tray2, the
# ledger entry must be closed, and the report may hold at most one successful apply.
#   hostfail_partition_test.sh <rackchaos> <plan>
set -uo pipefail
TEST=hostfail_partition_test
rackchaos=$1 plan=$2
. "$(dirname "$0")/hostfail_lib.sh"
trap hostfail_cleanup EXIT
inv=$PWD/hostfail-partition-inventory.yaml
sed -e 's/^  connect_timeout: .*/  connect_timeout: 2s/' -e 's/^  command_timeout: .*/  command_timeout: 4s/' \
  "$RIG_DIR/inventory.yaml" >"$inv"
grep -q '^  command_timeout: 4s$' "$inv" && grep -q '^  connect_timeout: 2s$' "$inv" ||
  fail "the rig's inventory has no ssh timeouts to change"
start=$SECONDS

partition() {  # NAME FROM TO [never] (seconds after the run started; never: the fault must never land)
  local name=$1 from=$2 to=$3 never=${4:-} db=rig-hostfail-$1.db t0 rc n sampler
  rm -f $db $db.ledger* hostfail-$name.tbf
  t0=$(date +%s.%N)
  "$rackchaos" run "$plan" --inventory "$inv" --db $db >hostfail-$name.out 2>&1 &
  run=$!; bg_pids+=($run)
  # When the limit is on tray2, every 0.1 s (seconds since the start), until the test ends it.
  ( while :; do tbf_on && awk -v a="$t0" -v n="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", n - a}'; sleep 0.1; done ) \
    >hostfail-$name.tbf 2>/dev/null &
  sampler=$!; bg_pids+=($sampler)
  sleep_until "$t0" "$from"
  ip netns exec rcrig-sw ip link set tray2 down
  sleep_until "$t0" "$to"
  ip netns exec rcrig-sw ip link set tray2 up
  wait $run; rc=$?
  sleep 3  # packets the partition held back
  kill $sampler; wait $sampler 2>/dev/null
  if [ "$never" = never ] && [ -s hostfail-$name.tbf ]; then
    fail "$name: the limit was on tray2 from $(head -1 hostfail-$name.tbf) s to $(tail -1 hostfail-$name.tbf) s though its go line could not arrive in time"
  fi
  n=$(sqlite3 $db "SELECT count(*) FROM event_log WHERE type = 'action' AND detail LIKE 'ssh.apply ok%'")
  echo "$name: partition ${from}-${to} s; exit $rc; $n apply(s) reported; ledger: $(sqlite3 $db.ledger "SELECT state || ': ' || replace(note, char(10), ' | ') FROM ledger")"
  grep -E "host_lost|host_returned|fault #1|rackchaos recover" hostfail-$name.out | grep -v debug | head -8
  tbf_on && { echo "$name: limit still on tray2; run output:"; tail -n 30 hostfail-$name.out; fail "$name: the fault is left applied on tray2"; }
  [ "$n" -le 1 ] || fail "$name: $n applies reported"
  [ "$(ledger_state $db.ledger)" = closed ] || fail "$name: the ledger entry is still open"
  expiry_armed_left $db.ledger && fail "$name: a host-side expiry is still armed on tray2"
  return 0
}
# Any rackchaos-expiry timer left on the rig, or the entry's token still there.
expiry_armed_left() {
  local token; token=$(sqlite3 "$1" "SELECT expiry_token FROM ledger WHERE expiry_token != ''")
  [ -n "$token" ] && [ -e "$token" ] && return 0
  pgrep -f 'rackchaos-expiry /tmp/rackchaos-expiry' >/dev/null
}

partition armed 0.8 1.5
partition apply 1.0 7 never
partition revert 5 9
echo "$TEST: ok ($((SECONDS - start)) s)"
