#!/usr/bin/env bash
# The rig's cgroup code (tests/rig/rig: cg_mk, cg_quota, power, cpu) on fake cgroup trees, so that both the
# cgroup v2 branch (Debian 12's default; this machine mounts v1) and the v1 branch run here: which
# hierarchy `rig` detects, where it makes a tray's cgroup, and which file and value a power cap writes.
# No root, touches nothing global.   cgroup_test.sh <tests/rig/rig> <rig-gpu>
set -uo pipefail
rig=$1
tmp=$(mktemp -d /tmp/rcrig-cgroup-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export RIG_DIR=$tmp/rig RIG_GPU=$2
mkdir -p "$RIG_DIR/trays.d/tray1"
fail() { echo "cgroup_test: FAIL: $*"; exit 1; }
expect() {  # what file want
  local got; got=$(cat "$2" 2>/dev/null) || fail "$1: $2 missing"
  [ "$got" = "$3" ] || fail "$1: $2 is '$got', expected '$3'"
}

# cgroup v2: a unified hierarchy (cgroup.controllers at the root).
root=$tmp/v2; mkdir -p "$root"
echo "cpuset cpu io memory hugetlb pids rdma misc" >"$root/cgroup.controllers"
echo "memory pids" >"$root/cgroup.subtree_control"
out=$(RIG_CGROUP_ROOT=$root "$rig" cgroup mk tray1 2>&1) || fail "v2: cgroup mk failed: $out"
[ "$out" = "v2 $root/rcrig" ] || fail "v2: detected '$out'"
grep -qw cpu "$root/cgroup.subtree_control" || fail "v2: cpu controller not enabled at the root"
grep -qw cpu "$root/rcrig/cgroup.subtree_control" || fail "v2: cpu controller not enabled for the trays"
[ -d "$root/rcrig/tray1" ] || fail "v2: no tray cgroup"
echo "max 100000" >"$root/rcrig/tray1/cpu.max"  # the kernel makes it in a new cgroup; the fake tree by hand
out=$(RIG_CGROUP_ROOT=$root "$rig" power set tray1 300 2>&1) || fail "v2: power set 300: $out"
expect "v2 300 W" "$root/rcrig/tray1/cpu.max" "62996 100000"  # SpeedAtPower(300, 1200) = 0.25^(1/3) = 0.62996 of a CPU
expect "v2 300 W" "$RIG_DIR/trays.d/tray1/power_cap" "300"
[ "$(RIG_CGROUP_ROOT=$root "$rig" power get tray1)" = 300 ] || fail "v2: power get after set 300"
RIG_CGROUP_ROOT=$root "$rig" power set tray1 1200 || fail "v2: power set 1200"
expect "v2 lifted" "$root/rcrig/tray1/cpu.max" "max 100000"
[ -e "$RIG_DIR/trays.d/tray1/power_cap" ] && fail "v2: cap file left after lifting the cap"
[ "$(RIG_CGROUP_ROOT=$root "$rig" power get tray1)" = 1200 ] || fail "v2: power get after lifting"
[ -e "$root/cpu" ] && fail "v2: wrote a v1 path"
# `rig cpu`: a bare quota (rig:charge's slowdown), the kernel's floor of 1 ms per period, lifted with max.
RIG_CGROUP_ROOT=$root "$rig" cpu tray1 0.03 || fail "v2: cpu 0.03"
expect "v2 cpu 0.03" "$root/rcrig/tray1/cpu.max" "3000 100000"
RIG_CGROUP_ROOT=$root "$rig" cpu tray1 .004 || fail "v2: cpu .004"
expect "v2 cpu .004 (floor)" "$root/rcrig/tray1/cpu.max" "1000 100000"
RIG_CGROUP_ROOT=$root "$rig" cpu tray1 1 || fail "v2: cpu 1"
expect "v2 cpu 1" "$root/rcrig/tray1/cpu.max" "100000 100000"
RIG_CGROUP_ROOT=$root "$rig" cpu tray1 max || fail "v2: cpu max"
expect "v2 cpu max" "$root/rcrig/tray1/cpu.max" "max 100000"
# Hostile shares and powers: refused (exit 2, the reason on stderr), the quota left as it was. "0.5x" and
# "1e-1" once passed awk's range test as strings or numbers.
for bad in 0 0.0 1.5 -0.1 abc 0.5x 1e-1 nan inf '' ' 0.5' 0.5. . "0.5
0.6"; do
  out=$(RIG_CGROUP_ROOT=$root "$rig" cpu tray1 "$bad" 2>&1); rc=$?
  [ $rc = 2 ] && grep -q "not a share of one CPU" <<<"$out" || fail "v2: cpu '$bad': exit $rc, '$out'"
  expect "v2 cpu '$bad' refused" "$root/rcrig/tray1/cpu.max" "max 100000"
done
for bad in 0 -300 300W abc 1e3 ''; do
  out=$(RIG_CGROUP_ROOT=$root "$rig" power set tray1 "$bad" 2>&1); rc=$?
  [ $rc = 2 ] && grep -q "not a power in watts" <<<"$out" || fail "v2: power set '$bad': exit $rc, '$out'"
  expect "v2 power '$bad' refused" "$root/rcrig/tray1/cpu.max" "max 100000"
done
out=$(RIG_CGROUP_ROOT=$root "$rig" cpu tray9x 0.5 2>&1); rc=$?
[ $rc = 2 ] && grep -q "not a tray" <<<"$out" || fail "v2: cpu on tray9x: exit $rc, '$out'"

# A v2 host whose cpu controller is not available (bound to a v1 hierarchy): refused with a reason.
root=$tmp/v2-nocpu; mkdir -p "$root"; echo "memory pids" >"$root/cgroup.controllers"
out=$(RIG_CGROUP_ROOT=$root "$rig" cgroup mk tray1 2>&1); rc=$?
[ $rc = 2 ] && grep -q "no cpu controller" <<<"$out" || fail "v2 without cpu: exit $rc, '$out'"

# cgroup v1: the cpu controller's own hierarchy.
root=$tmp/v1; mkdir -p "$root/cpu"
out=$(RIG_CGROUP_ROOT=$root "$rig" cgroup mk tray1 2>&1) || fail "v1: cgroup mk failed: $out"
[ "$out" = "v1 $root/cpu/rcrig" ] || fail "v1: detected '$out'"
echo 100000 >"$root/cpu/rcrig/tray1/cpu.cfs_period_us"; echo -1 >"$root/cpu/rcrig/tray1/cpu.cfs_quota_us"
RIG_CGROUP_ROOT=$root "$rig" power set tray1 900 || fail "v1: power set 900"
expect "v1 900 W" "$root/cpu/rcrig/tray1/cpu.cfs_quota_us" "90856"  # SpeedAtPower(900, 1200) = 0.90856
RIG_CGROUP_ROOT=$root "$rig" power set tray1 1200 || fail "v1: power set 1200"
expect "v1 lifted" "$root/cpu/rcrig/tray1/cpu.cfs_quota_us" "-1"
RIG_CGROUP_ROOT=$root "$rig" cpu tray1 0.25 || fail "v1: cpu 0.25"
expect "v1 cpu 0.25" "$root/cpu/rcrig/tray1/cpu.cfs_quota_us" "25000"
RIG_CGROUP_ROOT=$root "$rig" cpu tray1 max || fail "v1: cpu max"
expect "v1 cpu max" "$root/cpu/rcrig/tray1/cpu.cfs_quota_us" "-1"
[ -e "$root/rcrig" ] && fail "v1: wrote a v2 path"

echo "cgroup_test: ok"
