#!/bin/bash
# Generates the bash and zsh completions and the man page from the built binary's own --help, so they
# cannot drift from the CLI11 app: cli_docs.sh RACKCHAOS OUTDIR VERSION
#   OUTDIR/rackchaos.bash   bash completion (source it, or install to share/bash-completion/completions)
#   OUTDIR/_rackchaos       zsh completion (install to share/zsh/vendor-completions)
#   OUTDIR/rackchaos.1      man page
# Values that come from rackchaos's tables (models, injectors, policies, metrics) are asked of the
# installed binary when completing (`rackchaos list ...`), so they stay current too.
set -euo pipefail
rc=$1 out=$2 version=$3
mkdir -p "$out"

# Prints "KIND<TAB>NAME<TAB>TAKES_VALUE<TAB>DESCRIPTION" for the entries of one --help text:
# KIND is sub, opt or pos; options with several spellings (-v,--verbose) give one line each.
entries() {
  awk '
    /^Subcommands:$/ { sec = "sub"; next }
    /^Options:$/ { sec = "opt"; next }
    /^Positionals:$/ { sec = "pos"; next }
    /^$/ { sec = ""; next }
    sec != "" && /^  [^ ]/ {
      line = substr($0, 3)
      gap = match(line, /  +/)
      head = gap ? substr(line, 1, gap - 1) : line
      desc = gap ? substr(line, gap + RLENGTH) : ""
      n = split(head, w, " ")
      value = (n > 1 && w[2] != "REQUIRED") ? 1 : 0
      if (sec == "opt") {
        m = split(w[1], names, ",")
        for (i = 1; i <= m; i++) printf "opt\t%s\t%d\t%s\n", names[i], value, desc
      } else printf "%s\t%s\t0\t%s\n", sec, w[1], desc
    }'
}

top=$("$rc" --help)
subs=$(entries <<<"$top" | awk -F'\t' '$1 == "sub" { print $2 }')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in $subs; do
  "$rc" "$s" --help >"$tmp/$s.help"
  entries <"$tmp/$s.help" >"$tmp/$s.tsv"
  for n in $(awk -F'\t' '$1 == "sub" { print $2 }' "$tmp/$s.tsv"); do
    "$rc" "$s" "$n" --help >"$tmp/$s.$n.help"
    entries <"$tmp/$s.$n.help" >"$tmp/$s.$n.tsv"
  done
done

