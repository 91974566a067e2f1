// One SSH endpoint as the site inventory describes it.
#pragma once

#include <string>

namespace rackchaos::ssh {

// Where and how to log in. Passwords are deliberately not representable: authentication is by a
// private key file (unencrypted, or loaded into an agent) or by the ssh-agent.
struct HostSpec {
  std::string name;     // unique key in the pool and in every result, e.g. "r03-tray07"
  std::string address;  // IP address or DNS name (names resolve blocking: prefer addresses)
  int port = 22;
  std::string user;
  std::string identity_file;     // private key path; used when use_agent is false
  bool use_agent = false;        // authenticate through $SSH_AUTH_SOCK instead of identity_file
  std::string known_hosts_file;  // empty: libssh's default (~/.ssh/known_hosts)

  // "name (address:port)", the way every message names the host.
  std::string Describe() const { return name + " (" + address + ":" + std::to_string(port) + ")"; }
};

}  // namespace rackchaos::ssh
