#!/bin/bash
# Runs a documentation walk-through as a test: every ```sh block of the Markdown file, in order, in one
# bash -e script, in an empty directory with the built rackchaos first on PATH; then checks that the
# combined output matches a regex (what the page says the reader will see).
#   walkthrough.sh DOC.md RACKCHAOS_DIR WORK_DIR REGEX
set -euo pipefail
doc=$1 bindir=$2 work=$3 regex=$4
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
awk '/^```sh$/ { on = 1; next } /^```/ { on = 0; next } on { print }' "$doc" >"$work/walkthrough.sh"
[[ -s $work/walkthrough.sh ]] || { echo "FAIL: no sh blocks in $doc"; exit 1; }
cd "$work"
out=$(PATH="$bindir:$PATH" bash -e walkthrough.sh 2>&1) || { echo "$out"; echo "FAIL: a command of $doc failed"; exit 1; }
echo "$out"
grep -Pzq -- "$regex" <<<"$out" || { echo "FAIL: output does not match: $regex"; exit 1; }
