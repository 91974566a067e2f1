#!/usr/bin/env bash
# safety.abort gpu_temperature in real mode stops a rig run (label rig, in the rig fixture): the plan shuts a
# tray's valve under the job; the trays' GPU telemetry (observe.gpu: nvidia-smi over SSH) must show the
# heating, and the run must stop with verdict aborted (exit 1) naming the GPU temperature, with the valve
# reverted.   abort_test.sh <rackchaos> <plan>
set -uo pipefail
rackchaos=$1 plan=$2
RIG_DIR=${RIG_DIR:-/tmp/rcrig}
trap '"$RIG_DIR/bin/rig" valve set tray3 100' EXIT
fail() { echo "abort_test: FAIL: $*"; echo "$out"; exit 1; }
rm -f rig-abort.db rig-abort.db.ledger*
start=$SECONDS
out=$("$rackchaos" run "$plan" --inventory "$RIG_DIR/inventory.yaml" --db rig-abort.db 2>&1); rc=$?
echo "$out" | head -12
[ $rc = 1 ] || fail "exit $rc, expected 1 (aborted)"
grep -q "status   aborted" <<<"$out" || fail "not aborted"
grep -q "above safety.abort.gpu_temperature 80" <<<"$out" || fail "not aborted on a GPU temperature"
[ $((SECONDS - start)) -lt 45 ] || fail "the run went on for $((SECONDS - start)) s"
[ "$("$RIG_DIR/bin/rig" valve get tray3)" = 100 ] || fail "the valve was not reverted"
echo "abort_test: ok ($((SECONDS - start)) s)"
