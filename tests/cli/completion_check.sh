#!/bin/bash
# The bash completion generated from `rackchaos --help` (cmake/cli_docs.sh, as the build runs it) completes
# subcommands, their options and the names rackchaos lists; the zsh file names every subcommand; the man
# page renders without warnings.   completion_check.sh RACKCHAOS_DIR SOURCE_DIR WORK_DIR
set -uo pipefail
bindir=$1 docs=$3/cli-docs-check
export PATH=$bindir:$PATH
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$docs"
trap 'rm -rf "$docs"' EXIT
bash "$2/cmake/cli_docs.sh" "$bindir/rackchaos" "$docs" test || fail "cmake/cli_docs.sh"
# shellcheck disable=SC1091
source "$docs/rackchaos.bash" || fail "sourcing $docs/rackchaos.bash"
complete_words() {  # the words typed so far, the last one being completed
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _rackchaos; echo "${COMPREPLY[*]}"
}
[[ $(complete_words rackchaos expl) == explain ]] || fail "rackchaos expl -> $(complete_words rackchaos expl)"
[[ $(complete_words rackchaos run --se) == --seed ]] || fail "run --se -> $(complete_words rackchaos run --se)"
[[ $(complete_words rackchaos explain gpu_t) == gpu_throttle ]] || fail "explain gpu_t"
[[ $(complete_words rackchaos init --model gb3) == gb300-nvl72 ]] || fail "init --model gb3"
[[ $(complete_words rackchaos report merge -) == *--output* ]] || fail "report merge -"
[[ $(complete_words rackchaos list det) == detectors ]] || fail "list det"
for sub in $(rackchaos --help | awk '/^Subcommands:$/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'); do
  [[ $(complete_words rackchaos "$sub") == *"$sub"* ]] || fail "subcommand $sub not completed"
  grep -q "'$sub:" "$docs/_rackchaos" || fail "zsh completion lacks $sub"
  grep -q "^\.SS rackchaos $sub\$" "$docs/rackchaos.1" || fail "man page lacks $sub"
done
warnings=$(groff -man -Tutf8 -ww -z "$docs/rackchaos.1" 2>&1)
[[ -z $warnings ]] || fail "man page warnings: $warnings"
echo "completion check passed"
