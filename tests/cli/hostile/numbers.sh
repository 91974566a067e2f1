#!/usr/bin/env bash
# Hostile numbers, relations and unfinished runs through the binary (issue 26 items 2, 3, 6; issue 25 item 4):
# every value a user gives is bounded, every refusal names the valid range, values that are wrong together
# are refused with file:line:column, and no run without a verdict reads as a pass. The internal errors of
# issue 26 are reproduced here: sweep --threads 100000 (std::system_error), a fault on every NVLink port
# of a GPU (NOT NULL job_events.step_time_s), a zero checkpoint interval (accepted, then a runaway run).
#   numbers.sh RACKCHAOS WORKDIR SOURCE_DIR
# Each case checks the exit code, exactly one line on stderr matching a pattern, 20 s and 1 GiB at most.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
rc=$(realpath "$1") work=$2/hostile-numbers src=$(realpath "$3")
rm -rf "$work" && mkdir -p "$work" && cd "$work"

failed=0
# Under AddressSanitizer (the asan stage runs this too) the address space cannot be limited (ASan reserves
# terabytes of shadow): the 1 GiB bound is the plain build's to check.
vlimit=1048576
if under_asan "$rc"; then vlimit=unlimited; fi
# expect NAME CODE REGEX CMD...: CMD exits CODE with one stderr line matching REGEX, within the bounds.
expect() {
  local name=$1 code=$2 regex=$3 got=0
  shift 3
  (ulimit -v $vlimit; exec timeout 20 "$@") >out.txt 2>err.txt || got=$?
  if [ "$got" != "$code" ] || [ "$(wc -l <err.txt)" != 1 ] || ! grep -Eq -- "$regex" err.txt; then
    echo "FAIL $name: exit $got (expected $code), stderr: $(head -c 600 err.txt)"
    failed=1
  else
    echo "ok   $name: $(cat err.txt)"
  fi
}
# stdout NAME REGEX: the last case's stdout matches REGEX.
stdout() {
  if ! grep -Eq -- "$2" out.txt; then
    echo "FAIL $1: stdout does not match '$2': $(head -c 400 out.txt)"
    failed=1
  fi
}

# plan STEP INTERVAL DURATION AT FOR [EXTRA]: a one-rack plan with one job and one NVLink fault.
plan() {
  cat <<YAML
name: hostile-numbers
cluster: {model: gb200-nvl72, racks: 1}
workload:
  jobs:
    - {name: j, gpus: 64, step_time: $1, checkpoint: {interval: $2, write_time: 1s}}
duration: $3
faults:
  - {at: $4, kind: link_down, target: r01.tray03.gpu2.nvlink1, for: $5}
${6:-}
YAML
}
plan 6s 30m 2h 10m 10m >base.yaml
"$rc" validate base.yaml >/dev/null || { echo "FAIL: the base plan does not validate"; exit 1; }
v() { plan "$@" >p.yaml; }

# ---- Numbers out of range: each names its range (docs/plan-reference.md has the same).
v 0s 30m 2h 10m 10m;   expect step-time-zero 2 "p.yaml:5:38: step_time: '0s' is out of range; expected a duration from 1ms to 1d" "$rc" validate p.yaml
v 6s 0s 2h 10m 10m;    expect checkpoint-interval-zero 2 "p.yaml:5:[0-9]+: interval: '0s' is out of range; expected a duration from 1s to" "$rc" validate p.yaml
v 6s 30m 0s 10m 10m;   expect duration-zero 2 "p.yaml:6:11: duration: '0s' is out of range; expected a duration from 1s to" "$rc" validate p.yaml
v 6s 30m 2h 10m 0s;    expect for-zero 2 "p.yaml:8:[0-9]+: for: '0s' is out of range; expected a duration from 1ms to" "$rc" validate p.yaml
v 6s 30m 5000d 10m 10m; expect duration-huge 2 "p.yaml:6:11: duration: '5000d' is out of range; expected a duration from 1s to" "$rc" validate p.yaml
v 6s 30m 2h 1e308s 10m; expect at-1e308 2 "p.yaml:8:[0-9]+: at: " "$rc" validate p.yaml
v 6s 30m 2h 10m 10m "chaos: {catalogue: llama3, until: 0s}"
expect chaos-until-zero 2 "p.yaml:9:[0-9]+: until: '0s' is out of range" "$rc" validate p.yaml

