#!/usr/bin/env bash
# Hostile site inventories through `rackchaos validate` (issue 10): each class gets exit 2 and one line
# naming the inventory (or the plan line that names it) and what is wrong, quickly, never a crash.
#   hostile_inventory.sh RACKCHAOS WORKDIR
# Each case writes a plan and an inventory made from a valid base with one hostile change.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rc=$1 work=$2/hostile-inventory
rm -rf "$work" && mkdir -p "$work" && cd "$work"

inventory_base >base.yaml
inventory_plan hostile-inventory >plan.yaml

failed=0
# check NAME REGEX: validate must exit 2 with one stderr line matching REGEX, within 20 s.
check() {
  local name=$1 regex=$2 got=0
  timeout 20 "$rc" validate plan.yaml >out.txt 2>err.txt || got=$?
  if [ "$got" != 2 ] || [ "$(wc -l <err.txt)" != 1 ] || ! grep -Eq "$regex" err.txt; then
    echo "FAIL $name: exit $got (expected 2), stderr: $(cat err.txt)"
    failed=1
  else
    echo "ok   $name: $(cat err.txt)"
  fi
}
# edit SED: the base with one sed expression applied becomes the inventory.
edit() { sed "$1" base.yaml >inv.yaml; }

cp base.yaml inv.yaml
timeout 20 "$rc" validate plan.yaml >/dev/null || { echo "FAIL: the base inventory does not validate"; exit 1; }

edit 's/port: 2222/port: 70000/';                 check port-range "inv.yaml:7:.*port: '70000' is out of range; expected an integer from 1 to 65535"
edit 's/port: 2222/port: -1/';                    check port-negative "inv.yaml:7:.*port: '-1' is out of range"
edit 's/connect_timeout: 5s/connect_timeout: -5s/'; check negative-duration "inv.yaml:4:.*connect_timeout: '-5s' is negative"
edit 's/command_timeout: 20s/command_timeout: .nan/'; check nan-duration "inv.yaml:4:.*command_timeout: '.nan' is not a duration"
edit 's/max_concurrent: 16/max_concurrent: 1e30/'; check huge-number "inv.yaml:4:.*max_concurrent: '1e30' is out of range"
edit 's/nics: \[eth0, eth1\]/nics: ["eth0; reboot", eth1]/'; check shell-interface "inv.yaml:9:.*'eth0; reboot' is not a Linux interface name"
edit 's/address: 127.0.0.1/address: "$(reboot)"/'; check shell-address "inv.yaml:7:.*address '\\$\\(reboot\\)' is not a host name or IP address"
edit 's/address: 127.0.0.1/address: "127.0.0.1\\nrm -rf \/"/'; check newline-address "inv.yaml:7:.*address spans lines"
edit 's/user: rackchaos/user: "root`id`"/';       check shell-user "inv.yaml:5:.*user 'root\`id\`' is not a user name"
{ cat base.yaml; echo "site: again"; } >inv.yaml; check duplicate-key "inv.yaml:15:1: duplicate key 'site'"
edit 's/  - {name: host00, address: 127.0.0.1, port: 2222}/  - {name: host00, address: 127.0.0.1}\n  - {name: host00, address: 127.0.0.2}/'
check duplicate-host "inv.yaml:8:.*two hosts are named 'host00'"
edit 's/host: host00, nics/host: nosuch, nics/';  check unknown-host "inv.yaml:9:.*maps to host 'nosuch', which hosts does not list"
edit 's/r01.tray01:/r01.tray99:/';                check unknown-tray "inv.yaml:9:.*'r01.tray99' is not a compute tray"
{ cat base.yaml; printf 'x: '; head -c 100000 /dev/zero | tr '\0' '['; echo; } >inv.yaml
check deep-nesting "inv.yaml:15:[0-9]+: nesting is deeper than 64 levels"
{ echo "x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"
  for i in $(seq 1 9); do p="*a$((i - 1))"; echo "x$i: &a$i [$p, $p, $p, $p, $p, $p, $p, $p, $p]"; done
  cat base.yaml; } >inv.yaml
check alias-bomb "inv.yaml:1:1: unknown key 'x0'; expected one of: site, model"
edit 's/identity_file: key/identity_file: \/dev\/zero/'; check identity-device "inv.yaml:5:.*identity_file: /dev/zero: is a character device, not a regular file; a private key file"
mkfifo fifo; edit 's/identity_file: key}/identity_file: key, known_hosts: fifo}/'
check known-hosts-fifo "inv.yaml:5:.*known_hosts: .*fifo: is a FIFO \\(named pipe\\), not a regular file; a known_hosts file"
printf '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR' >inv.yaml; check binary-junk "inv.yaml:1:1: byte 0x89 is not text"
printf 'site: hostile\n\x00\n' >inv.yaml;         check nul-byte "inv.yaml:2:1: byte 0x00 is not text"
{ cat base.yaml; echo "---"; cat base.yaml; } >inv.yaml; check second-document "inv.yaml:15:1: a second YAML document"
rm inv.yaml && truncate -s 100M inv.yaml;         check 100mb "plan.yaml:2:.*cluster.inventory: .*inv.yaml: is 104857600 bytes; a site inventory is at most 4 MiB"
rm inv.yaml;                                      check missing "plan.yaml:2:.*inv.yaml: no such site inventory file"
mkdir inv.yaml;                                   check directory "plan.yaml:2:.*inv.yaml: is a directory, not a regular file"
exit $failed
