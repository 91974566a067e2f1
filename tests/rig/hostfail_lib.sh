# Shared by the host-failure rig tests (hostfail_test.sh, ...; issue 25): tray2's sshd, its link's token
# bucket, the ledger, and a cleanup that puts tray2 back whatever happened. Sourced; needs $RIG_DIR.
RIG_DIR=${RIG_DIR:-/tmp/rcrig}
# The sshd this starts again must not hold what the test's caller left open (a `flock` on the test
# lock), as `rig` does for its daemons (tests/rig/rig, top). 255: bash's script.
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  [[ "$fd" =~ ^[0-9]+$ ]] && [ "$fd" -gt 2 ] && [ "$fd" != 255 ] && eval "exec $fd>&-"
done
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
  disown $!  # killed later by sshd_kill: no "Killed" line from this shell
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
# Sleeps until S seconds (fractions too) after T0 (a `date +%s.%N` stamp); returns at once if that is past.
sleep_until() { sleep "$(awk -v s="$2" -v a="$1" -v n="$(date +%s.%N)" 'BEGIN{d = s - (n - a); print (d > 0 ? d : 0)}')"; }
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

# --- the whole rig (the soak, soak_test.sh) ---------------------------------------------------------
RIG=$(dirname "${BASH_SOURCE[0]}")/rig
export RIG_DIR SLURM_CONF=$RIG_DIR/slurm/slurm.conf
rig_trays() { cat "$RIG_DIR/trays"; }
rig_namespaces() { ip netns list | awk '/^rcrig-/ {print $1}'; }
# "NS PID" of every host-side expiry timer running in the rig's namespaces (trays and head).
expiry_timers() {
  local ns p
  for ns in $(rig_namespaces); do
    for p in $(ip netns pids "$ns"); do grep -qa rackchaos-expiry /proc/"$p"/cmdline 2>/dev/null && echo "$ns $p"; done
  done
}
# Slurm's nodes that are not in service: "NODE STATE REASON" (drained by a healer, down, not responding).
slurm_out_of_service() { sinfo -h -N -o '%N %T %E' 2>&1 | awk '$2 !~ /^(idle|allocated|mixed|completing)$/'; }
# What a fault, a healer or a host failure left on the rig, one line each; nothing when the rig is as
# `rig up` made it: no rate limit on any link, no expiry timer, every tray's GPUs at their default power
# limit, its valve open, no failed GPU, its switch port up and its sshd answering, every Slurm node in
# service (a node only not responding gets up to 15 s: slurmctld returns it by itself, ReturnToService=2).
rig_leftovers() {
  local ns t d n=0
  for ns in $(rig_namespaces); do
    ip netns exec "$ns" tc qdisc show | grep 'qdisc tbf' | sed "s/^/$ns: /"
  done
  expiry_timers | sed 's/^\(.*\) \(.*\)$/\1: host-side expiry timer still running (pid \2)/'
  for t in $(rig_trays); do
    d=$RIG_DIR/trays.d/$t
    [ -f "$d/power_cap" ] && echo "$t: GPUs capped to $(cat "$d/power_cap") W"
    [ -f "$d/valve" ] && echo "$t: coolant valve at $(cat "$d/valve")"
    ls "$d"/gpu*.xid "$d"/gpu*.lost 2>/dev/null | sed "s|^|$t: failed GPU: |"
    "$RIG" link "$t" show && echo "$t: switch port down"
    ip netns exec rcrig-sw timeout 2 bash -c "exec 3<>/dev/tcp/10.77.0.${t#tray}/22" 2>/dev/null || echo "$t: sshd does not answer"
  done
  while slurm_out_of_service | grep -qv 'drain'; do
    n=$((n + 1)); [ $n -le 15 ] || break; sleep 1
  done
  slurm_out_of_service | sed 's/^/slurm: /'
}
# Puts the rig back as `rig up` made it, whatever rig_leftovers listed.
rig_reset() {
  local ns p t d dev tdp
  for ns in $(rig_namespaces); do
    for dev in $(ip netns exec "$ns" tc qdisc show | awk '/qdisc tbf/ {for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1)}'); do
      ip netns exec "$ns" tc qdisc del dev "$dev" root
    done
  done
  expiry_timers | while read -r ns p; do kill -KILL "$p"; done
  tdp=$("$RIG_DIR/bin/rig-gpu" tdp)
  for t in $(rig_trays); do
    d=$RIG_DIR/trays.d/$t
    [ -f "$d/power_cap" ] && "$RIG" power set "$t" "$tdp"
    [ -f "$d/valve" ] && "$RIG" valve set "$t" 100
    "$RIG" gpu "$t" reset
    "$RIG" link "$t" up
    sinfo -h -n "$t" -o '%T' | grep -q 'drain' && scontrol update nodename="$t" state=resume
  done
  hostfail_cleanup
}
# Problems of a report database and its ledger, one line each: SQLite's integrity check on both, a run
# still marked running, a ledger entry still open, an expiry token still on the host.
db_leftovers() {
  local db=$1 ledger=$1.ledger f r tok
  for f in "$db" "$ledger"; do
    [ -e "$f" ] || continue
    r=$(sqlite3 "$f" 'PRAGMA integrity_check' 2>&1 | paste -sd' ')
    [ "$r" = ok ] || echo "$f: integrity_check: $r"
  done
  if [ -e "$db" ] && [ "$(sqlite3 "$db" "SELECT count(*) FROM sqlite_master WHERE name = 'runs'")" = 1 ]; then
    r=$(sqlite3 "$db" "SELECT group_concat(id) FROM runs WHERE status = 'running'" 2>&1)
    [ -n "$r" ] && echo "$db: run(s) $r still marked running"
  fi
  if [ -e "$ledger" ] && [ "$(sqlite3 "$ledger" "SELECT count(*) FROM sqlite_master WHERE name = 'ledger'")" = 1 ]; then
    sqlite3 "$ledger" "SELECT 'open ledger entry ' || id || ' (' || target || '): ' || replace(note, char(10), ' | ')
                       FROM ledger WHERE state = 'open'" 2>&1
    for tok in $(sqlite3 "$ledger" "SELECT expiry_token FROM ledger WHERE expiry_token != ''"); do
      [ -e "$tok" ] && echo "expiry token $tok still there"
    done
  fi
  return 0
}
