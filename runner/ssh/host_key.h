// Strict host key checking against known_hosts files, with libssh's known_hosts functions.
//
// Internal to runner/ssh; called on the io_context's thread right after the key exchange, before
// any authentication data is sent. Reads (and with accept_new, appends to) the known_hosts file
// synchronously: the file is small and local.
#pragma once

#include <libssh/libssh.h>

#include <string>

#include "core/status.h"
#include "runner/ssh/host_spec.h"

namespace rackchaos::ssh {

// "SHA256:<base64>" for a public key, or "SHA256:?" when libssh cannot hash it.
std::string KeyFingerprint(ssh_key key);

// The string known_hosts uses for the host: "address", or "[address]:port" when port is not 22.
std::string KnownHostsName(const HostSpec& host);

// Checks the server key that `session` (key exchange done) presents.
//  - known and matching: OK.
//  - unknown (or no known_hosts file yet): with accept_new, appends it to the known_hosts file and
//    returns OK; otherwise InvalidArgument naming the host, the key type and SHA256 fingerprint,
//    and
//    --accept-new-host-keys.
//  - changed (a different key, or only keys of another type, are recorded): always InvalidArgument,
//    naming the recorded and the offered fingerprints, even with accept_new.
//  - anything libssh cannot check: IoError with libssh's message.
Status VerifyHostKey(ssh_session session, const HostSpec& host, bool accept_new);

}  // namespace rackchaos::ssh
