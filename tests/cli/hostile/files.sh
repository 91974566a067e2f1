#!/usr/bin/env bash
# Hostile files (issue 26) named where rackchaos reads a user file: as a plan, a plan in a qualification
# suite's stage, a site inventory (from a plan), a healer policy (--healer), a GPU map (replay --gpu-map),
# an incident log (replay, also '-' fed from /dev/zero), replay's --cluster, and a report database or fault
# ledger wherever one is named (run, report, compare, report merge, history, serve, recover). Each must exit 2 (3 for a regular file that is not a
# database: a corrupt database's code) with exactly one line on stderr, within 20 s and 512 MiB, and never
# quote the file's content; each case prints its wall time and peak RSS.
#   files.sh RACKCHAOS REPO WORKDIR [ROLE...]     (ROLE: see `roles` below; default all)
# The kinds of file: a directory, /dev/zero, a FIFO nobody writes, a socket, a file over the role's size
# cap (sparse; databases and ledgers have no cap), a binary file, a system-like file that is not YAML
# (a shadow-style password line), a secret token alone on its line (an API token file), and a name longer
# than the system takes (ENAMETOOLONG).
set -uo pipefail
rc=$1 repo=$2 work=$3/hostile-files
shift 3
roles=("$@")
[ ${#roles[@]} -gt 0 ] || roles=(plan suite-plan inventory policy gpu-map log cluster db-run db-report db-compare
                                 db-merge db-history db-serve ledger)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
qs=$repo/scenarios/quickstart.yaml
log=$repo/scenarios/incidents/nic-flap/journal.log

mkdir adir
mkfifo fifo
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock
# Every byte value, NUL first: what an executable or a compressed file starts with.
for i in $(seq 0 255); do printf "\\$(printf %03o "$i")"; done >binary
for i in 1 2 3 4; do cat binary; done >binary4
mv binary4 binary
# A password file: the secret must never reach the terminal or a CI log.
printf 'root:$6$SECRETSALT$SECRETHASHSECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n' >shadow
# A token file: one plain word, which a message quoting "the offending token" would print whole.
printf 'SECRETTOKEN_0123456789abcdefABCDEF\n' >token
# A name of 5000 bytes: stat() fails with ENAMETOOLONG, not ENOENT.
long=$work/$(printf 'a%.0s' $(seq 5000))

# The size cap of each role, from its documentation; the over-size file is one byte more (sparse).
declare -A cap=([plan]=$((16 << 20)) [suite-plan]=$((16 << 20)) [inventory]=$((4 << 20)) [policy]=$((1 << 20)) [gpu-map]=$((16 << 20))
                [log]=$((16 << 30)) [cluster]=$((16 << 20)))

failed=0
# run ROLE FILE: runs rackchaos with FILE in ROLE; leaves the exit code in $got.
run() {
  local role=$1 file=$2
  case $role in
    plan) set -- validate "$file" ;;
    suite-plan)
      rm -rf suite && mkdir -p suite/1-tray && ln -s "$file" suite/1-tray/plan.yaml
      set -- qualify suite --rack SIM-gb200-nvl72-r01 --db qualify.db ;;
    inventory)
      printf 'name: hostile-file\ncluster: {model: gb200-nvl72, racks: 1, inventory: "%s"}\n' "$file" >inv-plan.yaml
      set -- validate inv-plan.yaml ;;
    policy) set -- run "$qs" --healer "$file" --dry-run ;;
    gpu-map) set -- replay "$log" --cluster "$qs" --gpu-map "$file" --db replay.db ;;
    log) set -- replay "$file" --cluster "$qs" --db replay.db ;;
    cluster) set -- replay "$log" --cluster "$file" --db replay.db ;;
    db-run) set -- run "$qs" --db "$file" ;;
    db-report) set -- report --db "$file" ;;
    db-compare) set -- compare 1 1 --db "$file" ;;
    db-merge) set -- report merge "$file" -o merged.db ;;
    db-history) set -- history --rack SIM-gb200-nvl72-r01 --db "$file" ;;
    # Accepted, it would serve until the timeout: exit 124.
    db-serve) set -- serve --db "$file" --listen 127.0.0.1:0 --quiet ;;
    ledger) set -- recover --list --ledger "$file" --db recover.db ;;
  esac
  got=0
  rm -f merged.db recover.db replay.db qualify.db
  /usr/bin/time -f '%e %M' -o usage.txt timeout 20 "$rc" "$@" <"$stdin" >out.txt 2>err.txt || got=$?
}
stdin=/dev/null

# What the one line must say for each kind of file.
declare -A says=([directory]='is a directory' [dev-zero]='is a character device' [fifo]='is a FIFO'
                 [socket]='is a socket' [over-size]='[0-9]+ [KMG]iB' [binary]='is not text'
                 [system-file]='.' [token]='.' [long-name]='File name too long' [stdin-zero]='is not text')

# check ROLE KIND FILE: exit 2, one stderr line that says what is wrong and quotes none of the file's
# content, in time and memory.
check() {
  local role=$1 kind=$2 file=$3
  run "$role" "$file"
  local want=${says[$kind]} code=2 rss secs lines why=""
  # SQLite reads databases: a regular file that is not one is "not a database", whatever bytes it holds,
  # and exits 3 as a corrupt database does (storage_fault.sh); a file of the wrong kind is bad input.
  case $role:$kind in db-*:binary | db-*:system-file | db-*:token | ledger:binary | ledger:system-file | ledger:token)
    want='not a database' code=3 ;;
  esac
  # qualify's own refusal of a suite without plans also says "is a directory": name the plan.
  [ "$role:$kind" = suite-plan:directory ] && want='plan.yaml: is a directory'
  read -r secs rss < <(tail -1 usage.txt 2>/dev/null)
  lines=$(wc -l <err.txt)
  [ "$got" = "$code" ] || why="exit $got (expected $code)"
  [ -n "$why" ] || [ "$lines" = 1 ] || why="$lines lines on stderr (expected 1)"
  [ -n "$why" ] || ! grep -q 'SECRET\|root:' err.txt || why="the file's content is quoted"
  [ -n "$why" ] || grep -Eq "$want" err.txt || why="the message does not say '$want'"
  [ -n "$why" ] || [ "${rss:-0}" -lt 524288 ] || why="peak RSS ${rss} KiB (limit 512 MiB)"
  if [ -n "$why" ]; then
    echo "FAIL $role/$kind: $why; stderr: $(head -c 400 err.txt)"
    failed=1
  else
    echo "ok   $role/$kind (${secs} s, ${rss} KiB): $(head -c 300 err.txt)"
  fi
}

for role in "${roles[@]}"; do
  check "$role" directory "$work/adir"
  check "$role" dev-zero /dev/zero
  check "$role" fifo "$work/fifo"
  check "$role" socket "$work/sock"
  # (A symbolic link cannot point at so long a name: the suite's plan is a link.)
  [ "$role" = suite-plan ] || check "$role" long-name "$long"
  if [ -n "${cap[$role]:-}" ]; then
    truncate -s $((cap[$role] + 1)) "huge.$role"
    check "$role" over-size "$work/huge.$role"
    rm -f "huge.$role"
  fi
  # serve takes a database that is not one yet and answers its pages with why (tests/serve).
  [ "$role" = db-serve ] && continue
  check "$role" binary "$work/binary"
  check "$role" system-file "$work/shadow"
  check "$role" token "$work/token"
  # Standard input, where '-' is documented, is read as a stream: an endless one is refused at once.
  if [ "$role" = log ]; then
    stdin=/dev/zero
    check log stdin-zero -
    stdin=/dev/null
  fi
done
exit $failed
