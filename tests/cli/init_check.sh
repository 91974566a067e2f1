#!/bin/bash
# `rackchaos init` as a user runs it, for every catalogue model: what it writes validates, runs on the
# simulator with every gate passing (exit 0), and its site inventory validates once the plan names it;
# it refuses to overwrite and refuses an unknown model.   init_check.sh RACKCHAOS WORK_DIR
set -uo pipefail
rc=$1 work=$2/init-check
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
models=$("$rc" list models | cut -d' ' -f1)
[[ -n $models ]] || fail "no models listed"
for m in $models; do
  dir=$work/$m
  "$rc" init --model "$m" --racks 2 --dir "$dir" >/dev/null || fail "init --model $m"
  (cd "$dir" && "$rc" validate plan.yaml >/dev/null) || fail "$m: validate plan.yaml"
  (cd "$dir" && "$rc" run plan.yaml --db run.db -q) || fail "$m: run plan.yaml exit $?"
  sed -i 's/^  # inventory: site.yaml /  inventory: site.yaml   /' "$dir/plan.yaml"
  grep -q '^  inventory: site.yaml' "$dir/plan.yaml" || fail "$m: no inventory line to uncomment"
  out=$(cd "$dir" && "$rc" validate plan.yaml) || fail "$m: validate with site.yaml"
  grep -q "site inventory site.yaml" <<<"$out" || fail "$m: validate did not use site.yaml: $out"
  echo "$m: ok"
done
"$rc" init --dir "$work/gb200-nvl72" 2>"$work/err" && fail "init overwrote plan.yaml"
grep -q "plan.yaml already exists; remove it or choose another --dir" "$work/err" || fail "overwrite message: $(cat "$work/err")"
"$rc" init --model nvl999 --dir "$work/x" 2>"$work/err"; [[ $? == 2 ]] || fail "unknown model: exit not 2"
grep -q "unknown rack model 'nvl999'; known models: gb200-nvl36x2" "$work/err" || fail "unknown model message"
"$rc" init --model gb200-nvl36x2 --dir "$work/odd" 2>"$work/err"; [[ $? == 2 ]] || fail "nvl36x2 on one rack: exit not 2"
grep -q "init: --racks 1 splits an NVLink domain: a gb200-nvl36x2 domain spans 2 racks (e.g. --racks 2)" "$work/err" ||
  fail "nvl36x2 on one rack: $(cat "$work/err")"
echo "init check passed"