sed 's/kind: link_down, target: r01.tray03.gpu2.nvlink1,/kind: gpu_throttle, target: r01.tray03.gpu2, params: {power_cap: 99999999W},/' base.yaml >p.yaml
expect power-cap-huge 2 "p.yaml:8:[0-9]+: parameter 'power_cap': '99999999W' is out of range; expected a power from 1W to 100kW" "$rc" validate p.yaml

# ---- Relations: each value in range, wrong together.
v 6s 30m 1h 2h 10m;    expect at-after-end 2 "p.yaml:8:[0-9]+: faults\[0\].at: 2h is not before the plan's duration 1h .*never be injected; valid: 0s to" "$rc" validate p.yaml
v 6s 30m 1h 50m 1d;    expect for-past-end 2 "p.yaml:8:[0-9]+: faults\[0\].for: 1d from 50m runs past the plan's duration 1h: valid: 1ms to 10m" "$rc" validate p.yaml
v 6s 30m 2h 10m 10m "chaos: {catalogue: llama3, from: 1h, until: 30m}"
expect chaos-window-backwards 2 "p.yaml:9:[0-9]+: chaos.until: 30m is not after chaos.from 1h" "$rc" validate p.yaml
v 6s 30m 2h 10m 10m "chaos: {catalogue: llama3, until: 3h}"
expect chaos-past-end 2 "p.yaml:9:[0-9]+: chaos.until: 3h is after the plan's duration 2h" "$rc" validate p.yaml

# ---- Healer policy files: windows and periods bounded, NaN and huge numbers refused.
policy() { sed "$1" "$src/healer/policies/default.yaml" >pol.yaml; }
policy 's/recheck: 10m/recheck: 0s/'
expect policy-recheck-zero 2 "pol.yaml:[0-9]+:[0-9]+: return_to_service.recheck is 0s; it must be a duration from 1s to 1d" "$rc" run base.yaml --dry-run --healer pol.yaml
policy 's/mad_threshold: 6 /mad_threshold: .nan /'
expect policy-nan 2 "pol.yaml:[0-9]+:[0-9]+: detectors.straggler.mad_threshold is .nan; it must be a number from 0.5 to 1000" "$rc" run base.yaml --dry-run --healer pol.yaml
policy 's/temperature_c: 85 /temperature_c: 1e308 /'
expect policy-huge 2 "pol.yaml:[0-9]+:[0-9]+: detectors.thermal.temperature_c is 1e308; it must be a number from 20 to 150" "$rc" run base.yaml --dry-run --healer pol.yaml

# ---- Site inventories: timeouts and graces bounded (docs/inventory-reference.md has the same).
{ inventory_base; echo "expiry_grace: 30s"; } >inv_base.yaml
inventory_plan hostile-inventory-numbers >real.yaml
inv() { sed "$1" inv_base.yaml >inv.yaml; }
inv 's/connect_timeout: 5s/connect_timeout: 0s/'
expect inventory-connect-zero 2 "inv.yaml:4:[0-9]+: connect_timeout '0s' is out of range; expected a duration from 1s to 1h" "$rc" validate real.yaml
inv 's/command_timeout: 20s/command_timeout: 1000d/'
expect inventory-command-huge 2 "inv.yaml:4:[0-9]+: command_timeout '1000d' is out of range; expected a duration from 1s to 1d" "$rc" validate real.yaml
inv 's/expiry_grace: 30s/expiry_grace: 5000d/'
expect inventory-grace-huge 2 "inv.yaml:15:[0-9]+: expiry_grace '5000d' is out of range; expected a duration from 0s to 1d" "$rc" validate real.yaml

