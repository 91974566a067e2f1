# Helpers the CLI test scripts source (bash): one copy of what several of them need.
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"   (from tests/cli/hostile/: .../../lib.sh)

# under_asan RACKCHAOS: true when the binary is built with AddressSanitizer (the asan stage runs these
# scripts too). ASan reserves terabytes of shadow memory, so `ulimit -v` cannot bound such a binary and its
# quarantine holds freed memory: memory bounds are the plain build's to check.
# ldd's output is read whole first: with `set -o pipefail`, `ldd | grep -q` fails at random when grep has
# exited on the match and ldd is still writing (SIGPIPE), and the asan stage then ran with `ulimit -v`.
under_asan() {
  local libs
  libs=$(ldd "$1" 2>/dev/null) || true
  [[ $libs == *libasan* ]]
}

# inventory_base: a valid one-host site inventory (YAML on stdout) that the hostile cases change one
# thing of; tests name its lines (4: ssh, 5: defaults, 7: the host, 9: the tray, 14 lines in all).
inventory_base() {
  cat <<'YAML'
site: hostile
model: gb200-nvl72
racks: 1
ssh: {connect_timeout: 5s, command_timeout: 20s, max_concurrent: 16}
defaults: {user: rackchaos, identity_file: key}
hosts:
  - {name: host00, address: 127.0.0.1, port: 2222}
trays:
  r01.tray01: {host: host00, nics: [eth0, eth1]}
injectors:
  link_down:
    apply: 'ip link set dev {iface} down'
    verify: 'exit 1'
    revert: 'ip link set dev {iface} up'
YAML
}

# inventory_plan NAME: a plan (YAML on stdout) whose cluster is the site inventory inv.yaml, with one fault.
inventory_plan() {
  cat <<YAML
name: $1
cluster: {model: gb200-nvl72, racks: 1, inventory: inv.yaml}
faults:
  - {at: 0s, kind: link_down, target: r01.tray01.nic0, for: 10s}
YAML
}
