# Shared by the host-failure rig tests (hostfail_test.sh, ...; issue 25): tray2's sshd, its link's token
# bucket, the ledger, and a cleanup that puts tray2 back whatever happened. Sourced; needs $RIG_DIR.
RIG_DIR=${RIG_DIR:-/tmp/rcrig}
NS=rcrig-tray2
ADDR=10.77.0.2
bg_pids=()

fail() { echo "$TEST: FAIL: $*"; exit 1; }
# Every sshd of tray2 (the listener and the sessions it forked): the host stops answering, and the
# runner's open session to it drops, as when the host dies.
sshd_kill() {
  local p i
  for i in $(seq 1 20); do  # again until none is left (a session forked meanwhile; one not yet reaped)
    for p in $(ip netns pids $NS); do [ "$(cat /proc/$p/comm 2>/dev/null)" = sshd ] && kill -KILL "$p"; done
    sshd_up || return 0
    sleep 0.1
  done
  fail "tray2's sshd still runs after kill -9"
}
sshd_up() {
  local p
  for p in $(ip netns pids $NS); do [ "$(cat /proc/$p/comm 2>/dev/null)" = sshd ] && return 0; done
  return 1
}
# As `rig up` starts it (tests/rig/rig, start_daemon); `rig down` finds it by the namespace.
sshd_start() {
  sshd_up && return 0
  setsid nsenter --net=/run/netns/$NS /usr/sbin/sshd -D -f "$RIG_DIR/ssh/sshd_config" -o ListenAddress=$ADDR \
    -o PidFile=none >>"$RIG_DIR/log/sshd-$NS.log" 2>&1 </dev/null &
  echo $! >"$RIG_DIR/pids/sshd-$NS"
  local i
  for i in $(seq 1 50); do
    ip netns exec rcrig-sw timeout 1 bash -c "exec 3<>/dev/tcp/$ADDR/22" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "tray2's sshd did not come back"
}
tbf_on() { ip netns exec $NS tc qdisc show dev eth0 | grep -q 'qdisc tbf'; }
wait_until() {  # seconds cmd...: polls every 0.1 s
  local t=$(($1 * 10)); shift
  while ! "$@" >/dev/null 2>&1; do t=$((t - 1)); [ $t -gt 0 ] || return 1; sleep 0.1; done
}
# The fault landed on tray2 and its host-side expiry is armed (killing sshd before that would lose the
# expiry's arming instead of the revert).
landed_armed() {
  wait_until 10 tbf_on || return 1
  wait_until 5 sh -c "[ -n \"\$(sqlite3 $1 \"SELECT expiry_token FROM ledger WHERE expiry_token != ''\" 2>/dev/null)\" ]"
}
ledger_note() { sqlite3 "$1" "SELECT note FROM ledger ORDER BY id DESC LIMIT 1"; }
ledger_state() { sqlite3 "$1" "SELECT state FROM ledger ORDER BY id DESC LIMIT 1"; }
ledger_has_note() { ledger_note "$1" | grep -q "$2"; }
# The host-side expiry of the last entry is gone (cancelled or fired): no token file, no timer.
expiry_gone() {
  local token pid
  IFS='|' read -r token pid < <(sqlite3 "$1" "SELECT expiry_token, expiry_pid FROM ledger ORDER BY id DESC LIMIT 1")
  [ -n "$token" ] || fail "the fault had no host-side expiry in the ledger"
  [ ! -e "$token" ] || return 1
  [ "$pid" -gt 0 ] && kill -0 "$pid" 2>/dev/null && grep -q rackchaos-expiry /proc/"$pid"/cmdline 2>/dev/null && return 1
  return 0
}
# Whatever happened: background jobs of this test end, tray2 answers again with its link unlimited, and
# the uplink is up (the partition tests take it down).
hostfail_cleanup() {
  local p
  for p in "${bg_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  ip link set rcrig-up up 2>/dev/null
  ip netns exec rcrig-sw ip link set tray2 up 2>/dev/null
  sshd_up || sshd_start
  tbf_on && ip netns exec $NS tc qdisc del dev eth0 root
  return 0
}
