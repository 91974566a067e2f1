#!/usr/bin/env bash
# `rackchaos replay --export` of an incident on a cluster with regions (issue 3): the exported plan keeps
# the regions, each job's region and input source, validates, and `rackchaos run` of it gives the report
# the replay stored (JSON, command line and wall-clock stamps masked).
#   replay_regions.sh RACKCHAOS SOURCE_DIR WORKDIR
set -euo pipefail
rc=$1 src=$2 work=$3/replay-regions
rm -rf "$work" && mkdir -p "$work" && cd "$work"
trap 'cd / && rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

inc=$src/scenarios/incidents/xid79-gpu-off-bus
"$rc" replay "$inc/kernel.log" "$inc/slurmctld.log" --gpu-map "$inc/gpu-map.txt" \
  --cluster "$src/scenarios/object_store_failure.yaml" --db replay.db --export exported.yaml >replay.txt
grep -q '^    - {name: "\?east"\?, racks: 2}' exported.yaml || fail "no region east in: $(cat exported.yaml)"
grep -q '^      region: "\?west"\?$' exported.yaml || fail "no job region west in: $(cat exported.yaml)"
[ "$(grep -c '^      input_from: object_store$' exported.yaml)" = 2 ] || fail "input_from lost: $(cat exported.yaml)"
"$rc" validate exported.yaml | grep -q "exported.yaml: ok: gb200-nvl72 x4" || fail "exported plan does not validate"
"$rc" run exported.yaml --db run.db >run.txt || true  # the replay's gates are the plan's: none
mask() { "$rc" report --db "$1" --format json | grep -v '"command_line"' | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?/WALL/g'; }
diff <(mask replay.db) <(mask run.db) >report.diff || fail "the run of the exported plan differs: $(head -20 report.diff)"
echo "ok: exported plan with regions validates and replays to the same report"
