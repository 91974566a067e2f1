#!/usr/bin/env bash
# Sweeps stream (issue 26): memory stays flat whatever --seeds says, each run is stored and tagged as it
# finishes, and a signal stops the sweep at once with every run kept.
#   sweep_stop.sh MODE RACKCHAOS PLAN WORKDIR
# MODE term  a sweep of 10^9 seeds, SIGTERM once 20 runs are stored: exit 4 within 10 s, one line on
#            stderr naming the runs stored, and exactly those runs in the file, each tagged, none 'running'
#      int   the same with SIGINT, on a sweep of 2,000 seeds
#      kill  a sweep of 2,000 seeds, SIGKILL once 20 runs are stored: every finished run is tagged but for at
#            most the two the workers were tagging (tags are written as runs finish, not at the end)
# In every mode the sweep's peak resident memory (VmHWM) stays under 150 MiB. The sweep runs under a 2 GiB
# address-space limit, so a sweep that grows fails here without taking the machine's memory.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mode=$1 rc=$2 plan=$3 work=$4/sweep-stop-$1
rm -rf "$work" && mkdir -p "$work" && cd "$work"

fail() { echo "FAIL (sweep-stop $mode): $*" >&2; exit 1; }
pid=
cleanup() { if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi; }
trap cleanup EXIT
count() { sqlite3 -cmd '.timeout 5000' sweep.db "$1" 2>/dev/null || echo 0; }

# Under AddressSanitizer (the asan stage runs this too) the address space cannot be limited (ASan reserves
# terabytes of shadow) and its quarantine holds freed memory: the bounds are the plain build's to check.
vlimit=2097152 rss_limit=153600
if under_asan "$rc"; then vlimit=unlimited rss_limit=1048576; fi
seeds=2000
[[ $mode == term ]] && seeds=1000000000
(ulimit -v $vlimit; exec "$rc" sweep "$plan" --seeds $seeds --threads 2 --db sweep.db -q) >out.txt 2>err.txt &
pid=$!
# Wait (at most 30 s) for 20 finished runs in the file, watching the peak resident memory all along.
stored=0 hwm_kb=0
for _ in $(seq 300); do
  kill -0 "$pid" 2>/dev/null || fail "the sweep exited early: $(cat err.txt)"
  hwm_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
  ((hwm_kb < rss_limit)) || fail "peak resident memory ${hwm_kb} KiB with $stored run(s) stored (limit $((rss_limit / 1024)) MiB): memory grows with --seeds"
  stored=$(count "SELECT count(*) FROM runs WHERE status != 'running'")
  ((stored >= 20)) && break
  sleep 0.1
done
((stored >= 20)) || fail "only $stored run(s) stored after 30 s: runs are not stored as they finish"

case $mode in
  term | int)
    kill "-${mode^^}" "$pid"
    code=0
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && fail "still running 10 s after SIG${mode^^}"
    wait "$pid" || code=$?
    pid=
    [[ $code == 4 ]] || fail "exit $code after SIG${mode^^}, expected 4 (interrupted); stderr: $(cat err.txt)"
    [[ $(wc -l <err.txt) == 1 ]] || fail "stderr is not one line: $(cat err.txt)"
    said=$(sed -nE 's/.*interrupted: ([0-9]+) run\(s\) stored and tagged.*/\1/p' err.txt)
    [[ -n $said ]] || fail "stderr does not say how many runs are stored: $(cat err.txt)"
    runs=$(count "SELECT count(*) FROM runs")
    tagged=$(count "SELECT count(*) FROM sweep_runs")
    running=$(count "SELECT count(*) FROM runs WHERE status = 'running'")
    [[ $said == "$runs" && $runs == "$tagged" ]] || fail "said $said run(s) stored; the file has $runs run(s), $tagged tagged"
    [[ $running == 0 ]] || fail "$running run(s) left 'running'"
    ;;
  kill)
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
    finished=$(count "SELECT count(*) FROM runs WHERE status != 'running'")
    untagged=$(count "SELECT count(*) FROM runs WHERE status != 'running' AND id NOT IN (SELECT run_id FROM sweep_runs)")
    ((untagged <= 2)) || fail "$untagged of $finished finished run(s) untagged after SIGKILL: tags are not written as runs finish"
    ;;
  *) fail "unknown mode" ;;
esac
[[ $(count "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'") == 0 ]] || fail "integrity_check"
echo "sweep-stop $mode: ok ($stored+ runs stored, peak ${hwm_kb} KiB when stopped)"
