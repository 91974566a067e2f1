// Options shared by the pool and its sessions.
#pragma once

#include <cstddef>

#include "core/units.h"

namespace rackchaos::ssh {

struct PoolOptions {
  // Operations in flight at once (a connect, or a command with its reconnect); the rest wait.
  int max_concurrent = 256;
  // TCP connect + key exchange + host key check + authentication, per host.
  Duration connect_timeout = Duration::Seconds(10);
  // From opening the channel to the exit status, per command.
  Duration command_timeout = Duration::Seconds(60);
  // Add unknown host keys to known_hosts instead of refusing them. Changed keys are always refused.
  bool accept_new_host_keys = false;
  // Captured per stream per command; the rest is counted and dropped.
  size_t max_output_bytes = 1 << 20;
};

}  // namespace rackchaos::ssh
