#!/usr/bin/env bash
# What the rig's trays offer a runner, read through the real parts and rackchaos' parsers (label rig, in the
# rig fixture): nvidia-smi and journalctl on a tray over the rig's sshd with the inventory's PATH, and the
# real Prometheus scraping the trays' dcgm-exporters. tray2 gets a 300 W cap and an Xid 48 on GPU 1; the
# parsed observations must show tray2's clock at the simulator's 0.630 (cluster::SpeedAtPower) and the
# others at full clock, the Xid through journald and as DCGM's gauge, and no observation errors. Reverts
# what it set, also on failure.   observe_test.sh <rig-observe-check>
set -uo pipefail
check=$1
RIG_DIR=${RIG_DIR:-/tmp/rcrig}; NET=${RIG_SUBNET:-10.77.0}
rig=$RIG_DIR/bin/rig
trap '"$rig" power set tray2 1200; "$rig" gpu tray2 reset; "$rig" gpu tray5 reset; "$rig" valve set tray4 100' EXIT
fail() { echo "observe_test: FAIL: $*"; exit 1; }
ssh_tray() {  # N CMD: as the runner does, with the inventory's PATH
  ssh -o BatchMode=yes -o UserKnownHostsFile="$RIG_DIR/ssh/known_hosts" -i "$RIG_DIR/ssh/user_key" rcrig@$NET.$1 \
    "export PATH='$RIG_DIR/node-bin:/usr/sbin:/usr/bin:/sbin:/bin'; $2"
}
query="index,pci.bus_id,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,clocks_event_reasons.active"

"$rig" power set tray2 300 || fail "power set"
# nvidia-smi over SSH on tray2 and tray3.
for k in 2 3; do
  out=$(ssh_tray $k "nvidia-smi --query-gpu=$query --format=csv,noheader,nounits" | "$check" nvsmi tray$k) || fail "nvsmi tray$k"
  echo "$out" | sed "s/^/  nvidia-smi tray$k: /" | grep -v "temperature\|power " | head -4
  grep -q "^error" <<<"$out" && fail "nvidia-smi tray$k: $(grep '^error' <<<"$out")"
  want=1.0000; [ $k = 2 ] && want=0.6300
  [ "$(grep -c "^sample tray$k.gpu[0-3] gpu_clock_fraction $want" <<<"$out")" = 4 ] ||
    fail "tray$k clock fraction not $want: $out"
done
# The kernel log over SSH: the reader's first poll, then an Xid 48 on tray2's GPU 1, then the next poll.
out=$("$check" journal tray2 "ssh -o BatchMode=yes -o UserKnownHostsFile=$RIG_DIR/ssh/known_hosts -i $RIG_DIR/ssh/user_key rcrig@$NET.2 PATH=$RIG_DIR/node-bin:/usr/bin:/bin journalctl" \
  "'$rig' gpu tray2 fail 1 48") || fail "journal"
echo "$out" | sed 's/^/  journald tray2: /'
grep -q "^error" <<<"$out" && fail "journal: $(grep '^error' <<<"$out")"
grep -q "^kernel tray2 NVRM: Xid (PCI:0000:02:00): 48, " <<<"$out" || fail "no Xid 48 through journald: $out"
[ "$(grep -c '^kernel' <<<"$out")" = 1 ] || fail "kernel lines: $out"
# Prometheus: every tray's four GPUs, tray2's capped clock and its Xid gauge, once it has scraped them. It
# scrapes every 1 s, but right after `rig up` a target may not have been scraped yet (a fixed 2.5 s wait
# failed once in a clean run: tray1 had no series), so ask again for up to 20 s until nothing is missing.
for _ in $(seq 40); do
  sleep 0.5
  json=$(curl -sf "http://$NET.254:9090/api/v1/query" --data-urlencode 'query={__name__=~"DCGM_.*"}') || fail "prometheus query"
  out=$("$check" prom "$(wc -l <"$RIG_DIR/trays")" "$(date +%s.%N)" <<<"$json") || fail "prom parse"
  if ! grep -q "^error" <<<"$out" && grep -q "^xid tray2.gpu1 48" <<<"$out"; then break; fi
