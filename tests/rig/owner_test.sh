#!/usr/bin/env bash
# The rig's ownership rules (tests/rig/rig, header) without bringing a rig up: a rig directory that a
# live process owns is left alone by another owner's `down` and waited for (then refused) by its `up`.
# Uses a temporary RIG_DIR and touches nothing global. Needs root (label root).
#   owner_test.sh <path to tests/rig/rig>
set -uo pipefail
rig=$1
tmp=$(mktemp -d /tmp/rcrig-owner-test.XXXXXX)
sleep 120 & holder=$!
trap 'kill $holder 2>/dev/null; rm -rf "$tmp"' EXIT
export RIG_DIR=$tmp/rig RIG_RANK=/bin/true
fail() { echo "owner_test: FAIL: $*"; exit 1; }

mkdir -p "$RIG_DIR/pids"
echo "$holder $(sed 's/^.*) //' /proc/$holder/stat | cut -d' ' -f20)" >"$RIG_DIR/owner"
touch "$RIG_DIR/marker"

out=$(RIG_OWNER=$$ "$rig" down 2>&1); rc=$?
[ $rc = 0 ] || fail "down of another live owner's rig exited $rc: $out"
grep -q "belongs to live process $holder" <<<"$out" || fail "down did not name the owner: $out"
[ -f "$RIG_DIR/marker" ] || fail "down removed another live owner's rig"

start=$SECONDS
out=$(RIG_OWNER=$$ RIG_WAIT=2 "$rig" up 2>&1); rc=$?
[ $rc = 2 ] || fail "up over another live owner's rig exited $rc (expected 2): $out"
grep -q "belongs to live process $holder.*waited 2 s" <<<"$out" || fail "up did not name the owner: $out"
[ $((SECONDS - start)) -ge 2 ] || fail "up did not wait RIG_WAIT"
[ -f "$RIG_DIR/marker" ] || fail "up removed another live owner's rig"

echo "owner_test: ok"
