#!/bin/bash
# The Debian package and `cmake --install` as a user gets them: builds the .deb with CPack, unpacks it,
# installs with DESTDIR and with --prefix, and runs each installed binary from an unrelated directory on a
# shipped scenario (its data is embedded), checking completions, man page and docs landed in their places.
#   package_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1 work=$2/package-test
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# Runs an installed tree rooted at $1 (with the prefix $2 inside it) from an empty directory.
check_tree() {
  local root=$1 prefix=$2 bin=$1$2/bin/rackchaos share=$1$2/share
  [[ -x $bin ]] || fail "no binary at $bin"
  for f in bash-completion/completions/rackchaos zsh/vendor-completions/_rackchaos man/man1/rackchaos.1 \
           doc/rackchaos/README.md doc/rackchaos/getting-started.md doc/rackchaos/plan-reference.md \
           rackchaos/catalogue/gb200-nvl72.yaml rackchaos/policies/default.yaml rackchaos/scenarios/quickstart.yaml; do
    [[ -s $share/$f ]] || fail "$share/$f missing"
  done
  mkdir -p "$work/cwd" && cd "$work/cwd"
  "$bin" run "$share/rackchaos/scenarios/quickstart.yaml" --db "$work/q.db" -q || fail "$bin run quickstart: exit $?"
  grep -q "Faults (4)" <<<"$("$bin" report --db "$work/q.db")" || fail "$bin report: no 4-fault summary"
  grep -q "model: gb300-nvl72" <<<"$("$bin" explain gb300-nvl72)" || fail "$bin explain: no embedded catalogue"
  "$bin" run "$share/rackchaos/scenarios/quickstart.yaml" --healer "$share/rackchaos/policies/aggressive.yaml" \
    --db "$work/q.db" -q || fail "$bin run with the installed policy file: exit $?"
  bash -c "source '$share/bash-completion/completions/rackchaos'; COMP_WORDS=(rackchaos expl); COMP_CWORD=1;
           _rackchaos; [[ \${COMPREPLY[*]} == explain ]]" || fail "bash completion of 'expl'"
  grep -q "rackchaos explain" <<<"$(man -l "$share/man/man1/rackchaos.1" 2>/dev/null)" || fail "man page lacks explain"
  cd "$work"
  rm -f "$work/q.db"*
}

# 1. The .deb, unpacked (installing it would need root and touch the system).
cpack --config "$build/CPackConfig.cmake" -B "$work/deb" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/deb/rackchaos_*.deb)
info=$(dpkg-deb --info "$deb")
grep -q "Depends: .*libyaml-cpp" <<<"$info" || fail "package lacks library dependencies: $info"
dpkg-deb -x "$deb" "$work/debroot"
check_tree "$work/debroot" /usr

# 2. cmake --install with DESTDIR, and 3. with --prefix.
DESTDIR="$work/destdir" cmake --install "$build" --prefix /opt/rackchaos >/dev/null
check_tree "$work/destdir" /opt/rackchaos
cmake --install "$build" --prefix "$work/prefix" >/dev/null
check_tree "" "$work/prefix"
echo "package test passed: $(basename "$deb")"
