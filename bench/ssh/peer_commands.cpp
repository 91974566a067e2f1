#include "bench/ssh/peer_commands.h"

#include <cstdio>
#include <fstream>

#include "runner/ssh/command_template.h"

namespace rackchaos::bench {
namespace {

using ssh::testing::SshdFixture;

// The part every config shares: one alias per endpoint, the fixture's user, key and known_hosts, and
// no prompts. Nothing here slows a client down or speeds it up beyond what the fixture requires.
std::string Common(const SshdFixture& sshd, PeerConfigs* peers) {
  std::string text;
  for (size_t i = 0; i < sshd.endpoints().size(); ++i) {
    char alias[16];
    std::snprintf(alias, sizeof alias, "e%03zu", i % 1000);
    text += std::string("Host ") + alias + "\n  HostName " + sshd.endpoints()[i].address + "\n  Port " +
            std::to_string(sshd.endpoints()[i].port) + "\n";
    if (!peers->hosts.empty()) peers->hosts += ',';
    peers->hosts += alias;
  }
  peers->count = sshd.endpoints().size();
  return text + "Host *\n  User " + SshdFixture::kUser + "\n  IdentityFile " + sshd.user_key() +
         "\n  IdentitiesOnly yes\n  UserKnownHostsFile " + sshd.known_hosts() +
         "\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n";
}

std::string Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

}  // namespace

PeerConfigs WritePeerConfigs(const SshdFixture& sshd) {
  PeerConfigs peers;
  const std::string common = Common(sshd, &peers);
  const std::string dir = sshd.dir();
  peers.pinned = Write(dir + "/ssh_config_pinned", common + "  KexAlgorithms curve25519-sha256\n");
  peers.defaults = Write(dir + "/ssh_config_defaults", common);
  // %C is a hash of the local host, remote host, port and user: short enough for a socket path.
  peers.multiplexed = Write(dir + "/ssh_config_mux",
                            common + "  ControlMaster auto\n  ControlPath " + dir + "/cm-%C\n  ControlPersist yes\n");
  return peers;
}

std::string PdshCommand(const PeerConfigs& peers, const std::string& config, const std::string& command) {
  // pdsh's ssh module runs `ssh $PDSH_SSH_ARGS`; %u and %h are its user and host. -a -x as pdsh's default.
  return "PDSH_SSH_ARGS='-F " + config + " -a -x -l%u %h' pdsh -R ssh -l " + SshdFixture::kUser + " -f " +
         std::to_string(peers.count) + " -w " + peers.hosts + " " + ssh::ShellQuote(command);
}

std::string ClushCommand(const PeerConfigs& peers, const std::string& config, const std::string& command) {
  // -o passes options to each ssh; clush adds its own -oForwardAgent=no -oForwardX11=no -oBatchMode=yes.
  return "clush --nostdin -f " + std::to_string(peers.count) + " -l " + SshdFixture::kUser + " -o '-F " + config +
         "' -w " + peers.hosts + " " + ssh::ShellQuote(command);
}

bool Installed(const std::string& program) {
  return ssh::testing::RunShell("command -v " + program + " >/dev/null") == 0;
}

}  // namespace rackchaos::bench
