#!/usr/bin/env bash
# safety.abort gpu_temperature in real mode stops a rig run (label rig, in the rig fixture): the plan shuts a
# tray's valve under the job; the trays' GPU telemetry (observe.gpu: nvidia-smi over SSH) must show the
# heating, and the run must stop with verdict aborted (exit 1) naming the GPU temperature, with the valve
# reverted.   abort_test.sh <rackchaos> <plan> [inventory (default $RIG_DIR/inventory.yaml)]
set -uo pipefail
rackchaos=$1 plan=$2
RIG_DIR=${RIG_DIR:-/tmp/rcrig}
inventory=${3:-$RIG_DIR/inventory.yaml}
trap '"$RIG_DIR/bin/rig" valve set tray3 100; cool' EXIT
fail() { echo "abort_test: FAIL: $*"; echo "$out"; exit 1; }
# Cool GPUs before and after: a tray still hot from an earlier run would abort this run before the fault,
# or set off the thermal detector before the next plan's fault.
cool() {
  local i hot
  for i in $(seq 1 60); do
    hot=$("$RIG_DIR/bin/rig-gpu" state "$RIG_DIR/trays.d/tray3" | awk '$3 >= 70' | wc -l)
    [ "$hot" = 0 ] && return 0; sleep 0.5
  done
  return 1
}
cool || fail "tray3's GPUs stayed above 70 C"
rm -f rig-abort.db rig-abort.db.ledger*
start=$SECONDS
out=$("$rackchaos" run "$plan" --inventory "$inventory" --db rig-abort.db 2>&1); rc=$?
echo "$out" | head -12
[ $rc = 1 ] || fail "exit $rc, expected 1 (aborted)"
grep -q "status   aborted" <<<"$out" || fail "not aborted"
grep -q "above safety.abort.gpu_temperature 80" <<<"$out" || fail "not aborted on a GPU temperature"
at=$(sed -n 's/^  reason   at \([0-9.]*\)s: .*/\1/p' <<<"$out" | head -1)
awk -v a="${at:-0}" 'BEGIN{exit !(a > 5)}' || fail "aborted at ${at:-?} s, not after the valve shut at 5 s"
[ $((SECONDS - start)) -lt 45 ] || fail "the run went on for $((SECONDS - start)) s"
[ "$("$RIG_DIR/bin/rig" valve get tray3)" = 100 ] || fail "the valve was not reverted"
echo "abort_test: ok ($((SECONDS - start)) s)"
