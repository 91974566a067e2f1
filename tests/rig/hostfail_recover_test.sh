#!/usr/bin/env bash
# `rackchaos recover` killed mid-way and run again (issue 25; label rig, in the rig fixture, ~15 s).
# tests/rig/plans/hostfail_two.yaml limits tray2's and tray3's links; the runner is killed (kill -9) once
# both landed. With tray3's switch port down, recover reverts tray2's entry and then waits on tray3; it
# is killed there (kill -9). The second recover, with the port back, must revert tray3 only (tray2's
# entry is closed and not run again), mark the dead run aborted, and a third must find nothing to do.
#   hostfail_recover_test.sh <rackchaos> <plan>
set -uo pipefail
TEST=hostfail_recover_test
rackchaos=$1 plan=$2
. "$(dirname "$0")/hostfail_lib.sh"
tray3_tbf() { ip netns exec rcrig-tray3 tc qdisc show dev eth0 | grep -q 'qdisc tbf'; }
cleanup() {
  hostfail_cleanup
  ip netns exec rcrig-sw ip link set tray3 up 2>/dev/null
  tray3_tbf && ip netns exec rcrig-tray3 tc qdisc del dev eth0 root
  return 0
}
trap cleanup EXIT
db=rig-hostfail-recover.db
start=$SECONDS
state_of() { sqlite3 $db.ledger "SELECT state FROM ledger WHERE target = '$1'"; }

rm -f $db $db.ledger*
"$rackchaos" run "$plan" --inventory "$RIG_DIR/inventory.yaml" --db $db >hostfail-recover.out 2>&1 &
run=$!; bg_pids+=($run)
wait_until 10 sh -c "[ \$(sqlite3 $db.ledger \"SELECT count(*) FROM ledger WHERE expiry_token != ''\") = 2 ]" ||
  { cat hostfail-recover.out; fail "the two faults did not land with their expiries"; }
tbf_on && tray3_tbf || fail "the limits are not on tray2 and tray3"
kill -KILL $run; wait $run 2>/dev/null
[ "$(sqlite3 $db.ledger "SELECT group_concat(target) FROM (SELECT target FROM ledger ORDER BY id)")" = \
  "r01.tray02.nic0,r01.tray03.nic0" ] || fail "the ledger's entries are not tray2's then tray3's"

ip netns exec rcrig-sw ip link set tray3 down
"$rackchaos" recover --db $db >hostfail-recover-1.out 2>&1 &
rec=$!; bg_pids+=($rec)
wait_until 10 sh -c "[ \"\$(sqlite3 $db.ledger \"SELECT state FROM ledger WHERE target = 'r01.tray02.nic0'\")\" = closed ]" ||
  { cat hostfail-recover-1.out; fail "the first recover did not close tray2's entry"; }
sleep 0.5  # into tray3's connect, which cannot finish while its port is down
kill -0 $rec 2>/dev/null || { cat hostfail-recover-1.out; fail "the first recover ended by itself; it was to be killed waiting on tray3"; }
kill -KILL $rec; wait $rec 2>/dev/null
! tbf_on || fail "tray2's limit is still on after the first recover closed its entry"
tray3_tbf || fail "tray3's limit went away though recover could not reach it"
[ "$(state_of r01.tray03.nic0)" = open ] || fail "tray3's entry is not open after the killed recover"
sqlite3 $db "SELECT status FROM runs" | grep -qx running || fail "the killed run is not 'running' before recover finished"

ip netns exec rcrig-sw ip link set tray3 up
out=$("$rackchaos" recover --db $db 2>&1); rc=$?
echo "$out"
[ $rc = 0 ] || fail "the second recover exited $rc"
grep -q "1 reverted, 0 still open, 0 left to live runs, 1 run(s) marked aborted" <<<"$out" ||
  fail "the second recover did not revert exactly tray3's entry and mark the run aborted"
grep -q "tray02" <<<"$out" && fail "the second recover touched tray2's closed entry"
! tray3_tbf || fail "tray3's limit is still on after the second recover"
! tbf_on || fail "tray2's limit is back"
[ "$(state_of r01.tray03.nic0)" = closed ] || fail "tray3's entry is still open"
sqlite3 $db "SELECT status FROM runs" | grep -qx aborted || fail "the killed run is not marked aborted"
for t in r01.tray02.nic0 r01.tray03.nic0; do
  tok=$(sqlite3 $db.ledger "SELECT expiry_token FROM ledger WHERE target = '$t'")
  [ ! -e "$tok" ] || fail "$t's host-side expiry is still armed ($tok)"
done
out=$("$rackchaos" recover --db $db 2>&1) || fail "the third recover failed: $out"
grep -q "0 reverted, 0 still open, 0 left to live runs, 0 run(s) marked aborted" <<<"$out" ||
  fail "the third recover did something: $out"
echo "$TEST: ok ($((SECONDS - start)) s)"
