#!/usr/bin/env bash
# A power cap slows a rig rank as the simulator slows a capped GPU (issue 21): four rig-rank processes run
# their ring all-reduce on loopback (127.0.0.1-4), rank 1's tray capped to 300 W and rank 2's to 900 W,
# ranks 0 and 3 uncapped. Over ~4 s of steps, each capped rank's median compute time over the uncapped
# ranks' median must be the simulator's slowdown 1/cluster::SpeedAtPower(cap, 1200 W) (`rig-gpu speed`:
# 1.587 at 300 W, 1.101 at 900 W) within 6%, and every rank's all-reduce sums must be right (a wrong sum
# ends a rank with exit 4). No root; a few seconds.   throttle_test.sh <rig-rank> <rig-gpu>
set -uo pipefail
rank=$1 gpu=$2
tmp=$(mktemp -d /tmp/rcrig-throttle-test.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "throttle_test: FAIL: $*"; for d in "$tmp"/d*; do tail -3 "$d/log" 2>/dev/null; done; exit 1; }
port=$((20000 + RANDOM % 20000))
mkdir -p "$tmp/ckpt"
for r in 0 1 2 3; do mkdir -p "$tmp/d$r"; done
echo 300 >"$tmp/d1/power_cap"; echo 900 >"$tmp/d2/power_cap"
for r in 0 1 2 3; do
  "$rank" --rank $r --hosts 127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4 --port $port --dir "$tmp/d$r" \
    --ckpt "$tmp/ckpt" --timeout 10 >"$tmp/d$r/log" 2>&1 &
  pids+=($!)
done
# Sample each rank's last step (rank.status: "step N compute step send") every 0.15 s.
for i in $(seq 1 30); do
  sleep 0.15
  for r in 0 1 2 3; do
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || fail "a rank ended early"; done
    awk '$1 == "step" && $2 >= 3 {print $2, $3}' "$tmp/d$r/rank.status" 2>/dev/null >>"$tmp/d$r/samples"
  done
done
median() { sort -u "$@" | awk '{print $2}' | sort -g | awk '{v[NR]=$1} END{if (NR == 0) exit 1; print v[int((NR+1)/2)]}'; }
base=$(median "$tmp/d0/samples" "$tmp/d3/samples") || fail "no steps from the uncapped ranks"
for r in 1 2; do
  watts=$(cat "$tmp/d$r/power_cap")
  want=$("$gpu" speed "$watts" | cut -d' ' -f2)
  got=$(median "$tmp/d$r/samples") || fail "no steps from rank $r"
  steps=$(sort -u "$tmp/d$r/samples" | wc -l)
  printf 'throttle_test: %s W: compute %.4f s / %.4f s uncapped = %.3fx over %d steps (simulator %.3fx)\n' \
    "$watts" "$got" "$base" "$(awk -v g="$got" -v b="$base" 'BEGIN{print g/b}')" "$steps" "$want"
  [ "$steps" -ge 5 ] || fail "only $steps steps of rank $r"
  awk -v g="$got" -v b="$base" -v w="$want" 'BEGIN{r = g / b / w; exit !(r > 0.94 && r < 1.06)}' ||
    fail "rank $r at $watts W is not the simulator's ${want}x slower"
done
echo "throttle_test: ok"
