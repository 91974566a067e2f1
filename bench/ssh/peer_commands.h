// The peers the fan-out bench compares rackchaos with, as shell command lines: `pdsh -R ssh` and
// ClusterShell's `clush`, both starting one OpenSSH client per host, driven by an ssh_config the bench
// writes into the sshd fixture's directory (so the fixture's cleanup removes it, and kills every ssh
// process whose command line names it, ControlPersist masters included).
//
// Three configs, alike but for one setting:
//   pinned      - KexAlgorithms curve25519-sha256, the key exchange libssh 0.10 (rackchaos) negotiates;
//   defaults    - OpenSSH's own default (9.2: sntrup761x25519-sha512@openssh.com first);
//   multiplexed - defaults plus ControlMaster auto / ControlPersist yes / ControlPath in the directory:
//                 the first run opens one master per host, later runs (pdsh's or clush's) reuse them.
#pragma once

#include <string>

#include "tests/ssh/sshd_fixture.h"

namespace rackchaos::bench {

struct PeerConfigs {
  std::string pinned, defaults, multiplexed;  // paths of the three ssh_config files
  std::string hosts;                          // the host aliases, comma-separated ("e000,e001,...")
  size_t count = 0;
};

// Writes the three configs for every endpoint of `sshd`.
PeerConfigs WritePeerConfigs(const ssh::testing::SshdFixture& sshd);

// `pdsh -R ssh -f <count>` (one ssh per host, all at once) running `command` with `config`.
std::string PdshCommand(const PeerConfigs& peers, const std::string& config, const std::string& command);

// `clush -f <count>` (one ssh per host, all at once) running `command` with `config`.
std::string ClushCommand(const PeerConfigs& peers, const std::string& config, const std::string& command);

// True when `program` is on the PATH.
bool Installed(const std::string& program);

}  // namespace rackchaos::bench
