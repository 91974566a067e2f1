#!/usr/bin/env bash
# A tray host lost while a fault is applied on it (issue 25; label rig, in the rig fixture, ~30 s):
# tests/rig/plans/hostfail_degrade.yaml puts a token bucket on tray2's link through tray2's own sshd from
# 2 s to 6 s; this test kills every sshd of tray2 (kill -9) after the fault landed, so the planned revert
# finds the host gone.
#   A: sshd comes back within the run: the run reports the host lost, goes on, and reverts the fault
#      when the host answers again, before the run ends; the ledger entry says both, in order, and the run
#      exits 0 as one whose faults were all reverted (the plan has no gate).
#   B: sshd comes back only after the run: the run leaves the entry open and says so; `rackchaos recover`
#      reverts it afterwards.
# Both times the tray itself is checked: the limit is really gone, and so is the host-side expiry (a
# timer left armed would revert a later fault on the link).
#   hostfail_test.sh <rackchaos> <plan>
set -uo pipefail
TEST=hostfail_test
rackchaos=$1 plan=$2
. "$(dirname "$0")/hostfail_lib.sh"
trap hostfail_cleanup EXIT
db=rig-hostfail.db
start=$SECONDS

# --- A: the host returns within the run
rm -f $db $db.ledger*
"$rackchaos" run "$plan" --inventory "$RIG_DIR/inventory.yaml" --db $db >hostfail-a.out 2>&1 &
run=$!; bg_pids+=($run)
landed_armed $db.ledger || { cat hostfail-a.out; fail "A: the fault never landed on tray2 with its expiry"; }
sshd_kill
# The planned revert (6 s) fails: the host is gone, the fault is still there.
wait_until 10 ledger_has_note $db.ledger "host lost" || { cat hostfail-a.out; fail "A: no 'host lost' in the ledger"; }
tbf_on || fail "A: the limit went away while tray2 could not be reached"
sshd_start
wait $run; rc=$?
cat hostfail-a.out | grep -v '^\[.*debug' | tail -n 25
! tbf_on || fail "A: tray2's link is still limited after the run"
expiry_gone $db.ledger || fail "A: the host-side expiry is still armed on tray2"
[ "$(ledger_state $db.ledger)" = closed ] || fail "A: the ledger entry is still open"
note=$(ledger_note $db.ledger); echo "A: ledger note: $note"
grep -q "host lost, revert failed" <<<"$note" || fail "A: the ledger does not say the host was lost"
grep -q "reverted late: tray2 answered again" <<<"$note" || fail "A: the ledger does not say the revert came late"
# Within the run: closed before the run finished, by the retry, not by recover.
n=$(sqlite3 $db "SELECT count(*) FROM event_log WHERE type = 'action' AND detail LIKE '%did not answer%stays applied%'")
[ "$n" = 1 ] || fail "A: the report has $n host_lost actions, expected 1"
n=$(sqlite3 $db "SELECT count(*) FROM event_log WHERE type = 'action' AND detail LIKE '%answers again%reverted and verified'")
[ "$n" = 1 ] || fail "A: the report has $n host_returned actions, expected 1"
grep -q "run \`rackchaos recover\`" hostfail-a.out && fail "A: the run asks for recover though it reverted everything"
[ "$rc" = 0 ] || fail "A: the run exited $rc, not 0, though it reverted everything (3 means something is still applied)"
[ "$(sqlite3 $db "SELECT status FROM runs")" = passed ] || fail "A: the run is not stored as passed"
echo "A: exit $rc; reverted within the run after tray2 came back"

# --- B: the host returns after the run
rm -f $db $db.ledger*
"$rackchaos" run "$plan" --inventory "$RIG_DIR/inventory.yaml" --db $db >hostfail-b.out 2>&1 &
run=$!; bg_pids+=($run)
landed_armed $db.ledger || { cat hostfail-b.out; fail "B: the fault never landed on tray2 with its expiry"; }
sshd_kill
wait $run; rc=$?
grep -v '^\[.*debug' hostfail-b.out | tail -n 12
[ $rc != 0 ] || fail "B: the run passed with a fault left applied"
grep -q "rackchaos recover" hostfail-b.out || fail "B: the run does not say to run rackchaos recover"
[ "$(ledger_state $db.ledger)" = open ] || fail "B: the ledger entry is not open after the run"
tbf_on || fail "B: the limit went away while tray2 could not be reached"
sshd_start
out=$("$rackchaos" recover --db $db 2>&1); rc=$?
echo "$out"
[ $rc = 0 ] || fail "B: recover exited $rc"
grep -q "1 reverted, 0 still open" <<<"$out" || fail "B: recover did not revert the entry"
! tbf_on || fail "B: tray2's link is still limited after recover"
expiry_gone $db.ledger || fail "B: the host-side expiry is still armed on tray2"
note=$(ledger_note $db.ledger); echo "B: ledger note: $note"
grep -q "host lost, revert failed" <<<"$note" || fail "B: the ledger does not say the host was lost"
grep -q "reverted by rackchaos recover" <<<"$note" || fail "B: the ledger does not say recover reverted it"
echo "$TEST: ok ($((SECONDS - start)) s)"
