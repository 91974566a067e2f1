#!/usr/bin/env bash
# scripts/run-tests in a developer's build directory puts the developer's RACKCHAOS_WERROR and
# RACKCHAOS_UNITY back when it ends, here early: the stand-in cmake fails the sanitizer build, so run-tests exits 1 after its test
# stages. cmake, ctest and sudo are stand-ins that log their arguments; nothing is built or run.
# Usage: run_tests_unity_test.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
cat > "$work/bin/cmake" <<'EOF'
#!/bin/sh
echo "cmake $*" >> "$STUB_LOG"
case "$*" in *build-asan*) exit 1 ;; esac
EOF
printf '#!/bin/sh\necho "ctest $*" >> "$STUB_LOG"\n' > "$work/bin/ctest"
printf '#!/bin/sh\nexec "$@"\n' > "$work/bin/sudo"
chmod +x "$work/bin/cmake" "$work/bin/ctest" "$work/bin/sudo"

fail() { echo "FAIL: $*"; echo "--- calls:"; cat "$work/log"; echo "--- output:"; cat "$work/out"; exit 1; }

# $@: the option lines of the developer's CMakeCache.txt; none for a new build directory.
run() {
  : > "$work/log"
  rm -rf "$work/dev" && mkdir -p "$work/dev"
  if [ $# -gt 0 ]; then printf '%s\n' "$@" > "$work/dev/CMakeCache.txt"; fi
  local rc=0
  (cd "$src" && PATH="$work/bin:$PATH" STUB_LOG="$work/log" BUILD="$work/dev" JOBS=1 scripts/run-tests) \
    > "$work/out" 2>&1 || rc=$?
  [ "$rc" = 1 ] || fail "run-tests exited $rc; expected 1 (the stand-in sanitizer build fails)"
  grep -q -- "-B $work/dev -DRACKCHAOS_WERROR=ON -DRACKCHAOS_UNITY=ON" "$work/log" || fail "no unity configure"
}

run "RACKCHAOS_UNITY:BOOL=OFF"
last=$(grep -- "-B $work/dev" "$work/log" | tail -n 1)
[ "$last" = "cmake -S . -B $work/dev -DRACKCHAOS_UNITY=OFF" ] || fail "OFF not restored; last configure: $last"

run "RACKCHAOS_WERROR:BOOL=OFF" "RACKCHAOS_UNITY:BOOL=OFF"
last=$(grep -- "-B $work/dev" "$work/log" | tail -n 1)
[ "$last" = "cmake -S . -B $work/dev -DRACKCHAOS_WERROR=OFF -DRACKCHAOS_UNITY=OFF" ] ||
  fail "WERROR and UNITY not both restored; last configure: $last"

run "RACKCHAOS_WERROR:BOOL=OFF" "RACKCHAOS_UNITY:BOOL=ON"
last=$(grep -- "-B $work/dev" "$work/log" | tail -n 1)
[ "$last" = "cmake -S . -B $work/dev -DRACKCHAOS_WERROR=OFF" ] || fail "WERROR=OFF not restored; last configure: $last"

run "RACKCHAOS_WERROR:BOOL=ON" "RACKCHAOS_UNITY:BOOL=ON"
! grep -q -- "=OFF" "$work/log" || fail "an ON cache was set OFF"

run
! grep -q -- "=OFF" "$work/log" || fail "a new build directory was set OFF"
echo "ok: run-tests restores RACKCHAOS_WERROR and RACKCHAOS_UNITY set OFF, leaves ON and new build directories alone"
