#!/usr/bin/env bash
# The report database under storage faults, through the rackchaos binary (issue 10):
#   storage_fault.sh MODE RACKCHAOS PLAN WORKDIR
# MODE corrupt   the --db file is junk bytes: `run` and `report` exit 3 naming the file and "not a database"
#      readonly  the database and its directory cannot be written: `run` exits 3, `report` still reads it
#      locked    another process holds BEGIN EXCLUSIVE (sqlite3 CLI): `run` exits 3 after the busy timeout
#      full      the database lives on a tmpfs too small for the run (needs root, for mount): `run` exits 3
#                with "disk is full" wherever the writes stop, no run is marked complete (it is 'error',
#                or 'running' where not even that fits), and once the filesystem grows the database opens,
#                still says the run never finished, and takes new runs
# Each case checks the exit code and that stderr is one clear line.
set -euo pipefail
mode=$1 rc=$2 plan=$3 work=$4/storage-$1
rm -rf "$work" && mkdir -p "$work" && cd "$work"

fail() { echo "FAIL ($mode): $*" >&2; exit 1; }
# expect CODE REGEX CMD...: runs CMD, checks its exit code and that its stderr is one line matching REGEX.
expect() {
  local code=$1 regex=$2 got=0; shift 2
  "$@" >out.txt 2>err.txt || got=$?
  [ "$got" = "$code" ] || fail "'$*' exited $got, expected $code; stderr: $(cat err.txt)"
  [ "$(wc -l <err.txt)" -le 1 ] || fail "'$*' printed more than one line on stderr: $(cat err.txt)"
  [ -z "$regex" ] || grep -Eq "$regex" err.txt || fail "'$*' stderr does not match '$regex': $(cat err.txt)"
}

case $mode in
  corrupt)
    head -c 4096 /dev/urandom >report.db
    expect 3 "report\.db.*file is not a database" "$rc" run "$plan" --db report.db
    expect 3 "report\.db.*file is not a database" "$rc" report --db report.db
    ;;
  readonly)
    expect 1 "" "$rc" run "$plan" --db report.db  # the plan's gate fails on purpose: a complete run, exit 1
    as_user=()
    if [ "$(id -u)" = 0 ]; then
      # root writes through file modes: run the checks as nobody, who owns neither the file nor the directory.
      as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
      chmod 755 . && chmod 644 report.db
    else
      chmod 555 . && chmod 444 report.db
      trap 'chmod 755 "$work"' EXIT
    fi
    expect 3 "report\.db.*readonly database" "${as_user[@]}" "$rc" run "$plan" --db report.db
    got=0
    "${as_user[@]}" "$rc" report --db report.db >out.txt || got=$?
    [ "$got" = 1 ] || fail "report on a read-only database exited $got, expected 1 (the run's verdict)"
    grep -q "Run 1: gate-fails" out.txt || fail "report on a read-only database lost run 1"
    grep -q "Run 2" out.txt && fail "the refused run left a row"
    ;;
  locked)
    expect 1 "" "$rc" run "$plan" --db report.db
    # The holder reads its commands from a FIFO: it waits for its own lock (.timeout) and keeps it until
    # the FIFO closes. No sleeping helper may hold ctest's output pipe open after the script ends.
    mkfifo hold
    sqlite3 report.db <hold >/dev/null 2>&1 &
    holder=$!
    exec 3>hold
    trap 'exec 3>&-; kill $holder 2>/dev/null || true' EXIT
    printf '.timeout 5000\nBEGIN EXCLUSIVE;\n' >&3
    for _ in $(seq 100); do
      if ! sqlite3 report.db 'BEGIN IMMEDIATE; ROLLBACK;' 2>/dev/null; then locked=1; break; fi
      sleep 0.1
    done
    [ "${locked:-0}" = 1 ] || fail "the helper never took the lock"
    expect 3 "report\.db.*database is locked" "$rc" run "$plan" --db report.db
    ;;
  full)
    [ "$(id -u)" = 0 ] || fail "needs root (mount -t tmpfs)"
    plan=$(dirname "$plan")/../../scenarios/chaos_week.yaml
    mkdir disk
    trap 'umount "$work/disk" 2>/dev/null || true' EXIT
    # Grow the filesystem 64 KiB at a time from too small for the schema until the run fits, so the writes
    # stop at every stage on the way (schema, run row, components, events, verdict).
    stages=""
    for kib in $(seq 128 64 4096); do
      mount -t tmpfs -o size=${kib}k,mode=755 tmpfs disk
      got=0
      "$rc" run "$plan" --db disk/disk.db >out.txt 2>err.txt || got=$?
      if [ "$got" = 0 ]; then umount disk; break; fi
      [ "$got" = 3 ] || fail "${kib}k: run exited $got, expected 3: $(cat err.txt)"
      [ "$(wc -l <err.txt)" = 1 ] && grep -q "disk\.db.*database or disk is full" err.txt ||
        fail "${kib}k: not one clear line: $(cat err.txt)"
      stages="$stages$(sed -E 's/.*I\/O error: ([a-z ]+).*/\1/' err.txt);"
      mount -o remount,size=64m disk
      got=0
      "$rc" report --db disk/disk.db --format json >report.json 2>err.txt || got=$?
      if grep -q "no runs" err.txt; then
        :  # A database whose first writes failed holds no run at all: not a complete run either.
      else
        # A run cut short is not complete: the verdict 'error' where that still fitted, else no verdict at
        # all ('running'), which `report` says. It renders the run and exits 3 either way.
        [ "$got" = 3 ] || fail "${kib}k: report of the cut run exited $got: $(cat err.txt)"
        status=$(python3 - report.json <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["run"]
print(run["status"] if (run["status"], run.get("exit_code")) in (("running", None), ("error", 3)) else "complete")
PY
)
        case $status in
          error) ;;
          running) grep -q "has no verdict" err.txt || fail "${kib}k: report does not say the run has no verdict: $(cat err.txt)" ;;
          *) fail "${kib}k: a run cut short by the full disk is marked complete" ;;
        esac
      fi
      expect 0 "" "$rc" run "$plan" --db disk/disk.db --seed 2  # the same database takes the next run
      umount disk
    done
    [ "$got" = 0 ] || fail "the run never fitted in 4 MiB"
    echo "stages where the disk filled: $stages"
    grep -q "appending events" <<<"$stages" || fail "no size stopped the writes among the events: $stages"
    ;;
  *) fail "unknown mode" ;;
esac
echo "ok: $mode"
