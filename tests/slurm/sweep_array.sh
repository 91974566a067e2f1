#!/bin/bash
# A sweep sharded over a real Slurm controller: starts its own munged, slurmctld and slurmd (state, ports
# and sockets of its own, so it never meets another Slurm on the machine), submits `sbatch --array=0-3`
# where task K runs `rackchaos sweep --shard K+1/4`, merges the shards with `rackchaos report merge`, and
# checks the aggregates equal an unsharded sweep's. Everything it started is stopped and removed on exit,
# pass or fail. Needs root (slurmd) and Debian's slurm-wlm + munge; exit 77 (skipped) without them.
# Usage: sweep_array.sh RACKCHAOS PLAN
set -euo pipefail
RC=$(realpath "$1")
PLAN=$(realpath "$2")
SEEDS=8
GRID=(--grid healer=default,aggressive)
CTLD_PORT=17217   # the tests/rig Slurm keeps the defaults; these stay clear of it
SLURMD_PORT=17218

if [[ $(id -u) != 0 ]]; then echo "skipped: needs root (slurmd)"; exit 77; fi
for bin in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$bin" >/dev/null || { echo "skipped: $bin not installed (scripts/install-deps)"; exit 77; }
done

W=$(mktemp -d /tmp/rackchaos-slurm.XXXXXX)
chmod 755 "$W"
PIDS=()
cleanup() {
  local rc=$?
  if ((rc != 0)); then
    for log in "$W"/*.log "$W"/out.*; do [[ -f $log ]] && { echo "== $log"; tail -n 20 "$log"; }; done
  fi
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$W"
  exit "$rc"
}
trap cleanup EXIT
trap "exit 1" INT TERM

# munge: its own key and socket.
mkdir -m 700 "$W/munge"
head -c 1024 /dev/urandom >"$W/munge/munge.key"
chmod 400 "$W/munge/munge.key"
munged -F --force --socket="$W/munge/munge.sock" --key-file="$W/munge/munge.key" --pid-file="$W/munge/munged.pid" \
  --log-file="$W/munged.log" --seed-file="$W/munge/seed" &
PIDS+=($!)

HOST=$(hostname -s)
mkdir -p "$W/ctld" "$W/slurmd"
cat >"$W/slurm.conf" <<CONF
ClusterName=rcsweep
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$W/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$W/ctld
SlurmdSpoolDir=$W/slurmd
SlurmctldPidFile=$W/ctld/slurmctld.pid
SlurmdPidFile=$W/slurmd/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=rcsweep1 NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=sweep Nodes=rcsweep1 Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$W/slurm.conf"
for _ in $(seq 50); do [[ -S $W/munge/munge.sock ]] && break; sleep 0.1; done

slurmctld -D -i -f "$SLURM_CONF" &
PIDS+=($!)
slurmd -D -N rcsweep1 -f "$SLURM_CONF" &
PIDS+=($!)
for i in $(seq 100); do
  state=$(sinfo -h -n rcsweep1 -o %T 2>/dev/null || true)
  [[ $state == idle ]] && break
  ((i == 100)) && { echo "slurmd never became idle (state '$state')"; exit 1; }
  sleep 0.2
done

# The array: task K runs shard K+1 of 4 into its own database.
cat >"$W/shard.sh" <<JOB
#!/bin/bash
K=\$((SLURM_ARRAY_TASK_ID + 1))
exec "$RC" sweep "$PLAN" --seeds $SEEDS ${GRID[*]} --shard \$K/4 --db "$W/shard\$K.db" -q
JOB
chmod 755 "$W/shard.sh"
job=$(sbatch --parsable --array=0-3 --chdir="$W" --output="$W/out.%a" "$W/shard.sh")
echo "submitted array job $job"
for i in $(seq 600); do
  left=$(squeue -h -j "$job" 2>/dev/null | wc -l)
  ((left == 0)) && break
  ((i == 600)) && { echo "array job $job still has $left task(s) after 120 s"; exit 1; }
  sleep 0.2
done
for k in 1 2 3 4; do
  [[ -f $W/shard$k.db ]] || { echo "shard $k wrote no database"; exit 1; }
done

# Merge, and compare with the same sweep unsharded.
"$RC" report merge "$W"/shard{1,2,3,4}.db -o "$W/merged.db" >/dev/null
"$RC" sweep "$PLAN" --seeds $SEEDS "${GRID[@]}" --db "$W/full.db" -q
merged=$("$RC" report sweep --db "$W/merged.db")
full=$("$RC" report sweep --db "$W/full.db")
if [[ $merged != "$full" ]]; then
  echo "aggregates differ"; echo "unsharded:"; echo "$full"; echo "merged shards:"; echo "$merged"; exit 1
fi
runs=$((SEEDS * 2))
[[ $full == *"$runs run(s)"* ]] || { echo "expected $runs runs:"; echo "$full"; exit 1; }
echo "$full"
echo "4 Slurm array tasks, merged: same aggregates as the unsharded sweep"