# ---- Command line: one line, the range named.
expect seed-negative 2 "^rackchaos: .*--seed.*'-1' is not an integer from 0 to 18446744073709551615" "$rc" validate base.yaml --seed -1
expect pace-huge 2 "^rackchaos: --pace: '1e308' is not a number from 0 to 1e12 " "$rc" run base.yaml --pace 1e308 --db pace.db
expect pace-negative 2 "^rackchaos: --pace: '-1' is not a number from 0 to 1e12 " "$rc" run base.yaml --pace -1 --db pace.db
expect pace-text 2 "^rackchaos: --pace: 'fast' is not a number from 0 to 1e12 " "$rc" run base.yaml --pace fast --db pace.db
expect grid-interval-tiny 2 "^rackchaos: --grid 'checkpoint.interval=10m,1ms': checkpoint.interval '1ms' is out of range; expected a duration from 1s to" "$rc" sweep base.yaml --seeds 1 --grid checkpoint.interval=10m,1ms --db grid.db
expect spof-threshold-negative 2 "^rackchaos: --threshold: Value -1 not in range" "$rc" spof --plan base.yaml --threshold -1
# Threads and seeds of a sweep (issue 26: --threads 100000 aborted with std::system_error; 10^9 seeds grew to
# 23 GB; sweeps now stream, with the bounds main gives them).
expect sweep-threads-huge 2 "^rackchaos: --threads: '100000' is not an integer from 1 to 1024" "$rc" sweep base.yaml --seeds 1 --threads 100000 --db threads.db
expect sweep-threads-zero 2 "^rackchaos: --threads: '0' is not an integer from 1 to 1024" "$rc" sweep base.yaml --seeds 1 --threads 0 --db threads.db
expect sweep-seeds-zero 2 "^rackchaos: --seeds: '0' is not an integer from 1 to 2147483647" "$rc" sweep base.yaml --seeds 0 --db seeds.db
# A number past the option's type: CLI11 alone said "Could not convert", not what would be valid.
expect sweep-seeds-overflow 2 "^rackchaos: --seeds: '99999999999' is not an integer from 1 to 2147483647" "$rc" sweep base.yaml --seeds 99999999999 --db seeds.db
# --shard K/N: N overflowed an int (5/99999999999 ran as shard 5 of 1215752191, storing nothing); more
# shards than seeds leave shards with no run.
expect shard-overflow 2 "^rackchaos: --shard '5/99999999999' is out of range; expected K/N with 1 <= K <= N <= 2147483647" "$rc" sweep base.yaml --seeds 2 --shard 5/99999999999 --db shard.db
expect shard-zero 2 "^rackchaos: --shard '0/4' is out of range; expected K/N" "$rc" sweep base.yaml --seeds 8 --shard 0/4 --db shard.db
expect shard-more-than-seeds 2 "^rackchaos: --shard 3/5: 5 shards of 2 seed\(s\) leave shards with no run; N must be from 1 to --seeds \(2\)" "$rc" sweep base.yaml --seeds 2 --shard 3/5 --db shard.db
# --metrics: at most 32 names (the list was unbounded).
many=$(printf 'ettr.mean,%.0s' $(seq 40)); many=${many%,}
expect sweep-metrics-long 2 "^rackchaos: --metrics lists 40 names; expected 1 to 32 metric names" "$rc" sweep base.yaml --seeds 1 --metrics "$many" --db metrics.db
[ ! -e threads.db ] && [ ! -e seeds.db ] && [ ! -e shard.db ] && [ ! -e metrics.db ] ||
  { echo "FAIL sweep bounds: a refused sweep created its database"; failed=1; }
