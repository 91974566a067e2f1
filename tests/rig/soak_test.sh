#!/usr/bin/env bash
# The soak on the rig (issue 25 item 2; label soak with 200 iterations, a 10-iteration smoke in label rig;
# in the rig fixture). Each iteration draws one case from the seeded generator, prints it, runs it:
#   kill       a run of tests/rig/plans/soak_mix.yaml (four faults on four trays, the healer on) and the
#              runner killed (kill -9) at a random moment from its start to after its end;
#   sshd       tray2's sshd killed while plans/soak_degrade.yaml's fault is on it (a random moment after it
#              landed) and back 0.5-3.5 s later: within the run (the run reverts it) or after it (recover does);
#   partition  tray2's switch port down around that fault: while it is armed, across its apply or across
#              its revert (random bounds within each);
#   expiry     tray2's port down once that fault landed and the runner killed: the host-side expiry ends it
#              on the host on time, and recover says so.
# Then `rackchaos recover` on the run's database (always: it must be harmless where nothing is left) and the
# checks: on the hosts (hostfail_lib.sh rig_leftovers: rate limits, power caps, valves, GPUs, switch ports,
# sshd, expiry timers, Slurm nodes out of service) and on the databases (db_leftovers: integrity_check of
# the report and the ledger, no run left running, no open entry, no expiry token left). Anything found is
# printed with the iteration and its draw, put right (rig_reset) so the next iteration starts clean, and
# counted; the soak fails at the end if anything was. The last line sums it up.
# The runs use the rig's inventory with ssh timeouts short enough to give up within a partition
# (connect 2 s, command 4 s) and expiry_grace 2s, so an iteration takes 4-12 s.
#   soak_test.sh <rackchaos> <plans dir> <iterations>
# RACKCHAOS_SOAK_SEED (default: the time, printed) replays a soak, RACKCHAOS_SOAK_ITERATIONS overrides
# the count, RACKCHAOS_SOAK_FIRST=I starts at iteration I (each iteration's draw depends on the seed and I
# only), RACKCHAOS_SOAK_CASES restricts the mix (e.g. "sshd expiry").
set -uo pipefail
TEST=soak_test
rackchaos=$1 plans=$2
iterations=${RACKCHAOS_SOAK_ITERATIONS:-$3}
seed=${RACKCHAOS_SOAK_SEED:-$(date +%s)}
first=${RACKCHAOS_SOAK_FIRST:-1}
read -r -a cases <<<"${RACKCHAOS_SOAK_CASES:-kill sshd partition expiry}"
. "$(dirname "$0")/hostfail_lib.sh"
trap hostfail_cleanup EXIT
inv=$PWD/soak-inventory.yaml
sed -e 's/^  connect_timeout: .*/  connect_timeout: 2s/' -e 's/^  command_timeout: .*/  command_timeout: 4s/' \
  -e 's/^expiry_grace: .*/expiry_grace: 2s/' "$RIG_DIR/inventory.yaml" >"$inv"
[ "$(grep -c '^  connect_timeout: 2s$\|^  command_timeout: 4s$\|^expiry_grace: 2s$' "$inv")" = 3 ] ||
  fail "the rig's inventory has no ssh timeouts or expiry_grace to change"
logs=$PWD/soak-logs
rm -rf "$logs" && mkdir -p "$logs"

kills=0 deaths=0 partitions=0 leftovers=0 returned=0
echo "soak: $iterations iterations from $first, RACKCHAOS_SOAK_SEED=$seed, cases: ${cases[*]}"
left=$(rig_leftovers)
[ -z "$left" ] || { echo "soak: the rig was not clean before the first iteration:"; echo "$left"; rig_reset; }

# draw N: R = a draw in [0, N) from bash's seeded generator (30 bits). Not in a $(...): a subshell's
# generator is reseeded, and the parent's does not move on.
draw() { R=$(( ((RANDOM << 15) | RANDOM) % $1 )); }
secs() { awk -v m="$1" 'BEGIN{printf "%.2f", m / 1000}'; }
since() { awk -v a="$1" -v n="$(date +%s.%N)" 'BEGIN{printf "%.1f", n - a}'; }
note() { problems+=("$*"); }

# Starts `rackchaos run PLAN` on this iteration's database in the background: $run, $t0.
start_run() {
  rm -f "$db" "$db".ledger*
  t0=$(date +%s.%N)
  "$rackchaos" run "$plans/$1.yaml" --inventory "$inv" --db "$db" >"$out" 2>&1 &
  run=$!; bg_pids+=($run)
}
kill_runner() {  # counted only when the runner was still running
  if kill -0 "$run" 2>/dev/null; then kill -KILL "$run"; kills=$((kills + 1)); fi
  wait "$run" 2>/dev/null
}
# The fault on tray2 is on and armed with its host-side expiry, or the iteration notes that it never was.
tray2_landed() { landed_armed "$db.ledger" || { note "the fault never landed on tray2 with its expiry"; return 1; }; }

case_kill() {
  local at; draw 9500; at=$R
  echo "kill -9 of the runner at $(secs "$at") s"
  start_run soak_mix
  sleep_until "$t0" "$(secs "$at")"
  kill_runner
}

case_sshd() {
  local after down; draw 1500; after=$R; draw 3000; down=$((500 + R))
  echo "tray2's sshd killed $(secs "$after") s after the fault landed, back $(secs "$down") s later"
  start_run soak_degrade
  tray2_landed || { wait "$run"; return; }
  sleep "$(secs "$after")"
  sshd_kill; deaths=$((deaths + 1))
  sleep "$(secs "$down")"
  local back=within; kill -0 "$run" 2>/dev/null || back=after
  sshd_start
  echo "  sshd back at $(since "$t0") s, $back the run"
  wait "$run"
}

