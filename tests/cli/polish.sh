#!/usr/bin/env bash
# The rackchaos binary as a user meets it (issue 27, CLI polish):  polish.sh MODE RACKCHAOS SOURCE_DIR WORKDIR
# MODE progress-file  --progress into a file: never a carriage return or an escape code, no ETA for a short run
#      progress-tty   on a terminal (a pty from `script`): a short run leaves no progress line before the summary
#      escape         a plan name with terminal escapes is printed escaped by run, report and history
#      report-exit    `report` exits with the run's verdict, and says what it wrote with -o
#      list-columns   `list ...`: every description starts in the same column, long names included
#      sigint         SIGINT during a large run: a message at once, faults reverted, the report written, exit 4 soon
set -euo pipefail
mode=$1 rc=$2 src=$3 work=$4/polish-$1
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL ($mode): $*" >&2; exit 1; }
plan=$src/tests/cli/gate_fails.yaml  # 1 h simulated, a gate that fails: exit 1

case $mode in
  progress-file)
    got=0
    "$rc" run "$plan" --db p.db --progress >out.txt 2>err.txt || got=$?
    [ "$got" = 1 ] || fail "run exited $got, expected 1"
    if grep -q $'\r' err.txt; then fail "a carriage return went into the file: $(cat -A err.txt | head -3)"; fi
    if grep -q $'\x1b' err.txt; then fail "an escape code went into the file: $(cat -A err.txt | head -3)"; fi
    if grep -q "ETA" err.txt; then fail "an ETA for a run that took a fraction of a second: $(cat -A err.txt | head -3)"; fi
    ;;
  progress-tty)
    # `script` gives the run a terminal; its output, progress line included, lands in out.txt.
    script -qec "'$rc' run '$plan' --db p.db" /dev/null >out.txt 2>&1 || true
    grep -q "Run 1: gate-fails" out.txt || fail "no summary: $(cat -A out.txt | head -5)"
    if grep -q "run: .* simulated" out.txt; then fail "a progress line is left on the screen: $(grep -a 'simulated' out.txt | cat -A)"; fi
    if grep -q $'\x1b' out.txt; then fail "escape codes on the terminal: $(grep -a $'\x1b' out.txt | cat -A | head -3)"; fi
    ;;
  escape)
    sed -e 's/^name: .*/name: "evil\\e[2J\\e]0;owned\\a plan"/' "$plan" >evil.yaml
    got=0
    "$rc" run evil.yaml --db e.db >run.txt 2>&1 || got=$?
    [ "$got" = 1 ] || fail "run exited $got: $(cat run.txt)"
    "$rc" report --db e.db >report.txt 2>&1 || true
    "$rc" history --rack SIM-gb200-nvl72-r01 --db e.db >history.txt 2>&1 || true
    for f in run.txt report.txt history.txt; do
      if grep -q $'\x1b\|\x07' "$f"; then fail "$f holds raw control characters: $(grep -a 'evil' "$f" | cat -A)"; fi
      grep -qF 'evil\x1b[2J\x1b]0;owned\x07 plan' "$f" || fail "$f does not show the name escaped: $(grep -a evil "$f" | cat -A)"
    done
    ;;
  report-exit)
    got=0
    "$rc" run "$plan" --db r.db -q || got=$?
    [ "$got" = 1 ] || fail "run exited $got, expected 1"
    got=0
    "$rc" report --db r.db >out.txt 2>err.txt || got=$?
    [ "$got" = 1 ] || fail "report of a failed run exited $got, expected 1 (the run's verdict)"
    got=0
    "$rc" report --db r.db -f html -o r.html >out.txt 2>err.txt || got=$?
    [ "$got" = 1 ] || fail "report -o of a failed run exited $got, expected 1"
    size=$(stat -c %s r.html)
    grep -qx "wrote r.html (html report of run 1, $size bytes)" out.txt || fail "report -o said: $(cat out.txt err.txt)"
    "$rc" report --db r.db -f html -o r2.html -q >out.txt 2>&1 || true
    [ ! -s out.txt ] || fail "report -o -q printed: $(cat out.txt)"
    "$rc" report --help | grep -q "Exit codes of report: the run's verdict" || fail "report --help does not document its exit codes"
    # A run whose process died has no verdict: exit 3, said on stderr.
    sqlite3 r.db "UPDATE runs SET status = 'running', exit_code = NULL, ended_wall = NULL WHERE id = 1"
    got=0
    "$rc" report --db r.db >out.txt 2>err.txt || got=$?
    [ "$got" = 3 ] || fail "report of a run with no verdict exited $got, expected 3"
    grep -q "run 1 has no verdict: it is still running, or its process died" err.txt || fail "stderr: $(cat err.txt)"
    ;;
  list-columns)
    for what in models injectors detectors policies metrics; do
      "$rc" list "$what" >out.txt
      # The column where each description starts: after the name and the blanks that follow it.
      cols=$(awk '{ match($0, /^[^ ]+ +/); print RLENGTH }' out.txt | sort -u)
      [ "$(wc -l <<<"$cols")" = 1 ] || fail "list $what: descriptions start in columns $(tr '\n' ' ' <<<"$cols"): $(cat out.txt)"
    done
    ;;
  sigint)
    big=$src/bench/reports/month-40k.yaml  # about 40,000 faults over 30 days: a few seconds of simulation
    "$rc" run "$big" --db s.db >out.txt 2>err.txt &
    pid=$!
    # Once events are in the database the stop handlers are installed: interrupt then.
    for _ in $(seq 300); do
      n=$(sqlite3 s.db "SELECT count(*) FROM faults" 2>/dev/null || echo 0)
      [ "${n:-0}" -gt 0 ] && break
      kill -0 $pid 2>/dev/null || fail "the run ended before it could be interrupted: $(cat err.txt)"
      sleep 0.1
    done
    start=$(date +%s.%N)
    kill -INT $pid
    got=0
    wait $pid || got=$?
    took=$(echo "$(date +%s.%N) - $start" | bc)
    [ "$got" = 4 ] || fail "interrupted run exited $got, expected 4: $(cat err.txt)"
    grep -Eq "^rackchaos: stopping: reverting [0-9]+ fault\(s\), writing the report$" err.txt ||
      fail "no message on SIGINT: $(cat err.txt)"
    grep -q "status   interrupted (exit 4)" out.txt || fail "no summary of the interrupted run"
    [ "$(sqlite3 s.db "SELECT count(*) FROM faults WHERE reverted_us IS NULL")" = 0 ] || fail "faults left open"
    echo "stopped ${took} s after SIGINT"
    (( $(echo "$took < 5" | bc) )) || fail "took ${took} s to stop after SIGINT"
    ;;
  *) fail "unknown mode" ;;
esac
echo "ok: $mode"