# Listen ports: 0 to 65535, refused before anything starts, naming the option (the run's message said
# --listen for --metrics-listen, serve warned about its database before refusing the port).
expect metrics-listen-port 2 "^rackchaos: --metrics-listen: '127.0.0.1:70000': the port '70000' is out of range; expected an integer from 0 to 65535" "$rc" run base.yaml --metrics-listen 127.0.0.1:70000 --db listen.db
expect sweep-metrics-listen-port 2 "^rackchaos: --metrics-listen: '\[::1\]:-1': the port '-1' is out of range; expected an integer from 0 to 65535" "$rc" sweep base.yaml --seeds 1 --metrics-listen '[::1]:-1' --db listen.db
expect serve-port 2 "^rackchaos: --listen: '127.0.0.1:99999': the port '99999' is out of range; expected an integer from 0 to 65535" "$rc" serve --db absent.db --listen 127.0.0.1:99999
[ ! -e listen.db ] || { echo "FAIL listen ports: a refused run created its database"; failed=1; }
# compare --fail-on: each amount bounded by what it measures (1e308%, inf and a ratio of 2 were accepted).
expect fail-on-percent 2 "^rackchaos: threshold 'ttr.p95=\+1e308%': '1e308%' is out of range; expected a percentage from 0% to 10000%" "$rc" compare 1 2 --db none.db --fail-on ttr.p95=+1e308%
expect fail-on-time 2 "^rackchaos: threshold 'ttr.max=\+inf': 'inf' is out of range; expected a duration from 0s to 3650d" "$rc" compare 1 2 --db none.db --fail-on ttr.max=+inf
expect fail-on-days 2 "^rackchaos: threshold 'ttr.max=\+5000d': '5000d' is out of range; expected a duration from 0s to 3650d" "$rc" compare 1 2 --db none.db --fail-on ttr.max=+5000d
expect fail-on-ratio 2 "^rackchaos: threshold 'ettr.mean=-2': '2' is out of range; expected a number from 0 to 1" "$rc" compare 1 2 --db none.db --fail-on ettr.mean=-2
expect fail-on-count 2 "^rackchaos: threshold 'faults=\+1e30': '1e30' is out of range; expected a count from 0 to 10000000" "$rc" compare 1 2 --db none.db --fail-on faults=+1e30

# ---- Incident logs (replay, catalogue fit): every number of a line bounded, the refusal at FILE:LINE.
cat >site.yaml <<'YAML'
name: hostile-fit
cluster: {model: gb200-nvl72, racks: 1}
YAML
fit() { expect "$1" 2 "$2" "$rc" catalogue fit "$3" --cluster site.yaml --since 2026-01-01T00:00:00Z --until 2026-02-01T00:00:00Z "${@:4}"; }
xid='NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.'
printf '[   12.5] %s\n[99999999999.5] %s\n' "$xid" "$xid" >uptime.log
fit log-uptime-huge "^rackchaos: uptime.log:2: the time 99999999999.5 s is out of range; expected 0 to 3155760000 s since boot" uptime.log
printf '2026-01-02T03:10:00+00:00 gpu1 kernel: NVRM: Xid (PCI:0000:3b:00): 123456, pid=1, GPU has fallen off the bus.\n' >xid.log
fit log-xid-code "^rackchaos: xid.log:1: the Xid code 123456 is out of range; expected 0 to 99999" xid.log
printf '2026-01-02T03:10:00+00:00 gpu1 kernel: NVRM: Xid (PCI:0000:3b:00): 74, pid=1, NVLink: fatal error detected on link 5000(0x0, 0x0)\n' >link.log
fit log-nvlink "^rackchaos: link.log:1: the NVLink number 5000 is out of range; expected 0 to 1023" link.log
printf '2026-01-02T03:10:00+00:00 gpu1 kernel: mlx5_core 0000:08:00.0 mlx5_0: Port: 70000 Link DOWN\n' >port.log
fit log-nic-port "^rackchaos: port.log:1: the NIC port 70000 is out of range; expected 0 to 255" port.log
printf '{"time": "2026-01-02T00:00:00Z", "event": "note"}\n{"time": -5, "event": "gpu_fail", "component": "r01.tray01.gpu0"}\n' >timeline.jsonl
fit log-time-negative "^rackchaos: timeline.jsonl:2: the time -5 s is out of range; expected 0 to 3155760000 s" timeline.jsonl
printf '{"time": 1e300, "event": "gpu_fail", "component": "r01.tray01.gpu0"}\n' >timeline.jsonl
fit log-time-huge "^rackchaos: timeline.jsonl:1: the time 1e\+300 s is out of range" timeline.jsonl
printf '[2026-01-02T03:11:00.000] update_node: node gpu[0-99999999] state set to DRAINING\n' >slurm.log
fit log-hostlist-count "^rackchaos: slurm.log:1: the hostlist 'gpu\[0-99999999\]' names 100000000 nodes; expected 1 to 4096 on one line" slurm.log
printf '[2026-01-02T03:11:00.000] update_node: node gpu[9-1] state set to DRAINING\n' >slurm.log
fit log-hostlist-backwards "^rackchaos: slurm.log:1: the hostlist range '9-1' runs backwards" slurm.log
printf '[2026-01-02T03:11:02.000] Requeuing JobId=99999999999\n' >slurm.log
fit log-job-id "^rackchaos: slurm.log:1: the Slurm job id 99999999999 is out of range; expected 1 to 4294967294" slurm.log
printf '[rank3]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 99999999999] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n' >nccl.log
fit log-nccl-rank "^rackchaos: nccl.log:1: the NCCL rank 99999999999 is out of range; expected 0 to 1073741823" nccl.log
printf 'gpu-r01-t03:91811:91902 [99999] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion with error 12\n' >nccl.log
fit log-cuda-device "^rackchaos: nccl.log:1: the CUDA device 99999 is out of range; expected 0 to 4095" nccl.log
# replay reads logs through the same importers.
expect replay-log-uptime 2 "^rackchaos: uptime.log:2: the time 99999999999.5 s is out of range" "$rc" replay uptime.log --cluster site.yaml --db replay.db
# catalogue fit's window and year: a day to a century, 1970 to 9999.
printf '2026-01-02T03:10:00+00:00 gpu1 kernel: %s\n' "$xid" >ok.log
"$rc" catalogue fit ok.log --cluster site.yaml --since 2026-01-01T00:00:00Z --until 2026-02-01T00:00:00Z >/dev/null 2>&1 ||
  { echo "FAIL: the base log does not fit"; failed=1; }