case_partition() {
  local phase from to n
  local a b; draw 3; phase=$R; draw 1000; a=$R; draw 1000; b=$R
  case $phase in  # the fault is armed at ~0.5 s, its go line sent at 1.75 s, its revert due at 4 s
    0) phase=armed from=$((700 + a * 3 / 10)) to=$((1300 + b * 3 / 10)) ;;
    1) phase=apply from=$((1000 + a * 7 / 10)); to=$((from + 2000 + b * 4)) ;;
    2) phase=revert from=$((3000 + a * 9 / 10)) to=$((4500 + b * 35 / 10)) ;;
  esac
  echo "tray2's switch port down $(secs "$from")-$(secs "$to") s ($phase)"
  start_run soak_degrade
  sleep_until "$t0" "$(secs "$from")"
  ip netns exec rcrig-sw ip link set tray2 down; partitions=$((partitions + 1))
  sleep_until "$t0" "$(secs "$to")"
  ip netns exec rcrig-sw ip link set tray2 up
  wait "$run"
  sleep 2  # packets the partition held back
  n=$(sqlite3 "$db" "SELECT count(*) FROM event_log WHERE type = 'action' AND detail LIKE 'ssh.apply ok%'")
  [ "$n" -le 1 ] || note "$n applies of the one fault reported"
}

case_expiry() {
  local after landed ended; draw 1000; after=$R
  echo "tray2's port down and the runner killed $(secs "$after") s after the fault landed"
  start_run soak_degrade
  tray2_landed || { wait "$run"; return; }
  landed=$(date +%s.%N)
  sleep "$(secs "$after")"
  ip netns exec rcrig-sw ip link set tray2 down; partitions=$((partitions + 1))
  kill_runner
  # Planned to last 2 s; the expiry fires at 2 s + expiry_grace 2 s on the host, runner or not.
  wait_until 10 sh -c "! ip netns exec $NS tc qdisc show dev eth0 | grep -q 'qdisc tbf'" ||
    note "the host-side expiry did not end the fault on tray2"
  ended=$(since "$landed")
  echo "  the limit ended on tray2 $ended s after it landed"
  awk -v t="$ended" 'BEGIN{exit !(t >= 1.5 && t <= 6)}' || note "the fault ended $ended s after landing, not 2-4 s"
  ip netns exec rcrig-sw ip link set tray2 up
  expect_recover="already reverted on the host: its host-side expiry fired"
}

summary() {
  echo "soak: $1 iterations, $kills runner kills, $deaths host deaths, $partitions partitions, $leftovers leftovers" \
    "($returned trays drained by killed runs returned by recover); wall $((SECONDS - start)) s (RACKCHAOS_SOAK_SEED=$seed)"
}

start=$SECONDS
for ((i = first; i < first + iterations; i++)); do
  RANDOM=$(( (seed * 7919 + i) % 2147483647 ))
  problems=() expect_recover=""
  db=$logs/soak-$i.db out=$logs/soak-$i.out
  draw ${#cases[@]}; kase=${cases[$R]}
  printf 'iteration %d (seed %s): %s: ' "$i" "$seed" "$kase"
  it0=$SECONDS
  "case_$kase"
  if [ -e "$db" ] || [ -e "$db.ledger" ]; then
    rec=$(timeout 60 "$rackchaos" recover --db "$db" 2>&1); rc=$?
    echo "$rec" >"$logs/soak-$i.recover"
    [ $rc = 0 ] || note "recover exited $rc: $(tail -n 3 <<<"$rec" | paste -sd' ')"
    [ -z "$expect_recover" ] || grep -q "$expect_recover" <<<"$rec" || note "recover does not say: $expect_recover"
  fi
  left=$( (rig_leftovers; db_leftovers "$db") 2>&1)
  # Trays the killed run's healer had drained: recover returns them once their diagnostic passes.
  returned=$((returned + $(cat "$logs/soak-$i.recover" 2>/dev/null | grep -c '^tray .*: returned to service')))
  [ -z "$left" ] || problems+=("$left")
  if [ ${#problems[@]} -gt 0 ]; then
    leftovers=$((leftovers + 1))
    echo "iteration $i (RACKCHAOS_SOAK_SEED=$seed RACKCHAOS_SOAK_FIRST=$i, $kase) left:"
    printf '  %s\n' "${problems[@]}"
    echo "  run output: $out; last lines:"; grep -v '\] \[debug\]' "$out" | tail -n 15 | sed 's/^/    /'
    [ -e "$db.ledger" ] && for tok in $(sqlite3 "$db.ledger" "SELECT expiry_token FROM ledger WHERE expiry_token != ''" 2>/dev/null); do
      rm -f "$tok"
    done
    rig_reset
    left=$(rig_leftovers)
    [ -z "$left" ] || { echo "$left"; summary $((i - first + 1)); fail "the rig could not be put right after iteration $i"; }
  else
    rm -f "$db" "$db".ledger* "$out" "$logs/soak-$i.recover"
  fi
  echo "  iteration $i: $((SECONDS - it0)) s"
done
summary "$iterations"
[ "$leftovers" = 0 ] || fail "$leftovers iteration(s) left something behind (above)"
echo "$TEST: ok"
