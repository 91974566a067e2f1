#!/usr/bin/env bash
# The long run's plan (bench/longrun/longrun), on stdout: DURATION seconds on TRAYS rig trays, a fault every
# EVERY seconds, each for EVERY/2, cycling through the rig's kinds that need no job (a token bucket on
# the tray's link, on the tray itself; its switch port down; its GPU power cap; its coolant valve) and
# through the trays, so every host and every path of the runner (ledger entry, arming, landing, host-side
# expiry, revert, verify, the healer's drain, diagnostic and resume) is taken again and again. No job
# and no gate: the run passes when every fault landed and was reverted.
#   plan.sh DURATION TRAYS EVERY
set -euo pipefail
duration=$1 trays=$2 every=$3
cat <<YAML
# Written by bench/longrun/plan.sh $duration $trays $every
name: longrun
description: a fault every ${every} s for ${duration} s on ${trays} rig trays, for the runner's resource use over time
seed: 1
duration: ${duration}s

cluster:
  model: gb200-nvl72
  racks: 1

faults:
YAML
kinds=(link_degrade link_down gpu_throttle valve_fail)
i=0
for ((at = every; at + every <= duration; at += every)); do
  tray=$(printf '%02d' $(( i % trays + 1 )))
  kind=${kinds[$(( (i / trays) % ${#kinds[@]} ))]}
  case $kind in
    link_degrade) target=r01.tray$tray.nic0 params='{bandwidth: 10%}' ;;
    link_down) target=r01.tray$tray.nic0 params='' ;;
    gpu_throttle) target=r01.tray$tray.gpu0 params='{power_cap: 600W}' ;;
    valve_fail) target=r01.tray$tray.valve params='{opening: 50%}' ;;
  esac
  echo "  - {at: ${at}s, kind: $kind, target: $target, for: $(( every / 2 ))s${params:+, params: $params}}"
  i=$((i + 1))
done