# ---- bash -------------------------------------------------------------------------------------------
{
  echo "# bash completion for rackchaos $version; generated from \`rackchaos --help\` by cmake/cli_docs.sh."
  echo '_rackchaos_names() { rackchaos list "$1" 2>/dev/null | cut -d" " -f1; }'
  echo '_rackchaos() {'
  echo '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path="" i w'
  echo '  for ((i = 1; i < COMP_CWORD; i++)); do'
  echo '    w=${COMP_WORDS[i]}'
  echo '    case "$path:$w" in'
  for s in $subs; do
    echo "      :$s) path=$s ;;"
    for n in $(awk -F'\t' '$1 == "sub" { print $2 }' "$tmp/$s.tsv"); do echo "      $s:$n) path=$s.$n ;;"; done
  done
  echo '    esac'
  echo '  done'
  echo '  case "$prev" in'
  echo '    --model) COMPREPLY=($(compgen -W "$(_rackchaos_names models)" -- "$cur")); return ;;'
  echo '    --healer) COMPREPLY=($(compgen -W "$(_rackchaos_names policies)" -- "$cur") $(compgen -f -- "$cur")); return ;;'
  echo '    -f|--format) COMPREPLY=($(compgen -W "text json markdown junit prometheus html" -- "$cur")); return ;;'
  echo '    --db|--db-b|-o|--output|--ledger|--dir) COMPREPLY=($(compgen -f -- "$cur")); return ;;'
  echo '  esac'
  echo '  local words=""'
  echo '  case "$path" in'
  echo "    \"\") words=\"--help $(echo $subs)\" ;;"
  for f in "$tmp"/*.tsv; do
    p=$(basename "$f" .tsv)
    echo "    $p) words=\"$(awk -F'\t' '$1 != "pos" { printf "%s ", $2 }' "$f" | sed 's/ $//')\" ;;"
  done
  echo '  esac'
  echo '  case "$path" in'
  echo '    list) words="$words models injectors detectors policies metrics" ;;'
  echo '    explain) words="$words $(for k in injectors detectors models policies metrics; do _rackchaos_names $k; done)" ;;'
  echo '  esac'
  echo '  COMPREPLY=($(compgen -W "$words" -- "$cur"))'
  echo '  case "$path" in run|validate|sweep|report.merge) [[ $cur == -* ]] || COMPREPLY+=($(compgen -f -- "$cur")) ;; esac'
  echo '}'
  echo 'complete -F _rackchaos rackchaos'
} >"$out/rackchaos.bash"

# ---- zsh --------------------------------------------------------------------------------------------
zdesc() { sed -e 's/[]:'"'"'[]/ /g' -e 's/\\/ /g'; }
{
  echo '#compdef rackchaos'
  echo "# zsh completion for rackchaos $version; generated from \`rackchaos --help\` by cmake/cli_docs.sh."
  echo '_rackchaos() {'
  echo '  local -a subs'
  echo '  subs=('
  entries <<<"$top" | awk -F'\t' '$1 == "sub" { print $2 "\t" $4 }' | while IFS=$'\t' read -r n d; do
    echo "    '$n:$(zdesc <<<"$d")'"
  done
  echo '  )'
  echo '  if (( CURRENT == 2 )); then _describe command subs; return; fi'
  echo '  case $words[2] in'
  for s in $subs; do
    printf '    %s) _arguments' "$s"
    while IFS=$'\t' read -r kind name value desc; do
      [[ $kind == opt ]] || continue
      d=$(zdesc <<<"$desc")
      if [[ $value == 1 ]]; then
        case $name in
          --db|--db-b|-o|--output|--ledger|--dir) printf " '%s[%s]:file:_files'" "$name" "$d" ;;
          --model) printf " '%s[%s]:model:(\$(rackchaos list models | cut -d\" \" -f1))'" "$name" "$d" ;;
          *) printf " '%s[%s]:value:'" "$name" "$d" ;;
        esac
      else printf " '%s[%s]'" "$name" "$d"; fi
    done <"$tmp/$s.tsv"
    case $s in
      run|validate|sweep) printf " '*:plan:_files -g \"*.y(a|)ml\"'" ;;
      list) printf " ':what:(models injectors detectors policies metrics)'" ;;
      explain) printf " ':name:(\$(for k in injectors detectors models policies metrics; do rackchaos list \$k | cut -d\" \" -f1; done))'" ;;
    esac
    echo ' ;;'
  done
  echo '  esac'
  echo '}'
  echo '_rackchaos "$@"'
} >"$out/_rackchaos"

# ---- man page ---------------------------------------------------------------------------------------
roff() { sed 's/\\/\\e/g; s/^\([.'"'"']\)/\\\&\1/; s/-/\\-/g'; }
{
  echo ".TH RACKCHAOS 1 \"\" \"rackchaos $version\" \"User Commands\""
  echo '.SH NAME'
  echo 'rackchaos \- fault injection and self-healing tests for rack-scale GPU clusters'
  echo '.SH SYNOPSIS'
  echo '.B rackchaos'
  echo '.I SUBCOMMAND'
  echo '[\fIOPTIONS\fR]'
  echo '.SH DESCRIPTION'
  sed -n '1,/^Usage:/p' <<<"$top" | grep -v '^Usage:' | roff
  echo '.PP'
  echo 'A first plan: \fBrackchaos init\fR writes plan.yaml and site.yaml; \fBrackchaos run plan.yaml\fR runs it on'
  echo 'the simulated cluster. \fBrackchaos explain NAME\fR describes any injector, detector, model, policy or metric.'
  echo '.SH COMMANDS'
  for s in $subs; do
    echo ".SS rackchaos $s"
    echo '.nf'
    grep -v '^Usage:' "$tmp/$s.help" | sed '/^Exit codes:$/,$d' | roff
    echo '.fi'
    for n in $(awk -F'\t' '$1 == "sub" { print $2 }' "$tmp/$s.tsv"); do
      echo ".SS rackchaos $s $n"
      echo '.nf'
      grep -v '^Usage:' "$tmp/$s.$n.help" | sed '/^Exit codes:$/,$d' | roff
      echo '.fi'
    done
  done
  echo '.SH EXIT STATUS'
  echo '.nf'
  sed -n '/^Exit codes:$/,/^$/p' <<<"$top" | sed 1d | roff
  echo '.fi'
  echo '.SH EXAMPLES'
  echo '.nf'
  sed -n '/^Examples:$/,$p' <<<"$top" | sed 1d | roff
  echo '.fi'
  echo '.SH FILES'
  echo 'Rack models and healer policies are embedded in the binary (\fBrackchaos explain\fR prints them).'
  echo 'Reports go to \fIrackchaos.db\fR (SQLite) unless \fB\-\-db\fR says otherwise.'
  echo 'The documentation is installed under \fI/usr/share/doc/rackchaos\fR (getting\-started.md first).'
  echo '.SH SEE ALSO'
  echo '.BR sqlite3 (1)'
} >"$out/rackchaos.1"
