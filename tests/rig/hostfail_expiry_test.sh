#!/usr/bin/env bash
# The host-side expiry ends a fault when the runner is gone and the host is cut off from it (issue 25;
# label rig, in the rig fixture, ~20 s). tests/rig/plans/hostfail_degrade.yaml puts a token bucket on
# tray2's link from 2 s to 6 s; the run uses the rig's inventory with expiry_grace 2s, so the expiry on
# tray2 fires at 8 s. Once the fault landed, tray2's port on the switch goes down (the runner can no
# longer reach it) and the runner is killed (kill -9). The limit must end on the host on time (not
# before 6 s, not long after 8 s), and `rackchaos recover`, once the port is back, must find it
# already reverted by the expiry, say so, not revert it again, and close the entry.
#   hostfail_expiry_test.sh <rackchaos> <plan>
set -uo pipefail
TEST=hostfail_expiry_test
rackchaos=$1 plan=$2
. "$(dirname "$0")/hostfail_lib.sh"
trap hostfail_cleanup EXIT
db=rig-hostfail-expiry.db
inv=$PWD/hostfail-expiry-inventory.yaml
sed 's/^expiry_grace: .*/expiry_grace: 2s/' "$RIG_DIR/inventory.yaml" >"$inv"
grep -q '^expiry_grace: 2s$' "$inv" || fail "the rig's inventory has no expiry_grace line to change"
start=$SECONDS

rm -f $db $db.ledger*
"$rackchaos" run "$plan" --inventory "$inv" --db $db >hostfail-expiry.out 2>&1 &
run=$!; bg_pids+=($run)
wait_until 10 tbf_on || { cat hostfail-expiry.out; fail "the fault never landed on tray2"; }
landed=$(date +%s.%N)
landed_armed $db.ledger || fail "no host-side expiry recorded for the fault"
ip netns exec rcrig-sw ip link set tray2 down || fail "cannot take tray2's switch port down"
kill -KILL $run; wait $run 2>/dev/null
# The fault is still on the host now; the expiry ends it, with no runner and no network.
tbf_on || fail "the limit went away before its planned end"
wait_until 12 sh -c "! ip netns exec $NS tc qdisc show dev eth0 | grep -q 'qdisc tbf'" ||
  fail "the host-side expiry did not end the fault on tray2"
ended=$(date +%s.%N)
after=$(awk -v a="$landed" -v b="$ended" 'BEGIN{printf "%.1f", b - a}')
echo "the limit ended on tray2 ${after} s after it landed (planned end 4 s, expiry at 4 s + 2 s grace)"
awk -v t="$after" 'BEGIN{exit !(t >= 4 && t <= 8)}' || fail "ended ${after} s after landing, not at 6 s (+-2 s)"
[ "$(ledger_state $db.ledger)" = open ] || fail "the entry closed without the runner"

ip netns exec rcrig-sw ip link set tray2 up
out=$("$rackchaos" recover --db $db 2>&1); rc=$?
echo "$out"
[ $rc = 0 ] || fail "recover exited $rc"
grep -q "already reverted on the host: its host-side expiry fired" <<<"$out" || fail "recover does not say the expiry fired"
grep -q "1 reverted, 0 still open, 0 left to live runs, 1 run(s) marked aborted; 1 of the reverted found not in effect" <<<"$out" ||
  fail "recover's summary is wrong"
n=$(sqlite3 $db "SELECT count(*) FROM event_log WHERE type = 'action' AND detail LIKE 'ssh.revert ok%'")
[ "$n" = 0 ] || fail "the runner reverted the fault itself ($n times) before it was killed"
[ "$(ledger_state $db.ledger)" = closed ] || fail "the entry is still open after recover"
ledger_has_note $db.ledger "found already reverted by its host-side expiry" || fail "the ledger does not say the expiry reverted it"
! tbf_on || fail "the limit is back on tray2"
sqlite3 $db "SELECT status FROM runs" | grep -qx aborted || fail "the killed run is not marked aborted"
# Again: nothing left to do, nothing run on tray2.
out=$("$rackchaos" recover --db $db 2>&1) || fail "the second recover failed: $out"
grep -q "0 reverted, 0 still open" <<<"$out" || fail "the second recover did something: $out"
echo "$TEST: ok ($((SECONDS - start)) s)"
