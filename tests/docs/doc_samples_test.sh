#!/bin/bash
# scripts/doc-samples itself: --check fails on a stale sample (naming FILE:LINE, the command and the diff),
# on a wrong exit code and on a bare block with no marker; without --check it rewrites the stale block,
# masks the wall-clock stamps and host of a run's header, and leaves skipped and tagged blocks alone.
#   doc_samples_test.sh REPO RACKCHAOS WORK_DIR
set -euo pipefail
repo=$1 rackchaos=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
script=$repo/scripts/doc-samples
fail() { echo "FAIL: $*"; exit 1; }

cat >"$work/stale.md" <<'EOF'
# A page

<!-- doc-sample exit=2: cd tests/cli/plans; rackchaos validate parsecs.yaml -->
```
rackchaos: parsecs.yaml:40:10: for: '5 parsecs' is not a duration
```

<!-- doc-sample: skip, not output -->
```
left alone
```

```yaml
also: left alone
```

<!-- doc-sample: $ rackchaos run scenarios/quickstart.yaml --seed 42 -->
```
```
EOF
cp "$work/stale.md" "$work/before.md"

out=$(python3 "$script" --check "$rackchaos" "$work/stale.md" 2>&1) && fail "--check passed a stale page: $out"
echo "$out"
grep -q "stale.md:3: stale sample of \`cd tests/cli/plans; rackchaos validate parsecs.yaml\`" <<<"$out" || fail "no FILE:LINE and command"
grep -q "^    -rackchaos: parsecs.yaml:40:10: for: '5 parsecs' is not a duration" <<<"$out" || fail "no diff"
grep -q "^    +rackchaos: parsecs.yaml:40:10: for: '5 parsecs' has no unit" <<<"$out" || fail "no diff"
grep -q "2 of 2 sample(s) stale" <<<"$out" || fail "no count"
cmp -s "$work/stale.md" "$work/before.md" || fail "--check wrote the file"

python3 "$script" "$rackchaos" "$work/stale.md"
python3 "$script" --check "$rackchaos" "$work/stale.md" || fail "still stale after rewriting"
grep -q "^rackchaos: parsecs.yaml:40:10: for: '5 parsecs' has no unit" "$work/stale.md" || fail "not rewritten"
grep -q '^\$ rackchaos run scenarios/quickstart.yaml --seed 42$' "$work/stale.md" || fail "no \$ line"
grep -q '^  started  YYYY-MM-DDThh:mm:ssZ   ended YYYY-MM-DDThh:mm:ssZ   host HOST$' "$work/stale.md" || fail "stamps or host not masked"
grep -q '^Run 1 stored in rackchaos.db (seed 42; replay with --seed 42)$' "$work/stale.md" || fail "not run in a fresh directory"
grep -q '^left alone$' "$work/stale.md" && grep -q '^also: left alone$' "$work/stale.md" || fail "touched a skipped block"

# A marker whose exit code is not the command's, and a bare block with no marker, are errors.
printf '<!-- doc-sample: rackchaos validate nope.yaml -->\n```\n```\n\n```\nbare\n```\n' >"$work/bad.md"
out=$(python3 "$script" --check "$rackchaos" "$work/bad.md" 2>&1) && fail "--check passed bad.md: $out"
echo "$out"
grep -q "bad.md:1: \`rackchaos validate nope.yaml\` exited 2, the marker says 0" <<<"$out" || fail "exit code not checked"
grep -q "bad.md:5: a bare \`\`\` block with no" <<<"$out" || fail "bare block not refused"
echo "PASS"
