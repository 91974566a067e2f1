// RAII owners for libssh objects, and the one place that turns a libssh error into text.
//
// Internal to runner/ssh. Ownership rules libssh imposes and these types follow:
//   - every ssh_channel belongs to its ssh_session: free channels (ChannelHandle) before the
//   session;
//   - an ssh_event that holds a session must let go of it (EventHandle::Remove) before the session
//     is freed.
#pragma once

#include <libssh/libssh.h>

#include <memory>
#include <string>

namespace rackchaos::ssh {

struct SessionDeleter {
  void operator()(ssh_session s) const {
    if (ssh_is_connected(s)) ssh_disconnect(s);
    ssh_free(s);
  }
};
struct ChannelDeleter {
  void operator()(ssh_channel c) const { ssh_channel_free(c); }
};
struct KeyDeleter {
  void operator()(ssh_key k) const { ssh_key_free(k); }
};
struct EventDeleter {
  void operator()(ssh_event e) const { ssh_event_free(e); }
};

using SessionHandle = std::unique_ptr<ssh_session_struct, SessionDeleter>;
using ChannelHandle = std::unique_ptr<ssh_channel_struct, ChannelDeleter>;
using KeyHandle = std::unique_ptr<ssh_key_struct, KeyDeleter>;
using EventHandle = std::unique_ptr<ssh_event_struct, EventDeleter>;

// libssh's last error for the session, or "unknown libssh error" when it left none.
inline std::string LibsshError(ssh_session s) {
  const char* e = s ? ssh_get_error(s) : nullptr;
  return (e && *e) ? std::string(e) : std::string("unknown libssh error");
}

}  // namespace rackchaos::ssh