expect fit-window-short 2 "^rackchaos: --since '2026-01-01T00:00:00Z' .. --until '2026-01-01T01:00:00Z' is 0.0417 days; the window must be from 1 to 36525 days" "$rc" catalogue fit ok.log --cluster site.yaml --since 2026-01-01T00:00:00Z --until 2026-01-01T01:00:00Z
expect fit-window-long 2 "^rackchaos: --since '1970-01-01T00:00:00Z' .. --until '9999-01-01T00:00:00Z' is 2932532 days; the window must be from 1 to 36525 days" "$rc" catalogue fit ok.log --cluster site.yaml --since 1970-01-01T00:00:00Z --until 9999-01-01T00:00:00Z
fit fit-year "^rackchaos: --year: '99999' is not an integer from 1970 to 9999" ok.log --year 99999

# ---- A fault on every NVLink port of a GPU (issue 26): the job hangs, the run finishes with a verdict.
v 6s 30m 2h 10m 20m
sed -i 's/target: r01.tray03.gpu2.nvlink1,/target: "r01.tray03.gpu2.nvlink*", pick: all,/' p.yaml
"$rc" run p.yaml --db pickall.db >out.txt 2>err.txt || { echo "FAIL pick-all-nvlink: exit $?: $(cat err.txt)"; failed=1; }
[ "$(sqlite3 pickall.db 'select status from runs')" = passed ] || { echo "FAIL pick-all-nvlink: run row $(sqlite3 pickall.db 'select status from runs')"; failed=1; }
grep -q "has no NVLink port up" <(sqlite3 pickall.db "select detail from job_events") ||
  { echo "FAIL pick-all-nvlink: the job did not hang on its GPU without NVLink"; failed=1; }

# ---- Unfinished runs: a 'running' row (a killed run) and an 'error' row never read as a pass.
"$rc" run base.yaml --db runs.db >/dev/null 2>&1
"$rc" run base.yaml --db runs.db --seed 2 >/dev/null 2>&1
"$rc" run base.yaml --db runs.db --seed 3 >/dev/null 2>&1
sqlite3 runs.db "UPDATE runs SET status = 'running', exit_code = NULL, ended_wall = NULL WHERE id = 2;
                 UPDATE runs SET status = 'error', failed_reason = 'SSH: lost' WHERE id = 3"