done
grep -q "^error" <<<"$out" && fail "prometheus: $(grep '^error' <<<"$out")"
[ "$(grep -c '^sample tray2.gpu[0-3] gpu_clock_fraction 0.6300' <<<"$out")" = 4 ] || fail "prometheus tray2 clock: $out"
[ "$(grep -c '^sample tray[13456].gpu[0-3] gpu_clock_fraction 1.0000' <<<"$out")" = $((4 * ($(wc -l <"$RIG_DIR/trays") - 1))) ] ||
  fail "prometheus: the uncapped trays' clocks: $out"
grep -q "^xid tray2.gpu1 48" <<<"$out" || fail "prometheus: no Xid 48 gauge on tray2.gpu1: $out"
grep "tray2.gpu1" <<<"$out" | sed 's/^/  prometheus: /'
# The GPU that logged Xid 48 fails the tray's diag until it is reset (repaired).
out=$("$rig" diag tray2) && fail "diag passed with a GPU that logged Xid 48: $out"
grep -q "GPU 1 of tray2 logged Xid 48" <<<"$out" || fail "diag tray2: $out"
# A GPU off the bus (Xid 79 on tray5's GPU 0): nvidia-smi's device-handle line, a device report; diag fails.
"$rig" gpu tray5 fail 0 || fail "gpu fail"
out=$(ssh_tray 5 "nvidia-smi --query-gpu=$query --format=csv,noheader,nounits" | "$check" nvsmi tray5)
grep -q "^device tray5.gpu0 gpu_lost" <<<"$out" || fail "no lost GPU on tray5: $out"
grep -q "^error" <<<"$out" && fail "nvidia-smi tray5: $(grep '^error' <<<"$out")"
out=$("$rig" diag tray5) && fail "diag passed with a GPU off the bus: $out"
grep -q "fallen off the bus" <<<"$out" || fail "diag tray5: $out"
# The coolant valve: set, read back (the valve_fail injector's baseline), and diag fails while it is shut.
"$rig" valve set tray4 0 && [ "$("$rig" valve get tray4)" = 0 ] || fail "valve set/get 0"
out=$("$rig" diag tray4) && fail "diag passed with the valve shut: $out"
grep -q "coolant valve is at 0%" <<<"$out" || fail "diag tray4: $out"
"$rig" valve set tray4 100 && [ "$("$rig" valve get tray4)" = 100 ] || fail "valve set/get 100"
# The CPU benchmark, the diag's last check: tray3 passes it, then fails it with its cgroup held to a tenth
# of a CPU (the quota alone, no power cap for the earlier check to see), and passes again once it is lifted.
read -r cgv cgdir <<<"$("$rig" cgroup)"
quota() {  # max | a tenth
  if [ "$cgv" = v2 ]; then echo "$([ "$1" = max ] && echo max || echo 10000) 100000" >"$cgdir/tray3/cpu.max"
  else echo "$([ "$1" = max ] && echo -1 || echo 10000)" >"$cgdir/tray3/cpu.cfs_quota_us"; fi
}
trap '"$rig" power set tray2 1200; "$rig" gpu tray2 reset; "$rig" gpu tray5 reset; "$rig" valve set tray4 100; quota max' EXIT
out=$("$rig" diag tray3) || fail "diag failed on a healthy tray3: $out"
echo "  diag tray3: $out"
quota tenth || fail "cannot set tray3's quota in $cgdir"
out=$("$rig" diag tray3) && fail "diag passed with tray3's cgroup at a tenth of a CPU: $out"
echo "  diag tray3 at a tenth of a CPU: $out"
grep -q "CPU benchmark in tray3's cgroup took" <<<"$out" || fail "diag tray3: $out"
quota max
out=$("$rig" diag tray3) || fail "diag failed on tray3 with its quota lifted: $out"
echo "observe_test: ok"