# Run ids: 1 and up (99999999999999999999 was read as 9223372036854775807, -5 looked up as is).
expect report-run-huge 2 "^rackchaos: run: '99999999999999999999' is not an integer from 1 to 9223372036854775807" "$rc" report 99999999999999999999 --db runs.db
expect compare-run-negative 2 "^rackchaos: run_a: '-5' is not an integer from 1 to 9223372036854775807" "$rc" compare -5 1 --db runs.db
expect init-racks-huge 2 "^rackchaos: --racks: '99999999999' is not an integer from 1 to 1000" "$rc" init --racks 99999999999 --dir init
expect report-running 3 "^rackchaos: run 2 has no verdict: it is still running, or its process died$" "$rc" report 2 --db runs.db
stdout report-running "^NO VERDICT: run 2 has no verdict"
expect report-error 3 "^rackchaos: run 3 ended in error \(SSH: lost\)" "$rc" report 3 --db runs.db --format markdown
stdout report-error "^> \*\*No verdict:\*\* run 3 ended in error"
expect report-running-html 3 "^rackchaos: run 2 has no verdict" "$rc" report 2 --db runs.db --format html
stdout report-running-html "<body>\$"
stdout report-running-html "^<p><strong>No verdict:</strong> run 2 has no verdict"
expect compare-running 2 "run 2 has no verdict: .*compare needs two finished runs" "$rc" compare 1 2 --db runs.db
expect compare-error 2 "run 3 ended in error .*compare needs two finished runs" "$rc" compare 3 1 --db runs.db
expect merge-running 0 "runs.db: 1 run\(s\) still 'running' .* left out" "$rc" report merge runs.db -o merged.db
[ "$(sqlite3 merged.db "select count(*) from runs where status = 'running'")" = 0 ] ||
  { echo "FAIL merge-running: a running run was copied"; failed=1; }
serial=$(sqlite3 runs.db "select coalesce(c.serial, t.serial_prefix || c.name) from topology_components c
                          join topologies t on t.id = c.topology_id where c.name = 'r01' limit 1")
"$rc" history --rack "$serial" --db runs.db >out.txt 2>err.txt || true
stdout history-running "NO VERDICT for run\(s\) 2 \(running\), 3 \(error\)"

# ---- Gates over nothing: no data fails unless the gate allows it; validate warns.
cat >empty.yaml <<'YAML'
name: gates-over-nothing
cluster: {model: gb200-nvl72, racks: 1}
workload: {jobs: [{name: j, gpus: 64}]}
duration: 2h
expect:
  - ttr.max < 30m
YAML
expect vacuous-warns 0 "^rackchaos: warning: .*empty.yaml:6:5: gate 'ttr.max < 30m' can only be empty: the plan has no faults and no chaos" "$rc" validate empty.yaml
got=0; "$rc" run empty.yaml --db empty.db >out.txt 2>err.txt || got=$?
[ "$got" = 1 ] || { echo "FAIL vacuous-fails: exit $got (expected 1)"; failed=1; }
stdout vacuous-fails "ttr.max < 30m: no data, no fault had an effect \(FAIL"
# qualify prints validation's warnings before it runs, as validate and run do
mkdir -p suite/1-only && cp empty.yaml suite/1-only/
"$rc" qualify suite --rack SIM-gb200-nvl72-r01 --db suite.db >out.txt 2>err.txt || true
grep -Eq "^rackchaos: warning: .*empty.yaml:6:5: gate 'ttr.max < 30m' can only be empty" err.txt ||
  { echo "FAIL qualify-warns: stderr: $(head -c 600 err.txt)"; failed=1; }
sed -i 's/  - ttr.max < 30m/  - {gate: ttr.max < 30m, allow_empty: true}/' empty.yaml
"$rc" run empty.yaml --db empty.db >out.txt 2>err.txt || { echo "FAIL vacuous-allowed: exit $?"; failed=1; }
stdout vacuous-allowed "ttr.max < 30m: no data, no fault had an effect \(pass: allow_empty\)"
exit $failed
